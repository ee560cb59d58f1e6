"""What the CoNLL-U writer produces passes the official UD validator (udtools, level 2) on a treebank with
empty nodes: the writer keeps them, so the enhanced DEPS that point to them stay valid."""
from __future__ import annotations

from dataclasses import replace
from itertools import islice

import pytest
from udtools import Validator

from mbertlab.formats.conllu import read_conllu, strip_subtype, write_conllu

TREEBANK = "en_ewt-ud-test.conllu"  # the shared treebank with empty nodes (8.1-style IDs)


@pytest.fixture(scope="module")
def sentences(shared_data):
    """The first 100 sentences and every sentence with an empty node."""
    path = shared_data / "ud" / TREEBANK
    chosen = list(islice(read_conllu(path), 100)) + [s for s in islice(read_conllu(path), 100, None) if s.empty]
    assert sum(len(s.empty) for s in chosen) == 2
    return chosen


def validate(path) -> tuple[bool, str]:
    state = Validator(lang="en", level=2, output=None).validate_files([str(path)])
    return state.passed(), str(state)


def test_written_file_passes_level_2(tmp_path, sentences):
    out = tmp_path / "ewt.conllu"
    write_conllu(sentences, out)
    assert validate(out) == (True, "*** PASSED ***")


def test_prediction_file_passes_level_2(tmp_path, sentences):
    """As the parser writes predictions: universal relations only (subtypes stripped), the rest as read."""
    out = tmp_path / "parse.en.test.conllu"
    write_conllu([replace(s, deprels=[strip_subtype(r) for r in s.deprels]) for s in sentences], out)
    assert validate(out)[0]


def test_dropping_empty_nodes_fails_level_2(tmp_path, sentences):
    """The old writer's output (empty nodes gone, DEPS still pointing to them) is what the validator catches."""
    out = tmp_path / "old.conllu"
    write_conllu([replace(s, empty=[]) for s in sentences], out)
    passed, summary = validate(out)
    assert not passed and "ENHANCED errors: 2" in summary
