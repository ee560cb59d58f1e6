"""XNLI-style TSVs: the multi-language file with a header (`language`, `gold_label`, `sentence1`,
`sentence2`), the MultiNLI train file, and headerless `premise<TAB>hypothesis<TAB>label` (XTREME, XGLUE)."""
from __future__ import annotations

from pathlib import Path
from typing import IO, Iterable, Iterator

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, guarded, nfc, numbered_lines, write_text_file
from mbertlab.formats.records import XNLI_LABELS, PairExample

LABEL_ALIASES = {"contradictory": "contradiction"}


def read_xnli(path: str | Path, *, languages: Iterable[str] | None = None, lang: str = "",
              skip_invalid: bool = False, stats: ReadStats | None = None) -> Iterator[PairExample]:
    """Pairs of an XNLI file; `lang` names the language of a file without a `language` column
    (a headerless single-language file, or MultiNLI's train TSV: lang="en")."""
    wanted = set(languages) if languages is not None else None
    lines = numbered_lines(path)
    first = next(lines, None)
    if first is None:
        return iter(())
    header = first[1].split("\t")
    if "gold_label" in header:
        columns, width = {name: i for i, name in enumerate(header)}, (len(header), "as in the header")
        for needed in ("gold_label", "sentence1", "sentence2"):
            if needed not in columns:
                raise DataError(path, 1, f"found a header without {needed!r}; expected gold_label, sentence1 and "
                                         "sentence2 columns")
        items = lines
    else:
        columns, width = {"sentence1": 0, "sentence2": 1, "gold_label": 2}, (3, "premise, hypothesis, label")
        items = _chain(first, lines)
    parsed = guarded(items, stats, skip_invalid, lambda item: _pair(path, item, columns, width, lang))
    return (p for p in parsed if wanted is None or p.lang in wanted)


def _chain(first, rest):
    yield first
    yield from rest


def _pair(path, item: tuple[int, str], columns: dict[str, int], width: tuple[int, str], default_lang: str
          ) -> PairExample:
    """One example; exactly as many columns as the header (or 3): extra ones are a shifted or merged line."""
    number, line = item
    cols = line.split("\t")
    if len(cols) != width[0]:
        raise DataError(path, number, f"found {len(cols)} tab-separated columns; expected {width[0]} ({width[1]})")
    label = cols[columns["gold_label"]].strip()
    label = LABEL_ALIASES.get(label, label)
    if label not in XNLI_LABELS:
        raise DataError(path, number, f"found label {label!r}; expected one of {', '.join(XNLI_LABELS)}")
    premise, hypothesis = cols[columns["sentence1"]].strip(), cols[columns["sentence2"]].strip()
    if not premise or not hypothesis:
        raise DataError(path, number, "found an empty premise or hypothesis; expected both non-empty")
    lang = cols[columns["language"]] if "language" in columns else default_lang
    return PairExample(nfc(premise), nfc(hypothesis), label, lang=lang, line=number)


def write_pairs(pairs: Iterable[PairExample], out: str | Path | IO[str]) -> None:
    """Headerless `premise<TAB>hypothesis<TAB>label`, XTREME's layout: the taskdata stage's for sentence pairs."""
    if isinstance(out, (str, Path)):
        return write_text_file(out, lambda f: write_pairs(pairs, f))
    for pair in pairs:
        out.write(f"{pair.premise}\t{pair.hypothesis}\t{pair.label}\n")


def write_classification_tsv(rows: Iterable[tuple[str, str]], out: str | Path | IO[str]) -> None:
    """`id<TAB>label` predictions, one per line."""
    if isinstance(out, (str, Path)):
        return write_text_file(out, lambda f: write_classification_tsv(rows, f))
    for key, label in rows:
        out.write(f"{key}\t{label}\n")
