"""The study runner on a toy design: end to end, resume after SIGKILL, parallel workers, spec errors."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import run_study, study_status
from mbertlab.studies.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
TOY = "tests.studies.toydesign:toy"


def write_spec(path: Path, log_dir: Path, **settings) -> Path:
    data = {"name": "toy", "design": TOY, "description": "toy", "cells": ["a", "bb"], "seeds": [0, 1],
            "log_dir": str(log_dir), **settings}
    path.write_text(yaml.safe_dump(data))
    return path


def builds(log_dir: Path) -> list[str]:
    log = log_dir / "builds.log"
    return log.read_text().splitlines() if log.exists() else []


def context(workdir: Path) -> RunContext:
    return RunContext(ArtifactStore(workdir), ResultsDB(workdir / "results.db"), "toy")


def table_text(spec, workdir: Path) -> str:
    md, html = write_report(spec, context(workdir))
    assert html.read_text().startswith("<!doctype html>")
    return md.read_text().split("## Versions")[0]


def test_two_cells_end_to_end_and_reuse(tmp_path):
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path))
    ctx = context(tmp_path / "w")
    run_study(spec, ctx)
    assert sorted(builds(tmp_path)) == ["make a", "make bb", "score a 0", "score a 1", "score bb 0", "score bb 1"]
    assert ctx.results.count() == 4
    text = table_text(spec, tmp_path / "w")
    # cell a: values 0.1 and 0.11 -> mean 10.5 %, sample std 0.7 %
    assert "| a | 10.5 ± 0.7 |" in text and "| bb | 20.5 ± 0.7 |" in text
    run_study(spec, ctx)  # everything cached: nothing rebuilt, no duplicate rows
    assert len(builds(tmp_path)) == 6 and ctx.results.count() == 4
    assert {s.state for s in study_status(spec, ctx.store)} == {"done"}


def test_parallel_workers_build_each_job_once(tmp_path):
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, sleep=0.2))
    run_study(spec, context(tmp_path / "w"), jobs=2)
    assert sorted(builds(tmp_path)) == ["make a", "make bb", "score a 0", "score a 1", "score bb 0", "score bb 1"]
    serial = tmp_path / "serial"
    serial.mkdir()
    spec_serial = load_spec(write_spec(tmp_path / "toy2.yaml", tmp_path / "serial", sleep=0.2))
    run_study(spec_serial, context(tmp_path / "w2"))
    assert table_text(spec, tmp_path / "w").replace(str(tmp_path / "serial"), str(tmp_path)) == \
        table_text(spec_serial, tmp_path / "w2").replace(str(tmp_path / "serial"), str(tmp_path))


def test_workers_import_the_users_design_module(tmp_path):
    """What a user's design module registers on import (a word map here; a task alike) exists in the spawned
    workers, although the stage's builder lives in another module."""
    path = write_spec(tmp_path / "toy.yaml", tmp_path, spell="toy-shout")
    path.write_text(path.read_text().replace(TOY, "tests.studies.toyextension:toy"))
    run_study(load_spec(path), context(tmp_path / "w"), jobs=2)
    assert sorted(b for b in builds(tmp_path) if b.startswith("make")) == ["make A", "make BB"]


def children(pid: int) -> list[int]:
    """Processes whose parent is `pid` (from /proc, so no procps is needed)."""
    out = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(stat.parent.name))
    return out


def alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"


