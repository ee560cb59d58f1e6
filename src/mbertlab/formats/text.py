"""Plain text, one sentence per line, UTF-8; lines come out NFC-normalised and stripped."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from mbertlab.formats.common import ReadStats, nfc, numbered_lines


def read_lines(path: str | Path, stats: ReadStats | None = None) -> Iterator[str]:
    for _, line in numbered_lines(path):
        line = nfc(line.strip())
        if line:
            if stats is not None:
                stats.read += 1
            yield line


def write_lines(lines: Iterable[str], path: str | Path) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for line in lines:
            f.write(line + "\n")
