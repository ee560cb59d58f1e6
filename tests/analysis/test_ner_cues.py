"""The model-free NER cue taggers, against entity F1 counted by hand on toy files."""
from __future__ import annotations

import pytest

from mbertlab.analysis.ner_cues import ner_cue_scores
from mbertlab.cli.main import run
from mbertlab.errors import DataError


def write(path, sentences):
    path.write_text("\n\n".join("\n".join(f"{w}\t{t}" for w, t in s) for s in sentences) + "\n", encoding="utf-8")
    return path


SOURCE = [[("the", "O"), ("Ab", "B-PER"), ("went", "O")], [("the", "O"), ("Kl", "B-PER"), ("went", "O")],
          [("to", "O"), ("Cd", "B-LOC"), ("Ef", "I-LOC"), (".", "O")]]
TARGET = [[("the", "O"), ("Ab", "B-PER"), ("sat", "O"), (".", "O")],  # a source name, typed as in the source
          [("to", "O"), ("Gh", "B-LOC"), (".", "O")],  # a new name after the source's LOC word
          [("xy", "O"), ("Ij", "B-ORG"), ("Mn", "I-ORG"), (".", "O")]]  # a new two-word name, a new type


def test_each_cue_scores_the_entities_it_can_find(tmp_path):
    scores = ner_cue_scores(write(tmp_path / "src.txt", SOURCE), write(tmp_path / "tgt.txt", TARGET))
    # lexicon: only Ab is known (PER, right): P 1/1, R 1/3. case_spans: three spans, all PER (the source's
    # commonest type): only Ab right, P = R = 1/3; untyped all three right. case_context: Ab after "the" (PER
    # twice in the source), Gh between "to" and "." (LOC, LOC), Ij Mn before "." (LOC, wrong): P = R = 2/3.
    assert scores == pytest.approx({"lexicon": 0.5, "case_spans": 1 / 3, "case_spans_untyped": 1.0,
                                    "case_context": 2 / 3})


def test_a_source_without_entities_or_an_empty_file_is_a_clear_error(tmp_path):
    target = write(tmp_path / "tgt.txt", TARGET)
    with pytest.raises(DataError, match="found no entity"):
        ner_cue_scores(write(tmp_path / "src.txt", [[("a", "O"), ("b", "O")]]), target)
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    with pytest.raises(DataError, match="empty.txt.*found no sentences"):
        ner_cue_scores(tmp_path / "empty.txt", target)


def test_the_command_prints_each_cue_in_percent(tmp_path, capsys):
    source, target = write(tmp_path / "src.txt", SOURCE), write(tmp_path / "tgt.txt", TARGET)
    assert run(["analyze", "ner-cues", "--train", str(source), "--test", str(target)]) == 0
    lines = capsys.readouterr().out.split("\n")
    assert [line.split() for line in lines if line] == [["lexicon", "F1", "50.0"], ["case_spans", "F1", "33.3"],
                                                       ["case_context", "F1", "66.7"],
                                                       ["case_spans_untyped", "F1", "100.0"]]