@pytest.mark.slow
def test_sigkill_mid_study_then_rerun(tmp_path):
    spec_path = write_spec(tmp_path / "toy.yaml", tmp_path, sleep=1.0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}  # this checkout first
    cmd = [sys.executable, "-m", "mbertlab", "--workdir", str(tmp_path / "w"), "study", "run", str(spec_path)]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while len(builds(tmp_path)) < 2 and time.time() < deadline:
        time.sleep(0.05)
    workers = children(proc.pid)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    deadline = time.time() + 10
    while any(alive(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert workers and not any(alive(pid) for pid in workers)  # the workers died with the runner
    before = builds(tmp_path)
    status = study_status(load_spec(spec_path), ArtifactStore(tmp_path / "w"))
    complete = [s.job.label for s in status if s.state == "done"]
    assert 2 <= len(before) < 6 and len(complete) < 6
    # a build killed after its log line but before its rename into place is incomplete and is redone
    assert set(complete) <= set(before) and len(before) - len(complete) <= 1
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    after = builds(tmp_path)
    assert after[: len(before)] == before
    everything = ["make a", "make bb", "score a 0", "score a 1", "score bb 0", "score bb 1"]
    assert sorted(after[len(before):]) == sorted(set(everything) - set(complete))  # nothing complete built again
    reference = tmp_path / "ref"
    reference.mkdir()
    spec_ref = load_spec(write_spec(tmp_path / "ref.yaml", reference))
    run_study(spec_ref, context(tmp_path / "w_ref"))
    spec = load_spec(spec_path)
    assert table_text(spec, tmp_path / "w") == table_text(spec_ref, tmp_path / "w_ref")


def run_command(tmp_path: Path, sleep: float, jobs: int) -> tuple[list[str], dict]:
    """`mbertlab study run` of the toy spec as a process (command, environment: this checkout first)."""
    spec_path = write_spec(tmp_path / "toy.yaml", tmp_path, sleep=sleep)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    return [sys.executable, "-m", "mbertlab", "--workdir", str(tmp_path / "w"), "study", "run", str(spec_path),
            "--jobs", str(jobs), "--no-report"], env


def test_a_run_logs_the_commit_it_started_from(tmp_path, monkeypatch):
    """The run line's commit is the code the run imported: a commit made while it runs (HEAD moves) is not it."""
    import json

    from mbertlab.studies import runner

    commits = iter(["started-here", "moved-on"])
    monkeypatch.setattr(runner, "environment_info", lambda: {"host": "h", "git_commit": next(commits, "moved-on")})
    run_study(load_spec(write_spec(tmp_path / "toy.yaml", tmp_path)), context(tmp_path / "w"))
    (line,) = [json.loads(l) for l in (tmp_path / "w" / "runs.jsonl").read_text().splitlines()]
    assert line["commit"] == "started-here" and line["host"] == "h"


def test_a_terminated_run_and_its_resumption_are_logged_as_parts(tmp_path):
    """runs.jsonl (what a committed run record sums): a SIGTERM-ed `study run` logs its part as incomplete with the
    stages it built; the rerun that finishes logs the rest, complete."""
    import json

    cmd, env = run_command(tmp_path, sleep=1.0, jobs=1)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while len(builds(tmp_path)) < 3 and time.time() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=30)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    first, second = [json.loads(line) for line in (tmp_path / "w" / "runs.jsonl").read_text().splitlines()]
    assert first["complete"] is False and 1 <= first["stages_built"] < 6 and first["wall_s"] >= 1.0
    assert second["complete"] is True and first["stages_built"] + second["stages_built"] == 6
    assert {first["study"], second["study"]} == {"toy"} and first["stages"] == second["stages"] == 6


def test_a_terminated_parallel_run_stops_its_workers_and_logs_at_once(tmp_path):
    """With --jobs 2 a SIGTERM-ed run stops the stages its workers are building (a resumed run rebuilds them)
    instead of waiting for them to finish, and logs its part: a 30-second stage does not hold it up."""
    import json

    cmd, env = run_command(tmp_path, sleep=30.0, jobs=2)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while not list((tmp_path / "w").glob("*/.partial-*")) and time.time() < deadline:  # a stage is building
        time.sleep(0.05)
    workers = children(proc.pid)
    started = time.time()
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=20)
    finally:  # a run that does not stop is not left behind
        proc.kill()
    assert time.time() - started < 15 and not builds(tmp_path)  # no stage ran its 30 s out
    deadline = time.time() + 10  # the pool's resource tracker leaves once the runner has gone
    while any(alive(pid) for pid in workers) and time.time() < deadline:
        time.sleep(0.05)
    assert not any(alive(pid) for pid in workers)
    (line,) = [json.loads(l) for l in (tmp_path / "w" / "runs.jsonl").read_text().splitlines()]
    assert line["complete"] is False and line["stages_built"] == 0 and line["jobs"] == 2


