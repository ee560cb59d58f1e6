"""`mbertlab results`: filters and CSV export of results.db."""
from __future__ import annotations

import csv
import io

from mbertlab.cli.main import run
from mbertlab.store.results import ResultRow, ResultsDB


def test_results_filters_and_csv(tmp_path, capsys):
    db = ResultsDB(tmp_path / "results.db")
    db.add([ResultRow(metric="accuracy", value=0.9, study="quick", task="upos", test_lang="src", seed=0),
            ResultRow(metric="f1", value=0.5, study="quick", task="ner", test_lang="fake", seed=1),
            ResultRow(metric="f1", value=0.7, study="other", task="ner", test_lang="fake", seed=1)])
    assert run(["--workdir", str(tmp_path), "results", "--study", "quick", "--where", "seed=1", "--csv", "-"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["task"], r["value"]) for r in rows] == [("ner", "0.5")]
    assert run(["--workdir", str(tmp_path), "results", "--task", "upos"]) == 0
    assert "0.9000" in capsys.readouterr().out
    assert run(["--workdir", str(tmp_path), "results", "--where", "colour=red"]) == 1
    assert "COLUMN=VALUE" in capsys.readouterr().err
