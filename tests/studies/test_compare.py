"""`study compare`: two studies' tables side by side with B − A per cell, from a tmp results.db."""
from __future__ import annotations

import pytest

from mbertlab.cli.main import run
from mbertlab.errors import ConfigError
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.studies.compare import compare, diff_tables
from mbertlab.studies.runner import run_study
from mbertlab.studies.spec import load_spec
from tests.studies.test_runner import context, write_spec


def add(db: ResultsDB, study: str, task: str, lang: str, metric: str, values: list[float]) -> None:
    db.add([ResultRow(metric=metric, value=v, study=study, task=task, test_lang=lang, split="test", seed=i)
            for i, v in enumerate(values)])


@pytest.fixture
def db(tmp_path) -> ResultsDB:
    db = ResultsDB(tmp_path / "results.db")
    add(db, "small", "upos", "de", "accuracy", [0.50, 0.60])
    add(db, "small", "upos", "en", "accuracy", [0.90])
    add(db, "big", "upos", "de", "accuracy", [0.70, 0.72, 0.74])
    add(db, "big", "ner", "de", "f1", [0.40])
    add(db, "other", "upos", "de", "accuracy", [0.0])
    return db


def test_rows_side_by_side_with_differences(tmp_path, db):
    report = compare("small", "big", context(tmp_path))
    [table] = report.tables
    assert table.columns == ["task", "test_lang", "split", "accuracy [small]", "accuracy [big]", "accuracy [Δ]",
                             "f1 [small]", "f1 [big]", "f1 [Δ]"]
    rows = {tuple(r[:3]): [str(c) for c in r[3:]] for r in table.rows}
    assert rows[("upos", "de", "test")] == ["0.5500 ± 0.0707", "0.7200 ± 0.0200", "+0.1700", "—", "—", "—"]
    assert rows[("upos", "en", "test")] == ["0.9000", "—", "—", "—", "—", "—"]
    assert rows[("ner", "de", "test")] == ["—", "—", "—", "—", "0.4000", "—"]


def test_cli_markdown_and_html(tmp_path, db, capsys):
    assert run(["--workdir", str(tmp_path), "study", "compare", "small", "big", "--html", str(tmp_path / "cmp")]) == 0
    out = capsys.readouterr().out
    assert "# small vs big" in out and "| upos | de | test | 0.5500 ± 0.0707 | 0.7200 ± 0.0200 | +0.1700 |" in out
    assert "<td>+0.1700</td>" in (tmp_path / "cmp" / "report.html").read_text()
    assert run(["--workdir", str(tmp_path), "study", "compare", "small", "huge"]) == 1
    assert "big, other, small" in capsys.readouterr().err


def test_missing_study_is_a_config_error(tmp_path, db):
    with pytest.raises(ConfigError, match="'nope'.*studies there: big, other, small"):
        compare("small", "nope", context(tmp_path))


def test_two_scales_of_one_spec_and_their_findings(tmp_path):
    findings = [{"id": "longer", "quote": "A longer cell scores higher.", "section": "§1", "kind": "greater",
                 "a": {"cell": "bb"}, "b": {"cell": "a"}, "margin": 0.15}]
    path = write_spec(tmp_path / "toy.yaml", tmp_path, findings=findings, seeds=[0, 1, 2],
                      scales={"test": {"seeds": [3]}})
    ctx = context(tmp_path / "w")
    for scale in ("lab", "test"):  # one workdir, one study name: rows are told apart by artifact
        run_study(load_spec(path, scale), ctx)
    report = compare(f"{path}@lab", f"{path}@test", ctx)
    toy, card = report.tables
    rows = {r[0]: [str(c) for c in r[1:]] for r in toy.rows}
    assert rows["a"] == ["11.0 ± 1.0", "13.0", "+2.0"] and rows["bb"] == ["21.0 ± 1.0", "23.0", "+2.0"]
    # lab: 0.21 - 0.11 = 0.1, below the margin beyond the 3 seeds' spread; test: one seed cannot decide
    assert card.rows[0][2:6] == ["does not hold", "inconclusive", "+0.1", "+0.1"]


def test_diff_matches_rows_by_label_not_position():
    from mbertlab.report.tables import Cell, Table

    a = Table("t", ["lang", "acc"], [["en", Cell([0.5])], ["de", Cell([0.2])]])
    b = Table("t", ["lang", "acc"], [["de", Cell([0.3])], ["fr", Cell([0.1])]])
    d = diff_tables(a, b)
    assert [[str(c) for c in r] for r in d.rows] == [["en", "0.5", "—", "—"], ["de", "0.2", "0.3", "+0.1"],
                                                     ["fr", "—", "0.1", "—"]]
