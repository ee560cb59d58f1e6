"""NER column files: CoNLL-2002/2003 (`word ... TAG`), WikiANN/PAN-X (`lang:word<TAB>TAG`),
MasakhaNER and plain `word<TAB>TAG`. Tags come out as BIO (IOB1 files are converted)."""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterable, Iterator, Literal

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, blocks, guarded, nfc, write_text_file
from mbertlab.formats.records import TaggedSentence

# O, or B-/I- and an entity type of letters, digits and _ in hyphen-joined parts: not B-O, not B-PER-.
TAG = re.compile(r"O|[BI]-(?!O$)[A-Za-z0-9_]+(?:-[A-Za-z0-9_]+)*")
LANG_PREFIX = re.compile(r"^([a-z]{2,3}):(.+)$")


def read_ner(path: str | Path, *, scheme: Literal["auto", "iob1", "bio"] = "auto", labels: Iterable[str] | None = None,
             skip_invalid: bool = False, stats: ReadStats | None = None) -> Iterator[TaggedSentence]:
    """Sentences with BIO tags. `auto`/`iob1` turn an entity-initial I-X into B-X (IOB1 → BIO; a no-op
    on valid BIO); `bio` keeps tags as they are. Tags outside `labels` (when given) are errors."""
    allowed = set(labels) if labels is not None else None
    layout = _Layout()

    def parse(block):
        return _sentence(path, block, scheme, allowed, layout)

    return guarded(_without_docstart(path), stats, skip_invalid, parse)


@dataclass
class _Layout:
    """The column count of the file's first well-formed sentence: every token line must have as many, or a
    line that lost its tag column (CoNLL-2003 `word POS chunk`) would have its chunk tag read as the entity
    tag. Taken from a sentence only once it has been read, so that a skipped bad sentence does not set it."""

    columns: int = 0
    line: int = 0

    def check(self, path, number: int, columns: int, first: tuple[int, int]) -> None:
        expected, line = (self.columns, self.line) if self.columns else first
        if columns != expected:
            raise DataError(path, number, f"found {columns} columns; expected {expected}, as on line {line}")


def _without_docstart(path) -> Iterator[list[tuple[int, str]]]:
    for block in blocks(path):
        block = [(n, line) for n, line in block if not line.split()[0] == "-DOCSTART-"]
        if block:
            yield block


def _sentence(path, block, scheme: str, allowed: set[str] | None, layout: _Layout) -> TaggedSentence:
    tokens, tags, lang, first = [], [], None, (0, 0)
    for number, line in block:
        cols = [c.strip() for c in line.split("\t")] if "\t" in line else line.split()
        if len(cols) < 2 or not all(cols):
            raise DataError(path, number, "found a line without a token and a tag (or an empty column); "
                                          "expected token ... TAG separated by tabs or spaces")
        first = first if first[0] else (len(cols), number)
        layout.check(path, number, len(cols), first)
        token, tag = cols[0], cols[-1]
        match = LANG_PREFIX.match(token)
        if match and "\t" in line:
            lang, token = match.group(1), match.group(2)
        if not token:
            raise DataError(path, number, "found an empty token; expected a non-empty token")
        if not TAG.fullmatch(tag):
            raise DataError(path, number, f"found tag {tag!r}; expected O, B-TYPE or I-TYPE (TYPE not O)")
        if allowed is not None and tag not in allowed:
            raise DataError(path, number, f"found tag {tag!r}; expected a tag in the declared set")
        tokens.append(nfc(token))
        tags.append(tag)
    if not layout.columns:
        layout.columns, layout.line = first
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
        return write_text_file(out, lambda f: write_ner(sentences, f))
    for sent in sentences:
        for token, tag in zip(sent.tokens, sent.tags):
            out.write(f"{token}\t{tag}\n")
        out.write("\n")
