"""Scorecard predicates on synthetic rows: holds / does not hold / not run, numbers and effect sizes."""
from __future__ import annotations

import math

import pytest

from mbertlab.errors import ConfigError
from mbertlab.store.results import ResultRow
from mbertlab.studies import spec as spec_module
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import run_study
from mbertlab.studies.scorecard import (
    FAILS,
    HOLDS,
    NOT_RUN,
    evaluate_findings,
    parse_findings,
    scorecard_table,
)
from mbertlab.studies.spec import load_spec
from tests.studies.test_runner import context, write_spec


def rows_for(cond: str, lang: str, values, metric="accuracy", **extra) -> list[ResultRow]:
    return [ResultRow(metric=metric, value=v, task="upos", test_lang=lang, split="test", seed=i,
                      extra={"condition": cond, **extra}) for i, v in enumerate(values)]


ROWS = (rows_for("shared", "src", [0.90, 0.92, 0.94]) + rows_for("shared", "tgt", [0.60, 0.62, 0.64])
        + rows_for("fake", "src", [0.91, 0.93, 0.95]) + rows_for("fake", "tgt", [0.59, 0.61, 0.63])
        + rows_for("random", "tgt", [0.30, 0.40, 0.50])
        + [r for p, v in [(0, 0.7), (0.25, 0.6), (0.5, 0.5), (1, 0.45)]
           for r in rows_for("perm", "tgt", [v, v + 0.02], permutation=p)])


def one(spec: dict, rows=ROWS):
    return evaluate_findings(parse_findings([{"id": "f", "claim": "c", **spec}], "spec.yaml"), rows)[0]


def test_greater_with_numbers_and_cohen_d():
    v = one({"kind": "greater", "where": {"metric": "accuracy"}, "a": {"condition": "shared", "test_lang": "tgt"},
             "b": {"condition": "random"}})
    assert v.state == HOLDS
    assert [s.n for s in v.sides] == [3, 3]
    assert v.effect == pytest.approx(0.62 - 0.40)
    # stds 0.02 and 0.1 -> pooled sqrt((0.0004 + 0.01) / 2)
    assert v.cohen_d == pytest.approx(0.22 / math.sqrt(0.0052))
    assert one({"kind": "greater", "a": {"condition": "shared", "test_lang": "tgt"}, "b": {"condition": "random"},
                "margin": 0.3}).state == FAILS
    assert one({"kind": "greater", "a": {"condition": "random"},
                "b": {"condition": "shared", "test_lang": "tgt"}}).state == FAILS


def test_above_a_constant_overall_and_at_every_level():
    assert one({"kind": "above", "select": {"condition": "random"}, "value": 0.35}).state == HOLDS  # mean 0.40
    v = one({"kind": "above", "select": {"condition": "random"}, "value": 0.45})
    assert v.state == FAILS and v.effect == pytest.approx(0.40 - 0.45)
    # permutation levels 0, 0.25, 0.5, 1 have means 0.71, 0.61, 0.51, 0.46: the lowest decides
    v = one({"kind": "above", "select": {"condition": "perm"}, "by": "permutation", "value": 0.5})
    assert v.state == FAILS and len(v.sides) == 4 and "permutation=1" in v.test
    assert v.effect == pytest.approx(0.46 - 0.5)
    assert one({"kind": "above", "select": {"condition": "perm"}, "by": "permutation", "value": 0.45}).state == HOLDS
    v = one({"kind": "above", "select": {"condition": "perm"}, "by": "permutation", "levels": [0, 2], "value": 0})
    assert v.state == NOT_RUN and "permutation=2" in v.test
    assert one({"kind": "above", "select": {"condition": "unigram"}, "value": 0}).state == NOT_RUN
    with pytest.raises(ConfigError, match="levels"):
        one({"kind": "above", "levels": [1], "value": 0})
    v = one({"kind": "below", "select": {"condition": "perm"}, "by": "permutation", "value": 0.7})
    assert v.state == FAILS and "permutation=0" in v.test and v.effect == pytest.approx(0.71 - 0.7)
    assert one({"kind": "below", "select": {"condition": "perm"}, "by": "permutation", "value": 0.72}).state == HOLDS


def test_missing_rows_are_not_run():
    v = one({"kind": "greater", "a": {"condition": "shared"}, "b": {"condition": "unigram"}})
    assert v.state == NOT_RUN and "condition=unigram" in v.test
    assert one({"kind": "within", "tol": 0.1, "a": {"condition": "fake"}, "b": {"metric": "f1"}}).state == NOT_RUN
    assert one({"kind": "greater", "a": {"condition": "shared"}, "b": {"condition": "fake"}}, rows=[]).state == NOT_RUN


