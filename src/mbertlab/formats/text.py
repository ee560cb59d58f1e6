"""Plain text, one sentence per line, UTF-8; lines come out NFC-normalised and stripped."""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from mbertlab.formats.common import ReadStats, nfc, numbered_lines, write_text_file


def read_lines(path: str | Path, stats: ReadStats | None = None) -> Iterator[str]:
    """Non-blank lines; invalid UTF-8, NUL bytes (UTF-16 without a BOM) and CR-only line ends are DataErrors."""
    for _, line in numbered_lines(path):
        line = nfc(line.strip())
        if line:
            if stats is not None:
                stats.read += 1
            yield line


def write_lines(lines: Iterable[str], path: str | Path) -> None:
    write_text_file(path, lambda f: f.writelines(line + "\n" for line in lines))
