"""Labelled texts: MLDoc (`label<TAB>text`) and language ID (a label column or a parallel label file)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Iterator

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, guarded, nfc, numbered_lines
from mbertlab.formats.records import TextExample

MLDOC_LABELS = ("CCAT", "ECAT", "GCAT", "MCAT")
LABEL = re.compile(r"\S+")


def read_labelled(path: str | Path, *, labels: Iterable[str] | None = None, skip_invalid: bool = False,
                  stats: ReadStats | None = None) -> Iterator[TextExample]:
    allowed = set(labels) if labels is not None else None

    def parse(item) -> TextExample:
        number, line = item
        label, sep, text = line.partition("\t")
        if not sep or not text.strip() or not LABEL.fullmatch(label):
            raise DataError(path, number, f"found {line[:40]!r}; expected label<TAB>text with a label "
                                          "without spaces")
        if allowed is not None and label not in allowed:
            raise DataError(path, number, f"found label {label!r}; expected one of {', '.join(sorted(allowed))}")
        return TextExample(nfc(text.strip()), label, line=number)

    return guarded((i for i in numbered_lines(path) if i[1].strip()), stats, skip_invalid, parse)


def read_mldoc(path: str | Path, **kwargs) -> Iterator[TextExample]:
    return read_labelled(path, labels=MLDOC_LABELS, **kwargs)


def read_langid(path: str | Path, labels_path: str | Path | None = None, **kwargs) -> Iterator[TextExample]:
    """One sentence per line with `label<TAB>text`, or plain sentences plus a parallel label file."""
    if labels_path is None:
        yield from read_labelled(path, **kwargs)
        return
    labels = numbered_lines(labels_path)
    for number, text in numbered_lines(path):
        label = next(labels, None)
        if label is None:
            raise DataError(labels_path, None, f"found fewer labels than sentences in {path}; expected as many labels "
                                               "as sentences")
        if not text.strip() or not LABEL.fullmatch(label[1].strip()):
            raise DataError(path, number, f"found an empty sentence or label ({label[1]!r} in {labels_path}); "
                                          "expected a sentence and a label without spaces")
        yield TextExample(nfc(text.strip()), label[1].strip(), line=number)
    if next(labels, None) is not None:
        raise DataError(labels_path, None, f"found more labels than sentences in {path}; expected as many labels "
                                           "as sentences")
