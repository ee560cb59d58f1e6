"""Fuzzing every reader with mutations of real shared files, 1,000 cases per format.

Each case is a valid slice (it must be read; CoNLL-U must also be written back byte for byte), the slice
with one known invalid class injected (it must be rejected), or the slice randomly mutated (lines, columns,
bytes: it may be read or rejected). Only DataError may come out. Figures: docs/reliability.md.
"""
from __future__ import annotations

import io
import re
from functools import cache

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbertlab.formats.classification import MLDOC_LABELS, read_mldoc
from mbertlab.formats.conllu import read_conllu, write_conllu
from mbertlab.formats.muse import read_dictionary
from mbertlab.formats.ner_columns import read_ner
from mbertlab.formats.text import read_lines
from mbertlab.formats.udpos import read_udpos_tsv
from mbertlab.formats.xnli import read_xnli
from tests.conftest import SHARED_DATA, examples
from tests.formats.fuzzing import (Spec, blocks, common_invalid, joined, lines, pick, read, run_case, token_lines,
                                   with_column)

WORD_LINE = re.compile(r"[0-9]+\t")
ARABIC_INDIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")
FULL_WIDTH = str.maketrans("0123456789", "０１２３４５６７８９")


def _words(e: list[str]) -> list[int]:
    return [i for i, line in enumerate(e) if WORD_LINE.match(line)]


def _at_word(e: list[str], d, change) -> list[str]:
    """`change(lines, index, word id)` applied at a drawn word line."""
    i = pick(d, _words(e), "word line")
    return change(e, i, int(e[i].split("\t", 1)[0]))


def _insert(e: list[str], i: int, line: str) -> list[str]:
    return e[:i] + [line] + e[i:]


def _range_line(first: int, last: int) -> str:
    return f"{first}-{last}\tx\t_\t_\t_\t_\t_\t_\t_\t_\n"


def _cut_in_last_sentence(e: list[str], d) -> bytes:
    """The file cut anywhere after the start of its last sentence (never at a sentence boundary)."""
    start = max((i + 1 for i, line in enumerate(e[:-1]) if line == "\n"), default=0)
    raw, begin = "".join(e).encode("utf-8"), len("".join(e[:start]).encode("utf-8"))
    return raw[:d.draw(st.integers(begin + 1, len(raw) - 1), label="cut")]


def _set(col: int | None, values):
    """An injection setting column `col` (None: a drawn one) of a drawn word line to one of `values(word id)`."""
    def change(e: list[str], i: int, n: int, d) -> list[str]:
        column = col if col is not None else d.draw(st.integers(0, 9), label="column")
        return e[:i] + [with_column(e[i], column, pick(d, values(n)))] + e[i + 1:]

    return lambda e, d: _at_word(e, d, lambda e, i, n: change(e, i, n, d))


CONLLU_INVALID = {
    "word ID with a dot": _set(0, lambda n: (f"{n}.x", f"{n}.0", f"{n}.")),
    "file cut mid-sentence": _cut_in_last_sentence,
    "DEPREL": _set(7, lambda n: ("", "_", "NSUBJ", "nsubj:", "Nsubj", ":nsubj", "nsubj:pass:x", "subj", "obj ")),
    "HEAD": _set(6, lambda n: (f"+{n}", f" {n}", f"{n} ", f"0{n}", str(n).translate(ARABIC_INDIC),
                               str(n).translate(FULL_WIDTH), "-1", f"{n}.0", "", "10000")),
    "FEATS": _set(5, lambda n: ("Case", "case=Nom", "Case=nom", "Case=Nom|", "|Case=Nom", "Case=Nom,", "=Nom")),
    "DEPS head not in sentence": _set(8, lambda n: ("10000:dep", f"{n}.9:dep", f"{n}:", "x:dep")),
    "empty column": _set(None, lambda n: ("",)),
    "range reversed": lambda e, d: _at_word(e, d, lambda e, i, n: _insert(e, i, _range_line(n, n - 1))),
    "range past the sentence end": lambda e, d: _at_word(
        e, d, lambda e, i, n: _insert(e, i, _range_line(n, n + 10000))),
    "range line after its words": lambda e, d: _at_word(
        e, d, lambda e, i, n: _insert(e, i + 1, _range_line(max(n - 1, 1), max(n - 1, 1) + 1))),
    "empty node ahead of its word": lambda e, d: _at_word(
        e, d, lambda e, i, n: _insert(e, i + 1, f"{n + 1}.1\tx\t_\tX\t_\t_\t_\t_\t{n}:dep\t_\n")),
    "comment after words": lambda e, d: _at_word(e, d, lambda e, i, n: _insert(e, i + 1, "# note\n")),
    "whitespace-only line": lambda e, d: _insert(e, d.draw(st.integers(0, len(e))), " \n"),
    "extra empty line": lambda e, d: _insert(e, pick(d, [0] + [i + 1 for i, x in enumerate(e) if x == "\n"]), "\n"),
    "CRLF": lambda e, d: "".join(e).replace("\n", "\r\n").encode("utf-8"),
}


