"""Every shared data file reads without error, its counts equal an independent count, and every treebank
is written back byte for byte."""
from __future__ import annotations

import io
import unicodedata
from pathlib import Path

import pytest

from mbertlab.formats.conllu import V1_DEPRELS, V1_UPOS, read_conllu, write_conllu
from mbertlab.formats.guess import summarize
from mbertlab.formats.muse import read_dictionary
from mbertlab.formats.ner_columns import read_ner
from mbertlab.formats.udpos import read_udpos_tsv
from mbertlab.formats.xnli import read_xnli
from tests.conftest import SHARED_DATA as SHARED

V1_TREEBANKS = ("ar-ud-dev.conllu",)  # UD v1.2: read only with the v1-to-v2 mapping (see the data README)


def files(sub: str) -> list[Path]:
    """The files of a shared folder; where it is missing or empty, the folder itself, so that the test
    fails through the `shared_data` fixture instead of being skipped for an empty parameter list."""
    found = sorted(p for p in (SHARED / sub).rglob("*") if p.is_file()) if (SHARED / sub).is_dir() else []
    return found or [SHARED / sub]


def blank_separated_blocks(path: Path, skip_prefixes: tuple[str, ...] = ()) -> int:
    """Blocks of non-blank lines, ignoring lines starting with a prefix (e.g. -DOCSTART-)."""
    count, inside = 0, False
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith(skip_prefixes):
            if line.strip() and line.startswith(skip_prefixes):
                continue
            inside = False
            continue
        if not inside:
            count += 1
            inside = True
    return count


@pytest.mark.parametrize("path", files("ud"), ids=lambda p: p.name)
def test_conllu_files(shared_data, path):
    n_words = sum(1 for line in path.read_text(encoding="utf-8").splitlines()
                  if line and not line.startswith("#") and line.split("\t")[0].isdigit())
    sentences = list(read_conllu(path, v1_to_v2=True))
    assert len(sentences) == blank_separated_blocks(path)
    assert sum(len(s) for s in sentences) == n_words


@pytest.mark.parametrize("path", files("ner"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_ner_files(shared_data, path):
    expected = blank_separated_blocks(path, skip_prefixes=("-DOCSTART-",))
    sentences = list(read_ner(path))
    assert len(sentences) == expected
    tokens = sum(1 for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip() and not line.startswith("-DOCSTART-"))
    assert sum(len(s.tokens) for s in sentences) == tokens
    for s in sentences:  # BIO: no entity starts with I-
        for prev, tag in zip(["O"] + s.tags, s.tags):
            assert not (tag.startswith("I-") and prev[2:] != tag[2:])


def test_conll2003_published_counts(shared_data):
    counts = {name: sum(1 for _ in read_ner(shared_data / "ner" / "conll2003" / name))
              for name in ("eng.train", "eng.testa", "eng.testb")}
    assert counts == {"eng.train": 14041, "eng.testa": 3250, "eng.testb": 3453}


@pytest.mark.parametrize("path", files("udpos_xtreme"), ids=lambda p: p.name)
def test_udpos_files(shared_data, path):
    assert sum(1 for _ in read_udpos_tsv(path)) == blank_separated_blocks(path)


@pytest.mark.parametrize("path", files("xnli"), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_xnli_files(shared_data, path):
    lines = [l for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
    pairs = list(read_xnli(path))
    assert len(pairs) == len(lines)
    assert {p.label for p in pairs} <= {"entailment", "neutral", "contradiction"}


@pytest.mark.parametrize("path", files("muse"), ids=lambda p: p.name)
def test_muse_files(shared_data, path):
    pairs = {tuple(l.split()) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()}
    dictionary = read_dictionary(path)
    assert {(s, t) for s, ts in dictionary.items() for t in ts} == pairs


@pytest.mark.parametrize("path", files("ud"), ids=lambda p: p.name)
def test_conllu_round_trip(shared_data, path):
    """Read then write gives the file back byte for byte: comments, ranges, empty nodes, enhanced DEPS."""
    original = path.read_text(encoding="utf-8")
    out = io.StringIO()
    write_conllu(read_conllu(path, v1_to_v2=path.name in V1_TREEBANKS), out)
    if path.name in V1_TREEBANKS:  # the mapping changes what it is asked to, and only that
        original = "".join(_v1_mapped(line) for line in original.splitlines(keepends=True))
    assert out.getvalue() == original


def _v1_mapped(line: str) -> str:
    """A word line as the v1-to-v2 reading gives it back: NFC FORM, v2 UPOS and DEPREL."""
    cols = line.split("\t")
    if len(cols) != 10 or not cols[0].isdigit():
        return line
    base, _, sub = cols[7].partition(":")
    cols[1] = unicodedata.normalize("NFC", cols[1])
    cols[3] = V1_UPOS.get(cols[3], cols[3])
    cols[7] = V1_DEPRELS.get(base, base) + (f":{sub}" if sub else "")
    return "\t".join(cols)


def test_data_check_counts_words_ranges_and_empty_nodes_apart(shared_data):
    path = shared_data / "ud" / "en_ewt-ud-test.conllu"
    ids = [line.split("\t", 1)[0] for line in path.read_text(encoding="utf-8").splitlines()
           if line and not line.startswith("#")]
    ranges = [tuple(map(int, i.split("-"))) for i in ids if "-" in i]
    info = summarize(path)
    assert (info["items"], info["words"]) == (2077, 25094)  # as the data README counts them
    assert info["multiword"] == len(ranges) > 0 and info["empty"] == sum("." in i for i in ids) == 2
    assert info["tokens"] == 25094 - sum(last - first for first, last in ranges)