@pytest.mark.skipif(not Path("/proc/self/stat").exists(),
                    reason="a run reads its unreaped workers' CPU from /proc, which only Linux has "
                           "(elsewhere it counts reaped workers only)")
def test_run_cpu_counts_workers_not_yet_reaped():
    """An interrupted run logs its CPU before its workers are waited for: a busy child still running counts (getrusage
    alone would miss it), and once reaped it counts once."""
    from mbertlab.studies.runner import _cpu_seconds

    before = _cpu_seconds()
    child = subprocess.Popen([sys.executable, "-c", "import time\nt = time.process_time()\n"
                              "while time.process_time() - t < 1.0: pass\ntime.sleep(60)"])
    try:
        deadline = time.time() + 30
        while _cpu_seconds() - before < 1.0 and time.time() < deadline:
            time.sleep(0.1)
        alive = _cpu_seconds() - before
        assert alive >= 1.0 and child.poll() is None
    finally:
        child.kill()
        child.wait()
    assert _cpu_seconds() - before == pytest.approx(alive, abs=0.5)  # reaped: counted by getrusage, not twice


def test_invalid_spec_reports_every_problem_and_runs_nothing(tmp_path):
    path = write_spec(tmp_path / "toy.yaml", tmp_path, colour="red", seeds="zero")
    with pytest.raises(ConfigError) as err:
        load_spec(path)
    lines = str(err.value).splitlines()
    assert any("'colour'" in l and "unknown key" in l for l in lines)
    assert any("'seeds'" in l for l in lines)
    assert all(str(path) in l for l in lines)
    assert not (tmp_path / "w").exists()


def test_include_and_scales(tmp_path):
    base = write_spec(tmp_path / "base.yaml", tmp_path, scales={"test": {"cells": ["z"]}})
    child = tmp_path / "child.yaml"
    child.write_text(yaml.safe_dump({"include": "base.yaml", "name": "child", "seeds": [3]}))
    lab = load_spec(child)
    assert lab.name == "child" and lab.settings.seeds == [3] and lab.settings.cells == ["a", "bb"]
    assert load_spec(child, scale="test").settings.cells == ["z"]
    assert load_spec(child, overrides=["seeds=[4, 5]"]).settings.seeds == [4, 5]
    with pytest.raises(ConfigError, match="scale"):
        load_spec(base, scale="huge")


def test_deep_merge_replaces_a_mapping_whose_kind_changes():
    from mbertlab.config import deep_merge

    base = {"data": {"kind": "generated", "seed": 1, "set": {"x": 1}}, "seeds": [0]}
    assert deep_merge(base, {"data": {"kind": "files", "root": "."}}) == {
        "data": {"kind": "files", "root": "."}, "seeds": [0]}
    assert deep_merge(base, {"data": {"seed": 2}})["data"] == {"kind": "generated", "seed": 2, "set": {"x": 1}}
    assert deep_merge({"data": {"seed": 1}}, {"data": {"kind": "files"}})["data"] == {"kind": "files"}


