"""XTREME's UPOS TSV: `token<TAB>UPOS`, a blank line between sentences."""
from __future__ import annotations

from pathlib import Path
from typing import Iterator

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, blocks, guarded, nfc
from mbertlab.formats.records import UPOS_TAGS, TaggedSentence


def read_udpos_tsv(path: str | Path, *, skip_invalid: bool = False, stats: ReadStats | None = None
                   ) -> Iterator[TaggedSentence]:
    return guarded(blocks(path), stats, skip_invalid, lambda b: _sentence(path, b))


def _sentence(path, block) -> TaggedSentence:
    tokens, tags = [], []
    for number, line in block:
        cols = line.split("\t")
        if len(cols) != 2:
            raise DataError(path, number, f"found {len(cols)} tab-separated columns; expected token<TAB>UPOS")
        if not cols[0].strip():
            raise DataError(path, number, "found an empty token; expected a non-empty token")
        if cols[1] not in UPOS_TAGS:
            raise DataError(path, number, f"found UPOS {cols[1]!r}; expected one of {', '.join(UPOS_TAGS)}")
        tokens.append(nfc(cols[0]))
        tags.append(cols[1])
    return TaggedSentence(tokens, tags, line=block[0][0])
