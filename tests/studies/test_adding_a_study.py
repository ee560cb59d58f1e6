"""docs/adding-a-study.md as a user follows it: its module and spec, saved as written, run from the command line."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-study.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)


def mbertlab(cwd: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-m", "mbertlab", "--workdir", str(cwd / "work"), *args], cwd=cwd,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_the_worked_sixth_study_runs_as_documented(tmp_path):
    module = next(b for b in blocks("python") if "DESIGN = Design(" in b)
    spec = next(b for b in blocks("yaml") if "design: sharing_study:DESIGN" in b)
    (tmp_path / "sharing_study.py").write_text(module)
    (tmp_path / "sharing.yaml").write_text(spec)
    commands = [line.split("#")[0].split() for b in blocks("sh") for line in b.splitlines() if "sharing" in line]
    assert [c[:3] for c in commands] == [["mbertlab", "study", "validate"], ["mbertlab", "study", "run"],
                                        ["mbertlab", "study", "report"]]
    out = {c[2]: mbertlab(tmp_path, *c[1:]) for c in commands}
    assert "valid, 3 stage jobs, 1 findings" in out["validate"]

    report = next((tmp_path / "work" / "reports").rglob("report.md")).read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| (0\.0|1\.0) \| ([0-9.]+) \|", report, flags=re.M))
    texts = next((tmp_path / "work" / "generate").glob("*/src/text/train.txt")).parent.parent.parent
    for share, target in (("0.0", "t0"), ("1.0", "t1")):  # recomputed here from the generated files
        source_types = set((texts / "src/text/train.txt").read_text(encoding="utf-8").split())
        target_types = set((texts / f"{target}/text/train.txt").read_text(encoding="utf-8").split())
        assert float(rows[share]) == round(100 * len(target_types & source_types) / len(target_types), 1)
    assert float(rows["0.0"]) < 50.0 < float(rows["1.0"])
    assert re.search(r"sharing-raises-overlap.*inconclusive.*needs ≥ 3 seeds", report)  # one seed cannot decide
