"""What every reader shares: line-numbered UTF-8 decoding, block splitting, skip accounting."""
from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from mbertlab.errors import DataError


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


def numbered_lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, decoded line without its newline); invalid UTF-8 is a DataError."""
    path = Path(path)
    if not path.is_file():
        raise DataError(path, None, "no such file")
    with path.open("rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as err:
                raise DataError(path, number, f"invalid UTF-8 at byte {err.start}") from None
            if number == 1 and text.startswith("\ufeff"):
                text = text[1:]
            yield number, text.rstrip("\r\n")


def blocks(path: str | Path) -> Iterator[list[tuple[int, str]]]:
    """Groups of consecutive non-blank lines (sentences in CoNLL-style files)."""
    block: list[tuple[int, str]] = []
    for number, line in numbered_lines(path):
        if line.strip():
            block.append((number, line))
        elif block:
            yield block
            block = []
    if block:
        yield block


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def guarded(items: Iterator, stats: ReadStats | None, skip_invalid: bool, parse) -> Iterator:
    """Parse each raw item; on DataError either raise or (skip_invalid) count it and go on."""
    stats = stats if stats is not None else ReadStats()
    for item in items:
        try:
            record = parse(item)
        except DataError as err:
            if not skip_invalid:
                raise
            stats.skip(err)
            continue
        stats.read += 1
        yield record
