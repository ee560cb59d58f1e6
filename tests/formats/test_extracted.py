"""Pre-extracted Wikipedia text (JSON lines, Parquet in the wikimedia/wikipedia layout) on files written here:
sentences as the dump reader cuts them, strict one-line errors, and streaming (nothing read ahead)."""
from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mbertlab.errors import DataError
from mbertlab.formats.extracted import read_jsonl, read_parquet

ARTICLES = [
    {"id": "12", "url": "https://en.wikipedia.org/wiki?curid=12", "title": "Anarchism",
     "text": "Anarchism is a political philosophy. It is sceptical of authority!\n\nHistory\n\nSee  also  below?"},
    {"id": "25", "url": "https://en.wikipedia.org/wiki?curid=25", "title": "Autism", "text": ""},
    {"id": "39", "url": "https://en.wikipedia.org/wiki?curid=39", "title": "Albedo", "text": "Albedo is a ratio."},
]
# Cut by hand: paragraphs on newlines, sentences after . ! ?, whitespace collapsed.
EXPECTED = ["Anarchism is a political philosophy.", "It is sceptical of authority!", "History", "See also below?",
            "Albedo is a ratio."]


def write_jsonl(path, records) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def write_parquet(path, table: pa.Table, rows_per_group: int = 2) -> None:
    pq.write_table(table, path, row_group_size=rows_per_group)


def test_jsonl_and_parquet_give_the_same_sentences(tmp_path):
    write_jsonl(tmp_path / "wiki.jsonl", ARTICLES)
    write_parquet(tmp_path / "wiki.parquet", pa.Table.from_pylist(ARTICLES))
    assert list(read_jsonl(tmp_path / "wiki.jsonl")) == EXPECTED
    assert list(read_parquet(tmp_path / "wiki.parquet")) == EXPECTED
    assert pq.ParquetFile(tmp_path / "wiki.parquet").num_row_groups == 2


@pytest.mark.parametrize("line, words", [
    ('{"text": "A b c."', "found invalid JSON (Expecting ',' delimiter at column 18)"),
    ("not json", "found invalid JSON (Expecting value at column 1)"),
    ('["a list"]', 'found a JSON array; expected an object with a "text" key'),
    ('{"title": "A", "body": "B"}', "found keys 'title', 'body'; expected a \"text\" key"),
    ('{"text": null}', 'found a JSON null as "text"; expected a string'),
    ('{"text": ["A b c."]}', 'found a JSON array as "text"; expected a string'),
])
def test_a_bad_json_line_is_named(tmp_path, line, words):
    path = tmp_path / "wiki.jsonl"
    path.write_text(json.dumps(ARTICLES[0]) + "\n\n" + line + "\n", encoding="utf-8")
    read = read_jsonl(path)
    assert next(read) == EXPECTED[0]
    with pytest.raises(DataError) as err:
        list(read)
    assert str(err.value).startswith(f"{path}:3: {words}") and "\n" not in str(err.value)


@pytest.mark.parametrize("table, words", [
    (pa.table({"id": ["1"], "body": ["A b c."]}), "found columns 'id', 'body'; expected a \"text\" column"),
    (pa.table({"text": [1, 2]}), 'found column "text" of type int64; expected strings'),
    (pa.table({"text": pa.array(["A b c.", None, "D e f."])}), "found a null text in row 2 (counting from 1)"),
    (pa.table({"text": pa.array(["", "  "], pa.large_string())}), "found no sentence in 2 records"),
])
def test_a_bad_parquet_file_is_refused(tmp_path, table, words):
    path = tmp_path / "wiki.parquet"
    write_parquet(path, table)
    with pytest.raises(DataError) as err:
        list(read_parquet(path))
    assert str(err.value).startswith(f"{path}: {words}") and "\n" not in str(err.value)


@pytest.mark.parametrize("damage", ["not parquet", "cut", "empty"])
def test_a_damaged_parquet_file_is_refused(tmp_path, damage):
    path = tmp_path / "wiki.parquet"
    write_parquet(path, pa.Table.from_pylist(ARTICLES * 50))
    data = path.read_bytes()
    path.write_bytes({"not parquet": b'{"text": "A b c."}\n', "cut": data[:len(data) // 2], "empty": b""}[damage])
    with pytest.raises(DataError, match="found an unreadable Parquet file") as err:
        list(read_parquet(path))
    assert str(err.value).startswith(str(path)) and "\n" not in str(err.value)


def test_an_empty_jsonl_file_is_refused(tmp_path):
    write_jsonl(tmp_path / "wiki.jsonl", [{"text": ""}, {"text": "= Heading ="}])
    with pytest.raises(DataError, match="found no sentence in 2 records; expected article text"):
        list(read_jsonl(tmp_path / "wiki.jsonl"))


def test_parquet_streams_by_batches(tmp_path):
    """A null in the last row group is not met before the first rows' sentences come out: nothing read ahead."""
    path = tmp_path / "wiki.parquet"
    rows = [f"Sentence number {i} is here." for i in range(1000)] + [None]
    write_parquet(path, pa.table({"text": pa.array(rows)}), rows_per_group=100)
    read = read_parquet(path)
    assert [next(read) for _ in range(3)] == rows[:3]
    with pytest.raises(DataError, match="row 1001"):
        list(read)
