"""`study run` with stderr going to a log: a line per finished stage and a heartbeat while stages run; none with
--quiet. Runs the toy design through the CLI, with the heartbeat every 0.25 s instead of 60."""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from mbertlab.store.artifacts import ArtifactStore
from mbertlab.studies.runner import study_status
from mbertlab.studies.spec import load_spec
from tests.studies.test_runner import REPO, write_spec

DONE = re.compile(r"toy: (toy_\w+) ([0-9a-f]{16}) \((.+)\) done in ([0-9.]+) s \((\d)/6\)")
BEAT = re.compile(r"toy: (\d)/6 stages done after [0-9.]+ s; (?:running: (.+)|no stage running \(workers exiting\))")
RUNNING = re.compile(r"(toy_\w+) ([0-9a-f]{16}) \(([^)]+)\) for [0-9.]+ s")


def study_run(tmp_path, workdir: str, *args: str, heartbeat: str = "0.25", sleep: float = 0.6):
    spec = write_spec(tmp_path / f"{workdir}.yaml", tmp_path, sleep=sleep)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)]),
           "MBERTLAB_HEARTBEAT_S": heartbeat}
    proc = subprocess.run([sys.executable, "-m", "mbertlab", "--workdir", str(tmp_path / workdir), "study", "run",
                           str(spec), *args], env=env, capture_output=True, text=True, timeout=300)
    return proc, spec


def stages(spec, workdir) -> set[tuple[str, str, str]]:
    """(kind, hash, label) of every stage, as `study status` finds them."""
    return {(s.job.kind, s.hash, s.job.label) for s in study_status(load_spec(spec), ArtifactStore(workdir))}


def test_a_line_per_finished_stage_and_a_heartbeat_naming_the_running_stage(tmp_path):
    proc, spec = study_run(tmp_path, "w", "-j", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "toy: 6 stages to build"
    done = [m.groups() for m in map(DONE.fullmatch, lines) if m]
    assert {d[:3] for d in done} == stages(spec, tmp_path / "w") and len(done) == 6
    assert [int(d[4]) for d in done] == [1, 2, 3, 4, 5, 6]
    assert all(float(d[3]) >= 0.6 for d in done)  # each stage sleeps 0.6 s
    beats = [m.groups() for m in map(BEAT.fullmatch, lines) if m]
    assert len(beats) >= 3 and len(lines) == 1 + 6 + len(beats)  # nothing else on stderr
    for count, running in (b for b in beats if b[1]):  # serial: one stage running, the one after those done
        (kind, hash_, label), = RUNNING.findall(running)
        assert (kind, hash_, label) == done[int(count)][:3]


@pytest.mark.slow  # spawns worker processes, each importing torch
def test_parallel_workers_show_every_stage_running_at_once(tmp_path):
    proc, spec = study_run(tmp_path, "w", "-j", "2", sleep=1.5)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    done = [m.groups() for m in map(DONE.fullmatch, lines) if m]
    assert {d[:3] for d in done} == stages(spec, tmp_path / "w") and [int(d[4]) for d in done] == list(range(1, 7))
    running = [RUNNING.findall(m.group(2) or "") for m in map(BEAT.fullmatch, lines) if m]
    assert max(map(len, running)) == 2  # two workers: two stages at once, never a queued one counted


def test_quiet_prints_no_progress_and_a_bad_interval_is_one_line(tmp_path):
    proc, spec = study_run(tmp_path, "w", "-j", "1", "--quiet", sleep=0.3)
    assert proc.returncode == 0 and proc.stderr == ""
    assert "6 stages complete" in proc.stdout and len(stages(spec, tmp_path / "w")) == 6
    proc, _ = study_run(tmp_path, "w2", "-j", "1", heartbeat="soon")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.strip() == "error: environment variable MBERTLAB_HEARTBEAT_S: expected seconds > 0, got 'soon'"
