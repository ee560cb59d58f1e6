"""benchmarks/gpu_slice.py end to end on the CPU at test scale: two slices of a tiny study built in turn from a
clean output folder, each export packed in small pieces (the second without what the first packed), and the
unpacked exports merge into another workdir as the whole study."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
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


def _device_script(tmp_path, *args) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    run = subprocess.run([sys.executable, str(REPO / "benchmarks" / "gpu_slice.py"), str(tmp_path / "tiny.yaml"),
                          "seed1", str(tmp_path / "out"), "--scale", "test", "--device", "cpu", "--jobs", "1",
                          "--wheels", str(tmp_path / "none"), "--piece-mib", "0.1", *args],
                         capture_output=True, text=True, env=env, timeout=900)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    lines = run.stdout.splitlines()
    assert lines[-1].startswith("slice_seconds=") and float(lines[-1].split("=")[1]) > 0
    return lines


def _unpack(pieces: list[Path], to: Path) -> Path:
    """What `cat NAME.tar.xz.* | tar -xJ` does on the machine that reports."""
    joined = to.with_suffix(".tar.xz")
    joined.write_bytes(b"".join(p.read_bytes() for p in pieces))
    with tarfile.open(joined) as tar:
        tar.extractall(to, filter="data")
    return to / "export"


@pytest.mark.slow
def test_the_device_script_runs_slices_in_turn_and_packs_their_exports(tmp_path):
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump(TINY), encoding="utf-8")
    lines = _device_script(tmp_path, "--pack", str(tmp_path / "packed"), "--also", "seed0")
    assert [line for line in lines if line.startswith("== ") and line.endswith(" s")] and "seed1" in "".join(lines)
    assert not (tmp_path / "out" / "export").exists()
    exports = {}
    for name in ("seed1", "seed0"):
        pieces = sorted((tmp_path / "packed").glob(f"{name}.tar.xz.*"))
        assert pieces and all(p.stat().st_size <= 0.1 * 2**20 for p in pieces)
        assert len(pieces) > 1 or name == "seed0"  # the first holds the generated text: cut in pieces
        exports[name] = _unpack(pieces, tmp_path / f"unpacked-{name}")
        manifest = json.loads((exports[name] / "manifest.json").read_text())
        assert manifest["slice"] == name and manifest["rows"] > 0
        assert [p["slice"] for p in manifest["parts"]] == [name]  # its `study run` line, for `results record`
        rows = [json.loads(line)["row"] for line in (exports[name] / "rows.jsonl").read_text().splitlines()]
        assert {r["seed"] for r in rows if r["task"] == "upos"} == {int(name[-1])}
    # the second slice leaves out what the first packed (its generated languages) and says so
    left_out = (exports["seed0"] / "already-packed.txt").read_text().split()
    assert any(rel.startswith("generate/") for rel in left_out)
    assert all((exports["seed1"] / "artifacts" / rel).is_dir() and not (exports["seed0"] / "artifacts" / rel).exists()
               for rel in left_out)
    spec = load_spec(tmp_path / "tiny.yaml")
    merged = RunContext(ArtifactStore(tmp_path / "merged"), ResultsDB(tmp_path / "merged" / "results.db"), "tiny")
    added, _ = merge_results(spec, merged, [exports["seed1"], exports["seed0"]])
    assert added == sum(json.loads((e / "manifest.json").read_text())["rows"] for e in exports.values())
    assert {r.seed for r in merged.results.query(task="upos")} == {0, 1}  # (a whole merge: test_slices_merge.py)
    # a slice is not started after --start-within-s (the first one always runs; here it is already built)
    lines = _device_script(tmp_path, "--pack", str(tmp_path / "packed-again"), "--also", "seed0",
                           "--start-within-s", "0")
    assert any(line.startswith("== skip slice seed0") for line in lines)
    assert not list((tmp_path / "packed-again").glob("seed0.*"))
