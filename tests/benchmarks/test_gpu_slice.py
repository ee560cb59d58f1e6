"""benchmarks/gpu_slice.py end to end on the CPU at test scale: one slice of a tiny study built from a clean
output folder, its results exported there, and the export merges into another workdir."""
from __future__ import annotations

import json
import os
import subprocess
import tarfile
import sys
from pathlib import Path

import pytest
import yaml

from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.exchange import merge_results
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.spec import load_spec
from tests.studies.test_slices_merge import TINY

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_device_script_runs_one_slice_and_exports_it(tmp_path):
    spec_path = tmp_path / "tiny.yaml"
    spec_path.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    out = tmp_path / "out"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gpu_slice.py"), str(spec_path), "seed1",
                          str(out), "--scale", "test", "--device", "cpu", "--jobs", "1",
                          "--wheels", str(tmp_path / "none"), "--pack", str(tmp_path / "packed"), "--piece-mib", "0.1"],
                         capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[-1].startswith("slice_seconds=") and float(lines[-1].split("=")[1]) > 0
    assert [line for line in lines if line.startswith("== ") and line.endswith(" s")] and "seed1" in run.stdout
    pieces = sorted((tmp_path / "packed").glob("seed1.tar.xz.*"))
    assert len(pieces) > 1 and all(p.stat().st_size <= 0.1 * 2**20 for p in pieces) and not (out / "export").exists()
    joined = tmp_path / "joined.tar.xz"  # what `cat seed1.tar.xz.* | tar -xJ` does on the machine that reports
    joined.write_bytes(b"".join(p.read_bytes() for p in pieces))
    with tarfile.open(joined) as tar:
        tar.extractall(tmp_path / "unpacked", filter="data")
    export = tmp_path / "unpacked" / "export"
    manifest = json.loads((export / "manifest.json").read_text())
    assert manifest["slice"] == "seed1" and manifest["rows"] > 0
    assert [p["slice"] for p in manifest["parts"]] == ["seed1"]  # its `study run` line, for `results record`
    rows = [json.loads(line)["row"] for line in (export / "rows.jsonl").read_text().splitlines()]
    assert {r["seed"] for r in rows if r["task"] == "upos"} == {1}
    spec = load_spec(spec_path)
    merged = RunContext(ArtifactStore(tmp_path / "merged"), ResultsDB(tmp_path / "merged" / "results.db"), "tiny")
    added, _ = merge_results(spec, merged, [export])
    assert added == manifest["rows"]
