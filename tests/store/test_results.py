"""results.db: concurrent writers, replacement by artifact, filters, CSV."""
from __future__ import annotations

import csv
import io
import subprocess
import sys

from mbertlab.store.results import ResultRow, ResultsDB, write_csv

WRITER = """
import sys
from mbertlab.store.results import ResultRow, ResultsDB
db = ResultsDB(sys.argv[1])
for i in range(500):
    db.add([ResultRow(metric="m", value=i, model=sys.argv[2], seed=i)])
"""


def test_two_processes_500_rows_each(tmp_path):
    script = tmp_path / "w.py"
    script.write_text(WRITER)
    db_path = tmp_path / "results.db"
    ResultsDB(db_path)
    procs = [subprocess.Popen([sys.executable, str(script), str(db_path), name]) for name in ("a", "b")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    db = ResultsDB(db_path)
    assert db.count() == 1000
    assert len(db.query(model="a")) == 500 and sorted(r.value for r in db.query(model="b")) == list(range(500))


def test_replace_artifact_and_filters(tmp_path):
    db = ResultsDB(tmp_path / "r.db")
    db.add([ResultRow(metric="acc", value=0.5, artifact="/x/1", task="upos"),
            ResultRow(metric="acc", value=0.6, artifact="/x/2", task="ner", extra={"layer": 3})])
    db.add([ResultRow(metric="acc", value=0.7, artifact="/x/1", task="upos")], replace_artifact="/x/1")
    assert sorted(r.value for r in db.query()) == [0.6, 0.7]
    assert [r.extra for r in db.query(task="ner")] == [{"layer": 3}]
    assert len(db.query(task=["ner", "upos"])) == 2
    out = io.StringIO()
    write_csv(db.query(), out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [float(r["value"]) for r in rows] == [0.6, 0.7] and rows[0]["extra"] == '{"layer": 3}'
