"""NER column files: CoNLL-2002/2003 (`word ... TAG`), WikiANN/PAN-X (`lang:word<TAB>TAG`),
MasakhaNER and plain `word<TAB>TAG`. Tags come out as BIO (IOB1 files are converted)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Iterable, Iterator, Literal

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, blocks, guarded, nfc
from mbertlab.formats.records import TaggedSentence

TAG = re.compile(r"^(O|[BI]-[^\s]+)$")
LANG_PREFIX = re.compile(r"^([a-z]{2,3}):(.+)$")


def read_ner(path: str | Path, *, scheme: Literal["auto", "iob1", "bio"] = "auto", labels: Iterable[str] | None = None,
             skip_invalid: bool = False, stats: ReadStats | None = None) -> Iterator[TaggedSentence]:
    """Sentences with BIO tags. `auto`/`iob1` turn an entity-initial I-X into B-X (IOB1 → BIO; a no-op
    on valid BIO); `bio` keeps tags as they are. Tags outside `labels` (when given) are errors."""
    allowed = set(labels) if labels is not None else None

    def parse(block):
        return _sentence(path, block, scheme, allowed)

    return guarded(_without_docstart(path), stats, skip_invalid, parse)


def _without_docstart(path) -> Iterator[list[tuple[int, str]]]:
    for block in blocks(path):
        block = [(n, line) for n, line in block if not line.split()[0] == "-DOCSTART-"]
        if block:
            yield block


def _sentence(path, block, scheme: str, allowed: set[str] | None) -> TaggedSentence:
    tokens, tags, lang = [], [], None
    for number, line in block:
        cols = line.split("\t") if "\t" in line else line.split()
        if len(cols) < 2:
            raise DataError(path, number, "expected a token and a tag separated by whitespace")
        token, tag = cols[0].strip(), cols[-1].strip()
        match = LANG_PREFIX.match(token)
        if match and "\t" in line:
            lang, token = match.group(1), match.group(2)
        if not token:
            raise DataError(path, number, "expected a non-empty token")
        if not TAG.match(tag):
            raise DataError(path, number, f"expected a tag O, B-X or I-X, got {tag!r}")
        if allowed is not None and tag not in allowed:
            raise DataError(path, number, f"expected a tag in the declared set, got {tag!r}")
        tokens.append(nfc(token))
        tags.append(tag)
    if scheme != "bio":
        tags = iob1_to_bio(tags)
    return TaggedSentence(tokens, tags, lang=lang, line=block[0][0])


def iob1_to_bio(tags: list[str]) -> list[str]:
    """An I-X that does not continue an X entity starts one: it becomes B-X."""
    out, previous = [], "O"
    for tag in tags:
        if tag.startswith("I-") and previous[2:] != tag[2:]:
            tag = "B-" + tag[2:]
        out.append(tag)
        previous = tag
    return out


def write_ner(sentences: Iterable[TaggedSentence], out: str | Path | IO[str]) -> None:
    if isinstance(out, (str, Path)):
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            return write_ner(sentences, f)
    for sent in sentences:
        for token, tag in zip(sent.tokens, sent.tags):
            out.write(f"{token}\t{tag}\n")
        out.write("\n")
