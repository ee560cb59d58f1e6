"""Each task's records from each file format it reads, one function per (task, format): the task table
(transfer/task_table.py) names them. Every reader takes the path and the same keywords, so the transfer
adapters and the taskdata stage read any task's file through its row, never through a format if-chain.
`limit` reads only a file's first records (a run that trains on 2,000 of a treebank's sentences parses 2,000)."""
from __future__ import annotations

import re
from itertools import islice
from pathlib import Path
from typing import Iterable, TypeVar

from mbertlab.formats.records import DepSentence, PairExample, TaggedSentence, TextExample

SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
R = TypeVar("R")


def first(records: Iterable[R], limit: int | None) -> list[R]:
    """The first `limit` records (all with None), reading no further."""
    return list(islice(records, limit))


def upos_from_conllu(path: str | Path, *, v1_to_v2: bool = False, as_written: bool = False,
                     limit: int | None = None, **_) -> list[TaggedSentence]:
    """A treebank's words and UPOS tags; `as_written` (a prediction file) accepts any tag."""
    from mbertlab.formats.conllu import read_conllu

    return [TaggedSentence(s.forms, s.upos, line=s.line)
            for s in first(read_conllu(path, v1_to_v2=v1_to_v2, any_labels=as_written), limit)]


def upos_from_tsv(path: str | Path, *, limit: int | None = None, **_) -> list[TaggedSentence]:
    from mbertlab.formats.udpos import read_udpos_tsv

    return first(read_udpos_tsv(path), limit)


def ner_from_columns(path: str | Path, *, as_written: bool = False, limit: int | None = None, **_
                     ) -> list[TaggedSentence]:
    """Gold files may be IOB1 (CoNLL-2003); a prediction file is read as written (BIO), so conlleval's
    reading of its tags, not an IOB1 conversion, decides its entities."""
    from mbertlab.formats.ner_columns import read_ner

    return first(read_ner(path, scheme="bio" if as_written else "auto"), limit)


def trees_from_conllu(path: str | Path, *, v1_to_v2: bool = False, as_written: bool = False,
                      limit: int | None = None, **_) -> list[DepSentence]:
    """Dependency trees; a system output (`as_written`) may carry any relation label (scored wrong if it
    is not gold's)."""
    from mbertlab.formats.conllu import read_conllu

    return first(read_conllu(path, v1_to_v2=v1_to_v2, any_labels=as_written), limit)


def nli_pairs(path: str | Path, *, lang: str = "", limit: int | None = None, **_) -> list[PairExample]:
    from mbertlab.formats.xnli import read_xnli

    return first(read_xnli(path, lang=lang), limit)


def mldoc_pairs(path: str | Path, *, lang: str = "", limit: int | None = None, **_) -> list[PairExample]:
    """An MLDoc document as a pair: its first two sentences (the second empty when it has one)."""
    from mbertlab.formats.classification import read_mldoc

    return [first_two_sentences(doc, lang) for doc in first(read_mldoc(path), limit)]


def first_two_sentences(doc: TextExample, lang: str = "") -> PairExample:
    parts = SENTENCE_END.split(doc.text.strip(), maxsplit=2)
    return PairExample(parts[0], parts[1] if len(parts) > 1 else "", doc.label, lang=lang, line=doc.line)
