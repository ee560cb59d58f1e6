"""Pre-extracted Wikipedia text, as researchers download it → plain sentences.

Two layouts, one article per record with its plain text under `text` (other fields are ignored):
JSON lines (`{"id": ..., "title": ..., "text": ...}` per line) and Parquet with a `text` column (the
`wikimedia/wikipedia` layout on the Hugging Face hub: id, url, title, text). Both stream: JSON lines line by
line (each line bounded by `common.MAX_LINE_BYTES`), Parquet in batches within its row groups (pyarrow).
Sentences are cut as in Wikipedia dumps (`wikidump.split_sentences`).

Strict: a line that is not a JSON object, a record without `text` or whose text is not a string, a Parquet
file without a string column `text` or with a null text, and a file with no sentence at all are DataErrors.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

from mbertlab.errors import DataError
from mbertlab.formats import common
from mbertlab.formats.common import existing_file, numbered_lines
from mbertlab.formats.wikidump import split_sentences

JSON_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number", bool: "boolean",
              type(None): "null"}
BATCH_ROWS = 256  # Parquet rows decoded at once


def read_jsonl(path: str | Path) -> Iterator[str]:
    """Sentences of the `text` of each JSON line; blank lines are passed over."""
    path = existing_file(path)
    return _sentences(path, _jsonl_texts(path))


def read_parquet(path: str | Path) -> Iterator[str]:
    """Sentences of each row's `text`, read in batches of BATCH_ROWS."""
    path = existing_file(path)
    return _sentences(path, _parquet_texts(path))


def _sentences(path: Path, texts: Iterable[str]) -> Iterator[str]:
    records = sentences = 0
    for text in texts:
        records += 1
        for sentence in split_sentences(text):
            sentences += 1
            yield sentence
    if not sentences:
        raise DataError(path, None, f"found no sentence in {records} records; expected article text")


def _jsonl_texts(path: Path) -> Iterator[str]:
    for number, line in numbered_lines(path):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            raise DataError(path, number, f"found invalid JSON ({err.msg} at column {err.colno}); expected one "
                                          "JSON object per line") from None
        except RecursionError:  # `[[[[…` a hundred thousand deep: Python's parser recurses once per level
            raise DataError(path, number, "found JSON nested too deeply for Python's parser; expected one "
                                          "JSON object per line") from None
        if not isinstance(record, dict):
            raise DataError(path, number, f"found a JSON {JSON_TYPES[type(record)]}; expected an object with "
                                          'a "text" key')
        if "text" not in record:
            keys = ", ".join(repr(key)[:40] for key in list(record)[:8]) or "none"
            raise DataError(path, number, f'found keys {keys}; expected a "text" key')
        if not isinstance(record["text"], str):
            raise DataError(path, number, f'found a JSON {JSON_TYPES[type(record["text"])]} as "text"; expected '
                                          "a string")
        yield _plain(path, number, record["text"])


def _plain(path: Path, number: int | None, text: str, where: str = "") -> str:
    """`text` when it can go into a corpus's UTF-8 text files: JSON's escapes can make a lone surrogate
    (`\\ud800`, which no UTF-8 file can hold) or a NUL (`\\u0000`, which every text reader refuses)."""
    if "\0" in text:
        raise DataError(path, number, f'found a NUL character (U+0000) in "text"{where}; expected text without '
                                      "NUL characters")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as err:
        raise DataError(path, number, f'found a lone surrogate U+{ord(text[err.start]):04X} in "text"{where}; '
                                      "expected Unicode text (surrogates come only in pairs)") from None
    return text


def _parquet_texts(path: Path) -> Iterator[str]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        with pq.ParquetFile(path) as parquet:
            _check_text_column(path, parquet.schema_arrow)
            row = 0
            for batch in parquet.iter_batches(batch_size=BATCH_ROWS, columns=["text"]):
                for text in _batch_texts(path, batch.column(0), row):
                    row += 1
                    if text is None:
                        raise DataError(path, None, f"found a null text in row {row} (counting from 1); expected "
                                                    "a string")
                    yield _plain(path, None, text, f" of row {row} (counting from 1)")
    except (pa.ArrowException, OSError) as err:  # not Parquet, or damaged
        message = " ".join(str(err).split())
        raise DataError(path, None, f"found an unreadable Parquet file ({message}); expected Parquet with a "
                                    '"text" column') from None


def _batch_texts(path: Path, column, before: int) -> list[str | None]:
    """A batch's texts as Python strings, once each is known to be at most `common.MAX_LINE_BYTES` (as a line
    of the other readers) and valid UTF-8 (Arrow does not check what a file says is a string)."""
    import pyarrow.compute as pc

    sizes = pc.binary_length(column).to_pylist()
    for offset, size in enumerate(sizes):
        if size is not None and size > common.MAX_LINE_BYTES:
            raise DataError(path, None, f"found a text of {size:,} bytes in row {before + offset + 1} (counting "
                                        f"from 1); expected at most {common.MAX_LINE_BYTES:,} bytes per article")
    try:
        return column.to_pylist()
    except UnicodeDecodeError:
        for offset in range(len(column)):
            try:
                column[offset].as_py()
            except UnicodeDecodeError as err:
                raise DataError(path, None, f"found invalid UTF-8 at byte {err.start} of the text in row "
                                            f"{before + offset + 1} (counting from 1); expected UTF-8 "
                                            "text") from None
        raise


def _check_text_column(path: Path, schema) -> None:
    import pyarrow as pa

    if "text" not in schema.names:
        columns = ", ".join(repr(name)[:40] for name in schema.names[:8]) or "none"
        raise DataError(path, None, f'found columns {columns}; expected a "text" column (the wikimedia/wikipedia '
                                    "layout: id, url, title, text)")
    if len(schema.get_all_field_indices("text")) > 1:
        raise DataError(path, None, 'found several columns named "text"; expected one')
    kind = schema.field("text").type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind)):
        raise DataError(path, None, f'found column "text" of type {kind}; expected strings')
