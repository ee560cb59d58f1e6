"""Every shared data file reads without error, and its counts equal an independent count."""
from __future__ import annotations

from pathlib import Path

import pytest

from mbertlab.formats.conllu import read_conllu
from mbertlab.formats.muse import read_dictionary
from mbertlab.formats.ner_columns import read_ner
from mbertlab.formats.udpos import read_udpos_tsv
from mbertlab.formats.xnli import read_xnli

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def files(sub: str) -> list[Path]:
    return sorted(p for p in (SHARED / sub).rglob("*") if p.is_file()) if (SHARED / sub).is_dir() else []


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