def _token_line(e: list[str], d, change) -> list[str]:
    i = pick(d, token_lines(e), "token line")
    return e[:i] + [change(e[i])] + e[i + 1:]


def _columns(line: str, sep: str | None) -> tuple[str, list[str]]:
    """The separator and the columns as the reader splits them (runs of spaces are one separator)."""
    sep = sep or ("\t" if "\t" in line else " ")
    return sep, line.rstrip("\n").split(sep) if sep == "\t" else line.split()


def _drop_last(line: str, sep: str | None = None) -> str:
    sep, cols = _columns(line, sep)
    return sep.join(cols[:-1]) + "\n"


def _add_column(line: str, sep: str | None = None) -> str:
    sep, cols = _columns(line, sep)
    return sep.join(cols + ["x"]) + "\n"


def _column_before_tag(line: str) -> str:
    """`word POS TAG` → `word POS x TAG`: the tag stays valid, only the column count is wrong."""
    sep, cols = _columns(line, None)
    return sep.join(cols[:-1] + ["x", cols[-1]]) + "\n"


BAD_TAGS = ("B-O", "I-O", "B-PER-", "B-", "I-", "b-PER", "BPER", "E-PER", "B--PER", "U-LOC", "o")
NER_INVALID = {
    "a line lost its tag column": lambda e, d: _token_line(e, d, _drop_last),
    "a line has an extra column": lambda e, d: _token_line(e, d, _column_before_tag),
    "bad tag": lambda e, d: _token_line(e, d, lambda line: with_column(line, -1, pick(d, BAD_TAGS), None)),
}
UDPOS_INVALID = {
    "UPOS": lambda e, d: _token_line(e, d, lambda line: with_column(line, 1, pick(d, ("NOUNS", "noun", "_", "CONJ",
                                                                                      "", " NOUN")))),
    "1 column": lambda e, d: _token_line(e, d, lambda line: _drop_last(line, "\t")),
    "3 columns": lambda e, d: _token_line(e, d, lambda line: _add_column(line, "\t")),
    "empty token": lambda e, d: _token_line(e, d, lambda line: with_column(line, 0, pick(d, ("", " ")))),
}
XNLI_INVALID = {
    "4 columns": lambda e, d: _token_line(e, d, lambda line: _add_column(line, "\t")),
    "5 columns": lambda e, d: _token_line(e, d, lambda line: _add_column(_add_column(line, "\t"), "\t")),
    "2 columns": lambda e, d: _token_line(e, d, lambda line: _drop_last(line, "\t")),
    "label": lambda e, d: _token_line(e, d, lambda line: with_column(line, 2, pick(d, ("Neutral", "", "0", "entails",
                                                                                      "contradictions")))),
    "empty premise": lambda e, d: _token_line(e, d, lambda line: with_column(line, 0, pick(d, ("", " ")))),
}
MLDOC_INVALID = {
    "label": lambda e, d: _token_line(e, d, lambda line: with_column(line, 0, pick(d, ("XCAT", "ccat", "", "C CAT")))),
    "no tab": lambda e, d: _token_line(e, d, lambda line: line.replace("\t", " ", 1)),
    "empty text": lambda e, d: _token_line(e, d, lambda line: line.split("\t")[0] + pick(d, ("\t\n", "\t \n"))),
}
MUSE_INVALID = {
    "1 field": lambda e, d: _token_line(e, d, lambda line: _drop_last(line, " ")),
    "3 fields": lambda e, d: _token_line(e, d, lambda line: _add_column(line, " ")),
}
TEXT_INVALID = {
    "UTF-16 without BOM": lambda e, d: "".join(e).encode(pick(d, ("utf-16-le", "utf-16-be"))),
    "UTF-16 with BOM": lambda e, d: "".join(e).encode("utf-16"),
}