def test_the_longest_remaining_chain_is_started_first():
    """A later seed's pretraining outranks the earlier seeds' ready fine-tunings: its chain (pretraining, then a
    fine-tuning) costs more than any of theirs; a built job adds nothing to the chains through it."""
    from mbertlab.studies.jobs import Job
    from mbertlab.studies.kinds import stage_kind
    from mbertlab.studies.runner import JobStatus, critical_path
    from tests.studies.toydesign import MakeConfig

    def job(kind, name, *inputs):
        return Job(kind, MakeConfig(cell=name, log_dir="", sleep=0.0), tuple(inputs))

    data = job("generate", "data")
    first = job("pretrain", "seed 0", data)
    tunings = [job("transfer", f"seed 0 task {i}", first) for i in range(3)]
    second = job("pretrain", "seed 1", data)
    order = [data, first, *tunings, second, job("transfer", "seed 1 task 0", second)]
    statuses = [JobStatus(j, "x", "h", "done" if j in (data, first) else "missing") for j in order]
    cost = critical_path(statuses)
    pretrain, transfer = stage_kind("pretrain").weight, stage_kind("transfer").weight
    assert cost[second] == pretrain + transfer > cost[tunings[0]] == transfer
    assert cost[data] == cost[second] and cost[first] == transfer  # done: only the chains below count
    ready = [s for s in statuses if s.state == "missing" and set(s.job.inputs) <= {data, first}]
    assert [s.job for s in sorted(ready, key=lambda s: -cost[s.job])][0] == second


@pytest.mark.parametrize("name", ["quick", "k2020", "wd2019", "wd2020", "liu2020", "lms2023"])
def test_each_stage_has_its_own_label(name):
    """Progress lines, `study status` and a SLURM submission's summary name stages by label: wd2020's 33
    encoders were all 'pretrain  seed N', liu2020's twelve word2vec runs 'static word2vec_sg src+same', wd2019's
    in-language fine-tunings one label for six languages. Each is told apart by what differs, never a count."""
    import re

    from mbertlab.studies.runner import study_jobs
    from mbertlab.studies.spec import load_spec

    for scale in ("test", "lab", "paper") if name != "quick" else ("test", "lab", "gpu"):
        labels = [job.label for job in study_jobs(load_spec(name, scale))]
        assert len(set(labels)) == len(labels), scale
        assert not [label for label in labels if "  " in label or re.search(r"\(\d+ of \d+\)$", label)], scale


def test_distinct_labels_name_what_tells_jobs_apart():
    """Tags before config fields, the fewest that separate; inputs carry their new labels; a count as last
    resort. Compared with labels written out by hand."""
    from mbertlab.studies.jobs import Job, distinct_labels
    from mbertlab.tokenizers.shards import ShardsConfig

    def shards(languages, label, tags=()):
        return Job("shards", ShardsConfig(languages=languages), label=label, tags=tags)

    a = shards(["en"], "shards", (("lang", "en"), ("seed", "0")))
    b = shards(["de"], "shards", (("lang", "de"), ("seed", "0")))
    c = shards(["fr"], "other")
    d, e = (Job("probe", ShardsConfig(languages=["x"]), (dep,), label="probe") for dep in (a, b))
    f, g = shards(["x", "y"], "twin"), shards(["y", "x"], "twin")
    jobs = distinct_labels([a, b, c, d, e])
    assert [j.label for j in jobs] == ["shards (lang en)", "shards (lang de)", "other", "probe (lang en)",
                                       "probe (lang de)"]  # the inputs' tags
    assert jobs[3].inputs[0].label == "shards (lang en)" and jobs == [a, b, c, d, e]  # identity kept
    assert [j.label for j in distinct_labels([f, g])] == ["twin (languages x,y)", "twin (languages y,x)"]
    h, i = (Job("probe", ShardsConfig(languages=["z"]), (dep,), label="same") for dep in (c, shards(["q"], "else")))
    assert [j.label for j in distinct_labels([c, h, i])][1:] == ["same (input 0 other)", "same (input 0 else)"]
    j, k = (Job("probe", ShardsConfig(languages=["z"]), (dep,), label="same") for dep in (c, shards(["q"], "other")))
    assert [j.label for j in distinct_labels([j, k])] == ["same (1 of 2)", "same (2 of 2)"]
