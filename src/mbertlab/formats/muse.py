"""Bilingual dictionaries in MUSE format: `source target` per line; a source may have several targets."""
from __future__ import annotations

from pathlib import Path

from mbertlab.errors import DataError
from mbertlab.formats.common import nfc, numbered_lines


def read_dictionary(path: str | Path) -> dict[str, list[str]]:
    """Source word → its targets in file order (a dictionary is small: read whole)."""
    pairs: dict[str, list[str]] = {}
    for number, line in numbered_lines(path):
        if not line.strip():
            continue
        cols = line.split()
        if len(cols) != 2:
            raise DataError(path, number, f"found {len(cols)} fields; expected 'source target'")
        src, tgt = nfc(cols[0]), nfc(cols[1])
        targets = pairs.setdefault(src, [])
        if tgt not in targets:
            targets.append(tgt)
    return pairs