class NotWrittenBack(AssertionError):
    """A valid CoNLL-U slice, read and written, did not come back byte for byte."""


def _round_trips(path, content: bytes, sentences) -> None:
    out = io.StringIO()
    write_conllu(sentences, out)
    if out.getvalue().encode("utf-8") != content:
        raise NotWrittenBack(f"{content[:300]!r} written back as {out.getvalue()[:300]!r}")


@cache
def spec(fmt: str) -> Spec:
    """The format's reader and invalid classes (with those common to all) over its real pieces."""
    fuzz = _spec(fmt, SHARED_DATA)
    fuzz.invalid = {**common_invalid(), **fuzz.invalid}
    return fuzz


def _spec(fmt: str, data) -> Spec:
    """Small slices of the shared files (the first blocks or lines of each), so 1,000 cases stay quick."""
    if fmt == "conllu":
        ud = [p for p in sorted((data / "ud").glob("*.conllu")) if p.name != "ar-ud-dev.conllu"]  # UD v1.2
        files = [blocks(p, 12) for p in ud]
        files.append(blocks(data / "ud" / "en_ewt-ud-test.conllu", 2, lambda b: any(".1\t" in x for x in b)))
        return Spec(fmt, lambda p: list(read_conllu(p)), files, "\t", CONLLU_INVALID, check_valid=_round_trips)
    if fmt == "ner":
        files = [blocks(p, 12, lambda b: len(token_lines(b)) >= 2) for p in sorted((data / "ner").rglob("*"))
                 if p.is_file()]
        return Spec(fmt, lambda p: list(read_ner(p)), files, None, NER_INVALID)
    if fmt == "udpos":
        files = [blocks(p, 12) for p in sorted((data / "udpos_xtreme").glob("*.tsv"))]
        return Spec(fmt, lambda p: list(read_udpos_tsv(p)), files, "\t", UDPOS_INVALID)
    if fmt == "xnli":
        files = [lines(p, 40) for p in sorted((data / "xnli").rglob("*.t*"))]
        return Spec(fmt, lambda p: list(read_xnli(p)), files, "\t", XNLI_INVALID, most=5)
    texts = [lines(p, 40) for p in sorted((data / "raw_text").glob("*.txt"))]
    if fmt == "mldoc":  # no MLDoc in the shared data: real sentences in MLDoc's label<TAB>text layout
        files = [[f"{MLDOC_LABELS[i % 4]}\t{x}" for i, x in enumerate(text)] for text in texts]
        return Spec(fmt, lambda p: list(read_mldoc(p)), files, "\t", MLDOC_INVALID, most=5)
    if fmt == "muse":
        files = [lines(p, 100) for p in sorted((data / "muse").glob("*.txt"))]
        return Spec(fmt, read_dictionary, files, " ", MUSE_INVALID, most=5)
    return Spec(fmt, lambda p: list(read_lines(p)), texts, " ", TEXT_INVALID, most=5)


FORMATS = ("conllu", "ner", "udpos", "xnli", "mldoc", "muse", "text")


@pytest.fixture(scope="module")
def fuzz_file(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "input"


@pytest.mark.parametrize("fmt", FORMATS)
@settings(max_examples=examples(1000), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_fuzz_reader(shared_data, fuzz_file, fmt, data):
    run_case(spec(fmt), fuzz_file, data)


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_piece_is_read(shared_data, tmp_path, fmt):
    """The property the fuzzing starts from: the valid pieces of each file, together, are read (CoNLL-U: and
    written back byte for byte)."""
    fuzz = spec(fmt)
    path = tmp_path / "pieces"
    for pieces in fuzz.files:
        content = "".join(joined(pieces)).encode("utf-8")
        path.write_bytes(content)
        records, error = read(fuzz, path)
        assert error is None and len(records) > 0
        if fuzz.check_valid:
            fuzz.check_valid(path, content, records)