def test_within_absolute_and_seed_spread():
    same = {"a": {"condition": "fake", "test_lang": "tgt"}, "b": {"condition": "shared", "test_lang": "tgt"}}
    assert one({"kind": "within", "tol": 0.011, **same}).state == HOLDS  # |0.61 - 0.62| = 0.01
    assert one({"kind": "within", "tol": 0.009, **same}).state == FAILS
    spread = {"a": {"condition": "shared", "test_lang": "tgt"}, "b": {"condition": "random"}}
    # pooled std = sqrt(0.0052) = 0.0721; difference 0.22 = 3.05 stds
    assert one({"kind": "within", "k": 3.1, **spread}).state == HOLDS
    assert one({"kind": "within", "k": 3.0, **spread}).state == FAILS
    single = ROWS + [ResultRow(metric="accuracy", value=0.5, extra={"condition": "solo"})]
    v = one({"kind": "within", "k": 1, "a": {"condition": "solo"}, "b": {"condition": "solo"}}, single)
    assert v.state == NOT_RUN and "n ≥ 2" in v.test


def test_monotone_over_a_factor():
    base = {"by": "permutation", "levels": [0, 0.25, 0.5, 1], "select": {"condition": "perm"}}
    v = one({"kind": "decreasing", **base})
    assert v.state == HOLDS and v.effect == pytest.approx(0.45 - 0.7)
    assert [s.n for s in v.sides] == [2, 2, 2, 2]
    assert one({"kind": "increasing", **base}).state == FAILS
    assert one({"kind": "decreasing", **base, "margin": 0.06}).state == FAILS  # last step is 0.05
    assert one({"kind": "decreasing", **base, "levels": [0, 0.75]}).state == NOT_RUN


def test_delta_within():
    spec = {"kind": "delta_within", "a1": {"condition": "fake", "test_lang": "src"},
            "a2": {"condition": "fake", "test_lang": "tgt"}, "b1": {"condition": "shared", "test_lang": "src"},
            "b2": {"condition": "shared", "test_lang": "tgt"}}
    v = one({**spec, "tol": 0.03})  # Δfake = 0.32, Δshared = 0.30
    assert v.state == HOLDS and v.effect == pytest.approx(0.02)
    assert one({**spec, "tol": 0.015}).state == FAILS


def test_invalid_findings_are_config_errors():
    with pytest.raises(ConfigError) as err:
        parse_findings([{"id": "x", "claim": "c", "kind": "bigger", "a": {}, "b": {}}], "s.yaml")
    assert "s.yaml" in str(err.value)
    with pytest.raises(ConfigError, match="exactly one"):
        parse_findings([{"id": "x", "claim": "c", "kind": "within", "a": {}, "b": {}}], "s.yaml")
    with pytest.raises(ConfigError, match="duplicate"):
        parse_findings([{"id": "x", "claim": "c", "kind": "greater", "a": {}, "b": {}}] * 2, "s.yaml")


def test_table_lists_every_verdict():
    findings = parse_findings([
        {"id": "g", "claim": "shared beats random", "ref": "Table 1", "kind": "greater",
         "a": {"condition": "shared", "test_lang": "tgt"}, "b": {"condition": "random"}},
        {"id": "n", "claim": "unigram", "kind": "greater", "a": {"condition": "unigram"}, "b": {"condition": "x"}}],
        "s.yaml")
    table = scorecard_table(evaluate_findings(findings, ROWS))
    text = table.as_text_rows()
    assert text[0][:3] == ["g", "shared beats random (Table 1)", "holds"] and text[1][2] == "not run"
    assert "0.62 ± 0.02 (n=3)" in text[0][4] and text[0][5] == "+0.22"
    assert table.note == "1 holds, 0 does not hold, 1 not run"


def test_report_of_a_spec_with_findings_shows_the_scorecard(tmp_path, monkeypatch):
    # `findings` is a study-level key; until spec.py lists it among COMMON_KEYS the test adds it
    monkeypatch.setattr(spec_module, "COMMON_KEYS", spec_module.COMMON_KEYS + ("findings",))
    findings = [{"id": "longer", "claim": "a longer cell scores higher", "kind": "greater", "where":
                 {"metric": "accuracy"}, "a": {"cell": "bb"}, "b": {"cell": "a"}},  # tags reach `extra`
                {"id": "missing", "claim": "no such cell", "kind": "within", "k": 2, "a": {"cell": "a"},
                 "b": {"cell": "zz"}}]
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, findings=findings))
    ctx = context(tmp_path / "w")
    run_study(spec, ctx)
    md, html = write_report(spec, ctx)
    text = md.read_text()
    assert "### Reproduction scorecard" in text and "<h3>Reproduction scorecard</h3>" in html.read_text()
    line = next(l for l in text.splitlines() if l.startswith("| longer |"))
    assert "| holds |" in line and "+0.1 |" in line  # 0.205 - 0.105
    assert "| not run |" in next(l for l in text.splitlines() if l.startswith("| missing |"))
