"""What every reader shares: line-numbered UTF-8 decoding, block splitting, skip accounting."""
from __future__ import annotations

import os
import unicodedata
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import IO, Callable, Iterator

from mbertlab.errors import DataError, missing_file

MAX_LINE_BYTES = 16 * 2**20  # longer lines are refused while reading, before they fill memory


@dataclass
class ReadStats:
    """Counts of a read; with skip_invalid, the skipped items and the first few reasons."""

    read: int = 0
    skipped: int = 0
    reasons: list[str] = field(default_factory=list)

    def skip(self, err: DataError) -> None:
        self.skipped += 1
        if len(self.reasons) < 10:
            self.reasons.append(str(err))


def existing_file(path: str | Path) -> Path:
    """The path, or a DataError saying why it cannot be read as a data file."""
    path = Path(path)
    if path.is_dir():
        raise DataError(path, None, "found a directory; expected a data file")
    if not path.is_file():
        raise DataError(path, None, missing_file(path))
    return path


def numbered_lines(path: str | Path, *, crlf: bool = True) -> Iterator[tuple[int, str]]:
    """(1-based line number, decoded line without its line end), streamed.

    Invalid UTF-8, NUL bytes (UTF-16 without a BOM) and carriage returns other than a CRLF line end
    (CR-only files would read as one line) are DataErrors; `crlf=False` rejects CRLF too (CoNLL-U). A line
    longer than MAX_LINE_BYTES is refused once that many bytes are read, so memory stays bounded."""
    path = existing_file(path)
    with path.open("rb") as f:
        for number, raw in enumerate(iter(partial(f.readline, MAX_LINE_BYTES + 1), b""), 1):
            if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):  # at most the limit + 1 byte is held
                raise DataError(path, number, f"found a line longer than {MAX_LINE_BYTES:,} bytes; expected at "
                                              "most that per line (a file without line ends?)")
            yield number, _decode(path, number, raw, crlf)


def _decode(path: Path, number: int, raw: bytes, crlf: bool) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(path, number, f"found invalid UTF-8 at byte {err.start}; expected UTF-8 text") from None
    if "\0" in text:
        raise DataError(path, number, "found a NUL byte (UTF-16 without a BOM?); expected UTF-8 text")
    if number == 1 and text.startswith("\ufeff"):
        text = text[1:]
    if text.endswith("\n"):
        text = text[:-2] if crlf and text.endswith("\r\n") else text[:-1]
    if "\r" in text:
        ends = "LF or CRLF" if crlf else "LF (Unix)"
        raise DataError(path, number, f"found a carriage return (CR) in the line; expected {ends} line ends")
    return text


def blocks(path: str | Path, *, strict: bool = False) -> Iterator[list[tuple[int, str]] | DataError]:
    """Groups of consecutive non-blank lines (sentences in CoNLL-style files).

    `strict` (CoNLL-U) also rejects CRLF, lines of only whitespace, empty lines that end no block, and a last
    block without its empty line (a file cut mid-sentence must not pass for a shorter sentence). Those come
    as DataError items in place of the block they spoil, so that `guarded` raises or skips them in order."""
    block: list[tuple[int, str]] = []
    number = 0
    for number, line in numbered_lines(path, crlf=not strict):
        if line and not line.isspace():
            block.append((number, line))
        elif strict and line:
            yield DataError(path, number, "found a line of only whitespace; expected an empty line or a data line")
            block = []
        elif block:
            yield block
            block = []
        elif strict:
            yield DataError(path, number, "found an extra empty line; expected exactly one after each sentence")
    if block:
        yield DataError(path, number, "found the end of the file inside a sentence; expected an empty line after "
                                      "the last sentence (is the file cut short?)") if strict else block


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def write_text_file(path: str | Path, write: Callable[[IO[str]], None]) -> None:
    """UTF-8 with LF line ends, written to a temporary file next to `path` and renamed at the end, so that
    a failure while writing (a bad record, a full disk) leaves no half-written file behind."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    try:
        with open(partial, "w", encoding="utf-8", newline="\n") as f:
            write(f)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def guarded(items: Iterator, stats: ReadStats | None, skip_invalid: bool, parse) -> Iterator:
    """Parse each raw item; on DataError (or a DataError item) either raise or (skip_invalid) count it and go on."""
    stats = stats if stats is not None else ReadStats()
    for item in items:
        try:
            if isinstance(item, DataError):
                raise item
            record = parse(item)
        except DataError as err:
            if not skip_invalid:
                raise
            stats.skip(err)
            continue
        stats.read += 1
        yield record
