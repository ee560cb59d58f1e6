"""Guess a file's format from its name, and summarise any supported file."""
from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, existing_file

OTHER_FORMATS = ("langid", "muse", "text")  # formats no task of the task table reads


def known_formats() -> tuple[str, ...]:
    """The task table's formats (transfer/task_table.py, a registered task's too), then the others."""
    from mbertlab.transfer.task_table import data_formats

    return (*data_formats(), *OTHER_FORMATS)


# Whole words of a name (split at . _ - and spaces), never substrings: `partner` is no NER file.
NAME_WORDS = (
    ("xnli", {"xnli", "nli", "mnli", "multinli"}),
    ("udpos", {"udpos", "pos", "upos"}),
    ("muse", {"muse", "dict", "dictionary", "dictionaries"}),
    ("mldoc", {"mldoc"}),
    ("langid", {"langid"}),
    ("ner", {"ner", "wikiann", "panx", "masakhaner", "conll2002", "conll2003"}),
)
CONLL_NER_NAME = re.compile(r"(eng|deu|esp|ned)\.(train|testa|testb)")
PARENT_LEVELS = 3  # folders above the file consulted when its own name says nothing


def guess_format(path: str | Path) -> str:
    """The format named by the file's own name (extension, then whole words), else by the whole name of one
    of its nearest folders (`ner/masakhaner/yor/train.txt`); `text` when nothing names one."""
    path = existing_file(path)
    name = path.name.lower()
    if name.endswith(".conllu"):
        return "conllu"
    if CONLL_NER_NAME.fullmatch(name):
        return "ner"
    for part in [name, *(p.name.lower() for p in path.parents[:PARENT_LEVELS])]:
        words = set(re.split(r"[._\-\s]+", part))
        for fmt, names in NAME_WORDS:
            if words & names:
                return fmt
    return "text"


def summarize(path: str | Path, fmt: str | None = None, skip_invalid: bool = False,
              v1_to_v2: bool = False) -> dict:
    """Counts of a file: sentences/examples, tokens, label inventory (CoNLL-U: syntactic words, multiword
    tokens and empty nodes apart); a DataError if it is malformed."""
    fmt = fmt or guess_format(path)
    if fmt not in known_formats():
        raise DataError(path, None, f"found format {fmt!r}; expected one of {', '.join(known_formats())}")
    stats = ReadStats()
    info = {"path": str(path), "format": fmt, "items": 0, "tokens": 0, "labels": Counter()}
    if fmt == "conllu":
        _count_conllu(path, info, stats, skip_invalid, v1_to_v2)
    elif fmt in ("ner", "udpos"):
        _count_tagged(path, fmt, info, stats, skip_invalid)
    elif fmt in ("xnli", "mldoc", "langid"):
        _count_examples(path, fmt, info, stats, skip_invalid)
    elif fmt not in OTHER_FORMATS:
        _count_records(path, fmt, info)
    elif fmt == "muse":
        from mbertlab.formats.muse import read_dictionary

        pairs = read_dictionary(path)
        info["items"], info["tokens"] = len(pairs), sum(len(v) for v in pairs.values())
    else:
        from mbertlab.formats.text import read_lines

        for line in read_lines(path):
            info["items"] += 1
            info["tokens"] += len(line.split())
    info["labels"] = dict(info["labels"].most_common())
    info["skipped"] = stats.skipped
    return info


def _count_conllu(path, info: dict, stats: ReadStats, skip_invalid: bool, v1_to_v2: bool) -> None:
    from mbertlab.formats.conllu import read_conllu

    info.update(words=0, multiword=0, empty=0)
    for s in read_conllu(path, skip_invalid=skip_invalid, stats=stats, v1_to_v2=v1_to_v2):
        info["items"] += 1
        info["words"] += len(s)
        info["multiword"] += len(s.multiword)
        info["empty"] += len(s.empty)
        # surface tokens: a multiword token (`1-2 del`) is one token over two syntactic words
        info["tokens"] += len(s) - sum(t.last - t.first for t in s.multiword)
        info["labels"].update(s.upos)


def _count_tagged(path, fmt: str, info: dict, stats: ReadStats, skip_invalid: bool) -> None:
    from mbertlab.formats.ner_columns import read_ner
    from mbertlab.formats.udpos import read_udpos_tsv

    reader = read_ner if fmt == "ner" else read_udpos_tsv
    for s in reader(path, skip_invalid=skip_invalid, stats=stats):
        info["items"] += 1
        info["tokens"] += len(s.tokens)
        info["labels"].update(s.tags)


def _count_examples(path, fmt: str, info: dict, stats: ReadStats, skip_invalid: bool) -> None:
    from mbertlab.formats.classification import read_langid, read_mldoc
    from mbertlab.formats.xnli import read_xnli

    reader = {"xnli": read_xnli, "mldoc": read_mldoc, "langid": read_langid}[fmt]
    for ex in reader(path, skip_invalid=skip_invalid, stats=stats):
        info["items"] += 1
        info["labels"][ex.label] += 1


def _count_records(path, fmt: str, info: dict) -> None:
    """A format only a task of one's own reads: counted through that task's reader."""
    from mbertlab.transfer.task_table import TASKS

    task = next(t for t in TASKS.values() if fmt in t.formats)
    for record in task.read(path, fmt):
        info["items"] += 1
        if hasattr(record, "tags"):  # a tagged sentence
            info["tokens"] += len(record.tokens)
            info["labels"].update(record.tags)
        else:  # a labelled pair or text
            info["labels"][record.label] += 1
