"""Each task's records from each file format it reads, one function per (task, format): the task table
(transfer/task_table.py) names them. Every reader takes the path and the same keywords, so the transfer
adapters and the taskdata stage read any task's file through its row, never through a format if-chain."""
from __future__ import annotations

import re
from pathlib import Path

from mbertlab.formats.records import DepSentence, PairExample, TaggedSentence, TextExample

SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")


def upos_from_conllu(path: str | Path, *, v1_to_v2: bool = False, as_written: bool = False, **_
                     ) -> list[TaggedSentence]:
    """A treebank's words and UPOS tags; `as_written` (a prediction file) accepts any tag."""
    from mbertlab.formats.conllu import read_conllu

    return [TaggedSentence(s.forms, s.upos, line=s.line)
            for s in read_conllu(path, v1_to_v2=v1_to_v2, any_labels=as_written)]


def upos_from_tsv(path: str | Path, **_) -> list[TaggedSentence]:
    from mbertlab.formats.udpos import read_udpos_tsv

    return list(read_udpos_tsv(path))


def ner_from_columns(path: str | Path, *, as_written: bool = False, **_) -> list[TaggedSentence]:
    """Gold files may be IOB1 (CoNLL-2003); a prediction file is read as written (BIO), so conlleval's
    reading of its tags, not an IOB1 conversion, decides its entities."""
    from mbertlab.formats.ner_columns import read_ner

    return list(read_ner(path, scheme="bio" if as_written else "auto"))


def trees_from_conllu(path: str | Path, *, v1_to_v2: bool = False, as_written: bool = False, **_
                      ) -> list[DepSentence]:
    """Dependency trees; a system output (`as_written`) may carry any relation label (scored wrong if it
    is not gold's)."""
    from mbertlab.formats.conllu import read_conllu

    return list(read_conllu(path, v1_to_v2=v1_to_v2, any_labels=as_written))


def nli_pairs(path: str | Path, *, lang: str = "", **_) -> list[PairExample]:
    from mbertlab.formats.xnli import read_xnli

    return list(read_xnli(path, lang=lang))


def mldoc_pairs(path: str | Path, *, lang: str = "", **_) -> list[PairExample]:
    """An MLDoc document as a pair: its first two sentences (the second empty when it has one)."""
    from mbertlab.formats.classification import read_mldoc

    return [first_two_sentences(doc, lang) for doc in read_mldoc(path)]


def first_two_sentences(doc: TextExample, lang: str = "") -> PairExample:
    parts = SENTENCE_END.split(doc.text.strip(), maxsplit=2)
    return PairExample(parts[0], parts[1] if len(parts) > 1 else "", doc.label, lang=lang, line=doc.line)
