"""The artifact store: atomic builds, reuse, one builder across processes, kills leave nothing complete."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mbertlab.config import Config
from mbertlab.store.artifacts import ArtifactStore

BUILDER = """
import sys, time
from pathlib import Path
from mbertlab.config import Config
from mbertlab.store.artifacts import ArtifactStore

class C(Config):
    name: str
    seed: int = 0

workdir, log, sleep = sys.argv[1], Path(sys.argv[2]), float(sys.argv[3])

def build(out):
    with open(log, "a") as f:
        f.write("start\\n")
    (out / "part1.txt").write_text("half")
    time.sleep(sleep)
    (out / "part2.txt").write_text("done")

a = ArtifactStore(workdir).build("demo", C(name="x"), build)
print(a.hash)
"""


class C(Config):
    name: str
    seed: int = 0


def run_builder(tmp_path: Path, sleep: float) -> subprocess.Popen:
    script = tmp_path / "builder.py"
    script.write_text(BUILDER)
    return subprocess.Popen([sys.executable, str(script), str(tmp_path / "w"), str(tmp_path / "log.txt"), str(sleep)],
                            stdout=subprocess.PIPE, text=True)


def complete_dirs(workdir: Path) -> list[Path]:
    stage = workdir / "demo"
    return [p for p in stage.iterdir() if not p.name.startswith(".")] if stage.is_dir() else []


@pytest.mark.slow
def test_sigkill_leaves_nothing_complete_and_rerun_builds(tmp_path):
    proc = run_builder(tmp_path, 30)
    deadline = time.time() + 30
    while not (tmp_path / "log.txt").exists() and time.time() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert complete_dirs(tmp_path / "w") == []
    rerun = run_builder(tmp_path, 0)
    out, _ = rerun.communicate(timeout=60)
    [done] = complete_dirs(tmp_path / "w")
    assert done.name == out.strip() and (done / "part2.txt").read_text() == "done"
    assert not any(p.name.startswith(".partial") for p in (tmp_path / "w" / "demo").iterdir())


def test_two_concurrent_builders_build_once(tmp_path):
    procs = [run_builder(tmp_path, 1.0) for _ in range(2)]
    hashes = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert len(hashes) == 1
    assert (tmp_path / "log.txt").read_text().count("start") == 1
    assert len(complete_dirs(tmp_path / "w")) == 1


def test_reuse_and_hash_changes(tmp_path):
    store = ArtifactStore(tmp_path)
    calls = []

    def build(out):
        calls.append(out)
        (out / "x").write_text("1")

    a = store.build("s", C(name="a"), build)
    b = store.build("s", C(name="a"), build)
    assert a == b and a.fresh and not b.fresh and len(calls) == 1
    c = store.build("s", C(name="a", seed=1), build)
    d = store.build("s", C(name="a"), build, inputs=[c])
    assert len({a.hash, c.hash, d.hash}) == 3
    meta = a.meta
    assert meta["seed"] == 0 and "torch" in meta["versions"] and meta["finished"] >= meta["started"] and meta["host"]
    assert json.loads((a.path / "config.json").read_text()) == {"name": "a", "seed": 0}


def test_hash_stable_across_processes(tmp_path):
    here = ArtifactStore(tmp_path).hash_for("s", C(name="a"))
    code = ("from mbertlab.config import Config\nfrom mbertlab.store.artifacts import ArtifactStore\n"
            "class C(Config):\n    name: str\n    seed: int = 0\n"
            f"print(ArtifactStore({str(tmp_path)!r}).hash_for('s', C(name='a')))")
    there = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert here == there


def test_failed_builder_leaves_nothing_and_resumable_keeps_partial(tmp_path):
    store = ArtifactStore(tmp_path)

    def fail(out):
        (out / "x").write_text("1")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        store.build("s", C(name="a"), fail)
    assert [p.name for p in (tmp_path / "s").iterdir() if p.name != ".locks"] == []
    with pytest.raises(RuntimeError):
        store.build("s", C(name="b"), fail, resumable=True)
    [partial] = [p for p in (tmp_path / "s").iterdir() if p.name.startswith(".partial")]
    seen = []
    store.build("s", C(name="b"), lambda out: seen.append((out / "x").read_text()), resumable=True)
    assert seen == ["1"]
