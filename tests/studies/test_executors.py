"""Executors: local --jobs, submitit's local executor (real subprocesses), and SLURM through fake
sbatch/squeue/scancel/srun scripts that record what was submitted."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from mbertlab.errors import ConfigError
from mbertlab.studies.executors import (
    Resources,
    execute,
    parse_resources,
    resources_for,
    submit_study,
    torchrun_command,
)
from mbertlab.studies.designs import get_design
from mbertlab.studies.kinds import BUILTIN_STAGE_KINDS
from mbertlab.studies.runner import run_study, study_status
from mbertlab.studies.spec import load_spec
from tests.studies.test_runner import REPO, builds, context, table_text, write_spec

ALL_BUILDS = ["make a", "make bb", "score a 0", "score a 1", "score bb 0", "score bb 1"]
FAKES = {
    "sbatch": 'n=$(( $(cat "$D/counter" 2>/dev/null || echo 0) + 1 )); echo $n > "$D/counter"\n'
              '{ echo "=== $n"; cat "$1"; } >> "$D/sbatch.log"; echo "Submitted batch job $n"',
    "squeue": 'echo "$*" >> "$D/squeue.log"; cat "$D/queue.txt" 2>/dev/null; exit 0',
    "scancel": 'echo "$*" >> "$D/scancel.log"',
    "sacct": "exit 0",
    "srun": "exit 0",
}


@pytest.fixture
def fake_slurm(tmp_path, monkeypatch) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in FAKES.items():
        path = bin_dir / name
        path.write_text(f'#!/bin/sh\nD="{bin_dir}"\n{body}\n')
        path.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return bin_dir


def submissions(bin_dir: Path) -> list[dict[str, str]]:
    """Each sbatch call: its job id and the #SBATCH flags of its script."""
    log = bin_dir / "sbatch.log"
    out = []
    for chunk in log.read_text().split("=== ")[1:] if log.exists() else []:
        head, script = chunk.split("\n", 1)
        flags = dict(re.findall(r"^#SBATCH --([\w-]+)=?(.*)$", script, re.MULTILINE))
        out.append({"id": head.strip(), **flags})
    return out


RESOURCES = {"default": {"cpus": 2, "time_min": 5}, "toy_score": {"time_min": 7, "sbatch": {"account": "lab"}}}


def toy(tmp_path, **settings):
    return load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, resources=RESOURCES, **settings))


def test_slurm_submits_each_stage_once_with_afterok(tmp_path, fake_slurm):
    spec, ctx = toy(tmp_path), context(tmp_path / "w")
    result = submit_study(spec, ctx, "slurm")
    subs = submissions(fake_slurm)
    assert [s["job-name"] for s in subs] == ["toy:toy_make", "toy:toy_score"]
    make, score = subs
    assert make["array"] == "0-1%2" and "dependency" not in make and make["time"] == "5"
    assert make["cpus-per-task"] == "2" and "account" not in make
    assert score["array"] == "0-3%4" and score["dependency"] == "afterok:1_0:1_1"
    assert score["time"] == "7" and score["account"] == "lab" and score["cpus-per-task"] == "2"
    assert result.submitted == {"make a": "1_0", "make bb": "1_1", "score a 0": "2_0", "score a 1": "2_1",
                                "score bb 0": "2_2", "score bb 1": "2_3"}
    assert builds(tmp_path) == []  # nothing ran here
    # every job still queued: a rerun submits nothing
    (fake_slurm / "queue.txt").write_text("".join(f"{i} PENDING\n" for i in result.submitted.values()))
    again = submit_study(spec, ctx, "slurm")
    assert len(submissions(fake_slurm)) == 2 and len(again.kept) == 6 and not again.submitted


@pytest.mark.parametrize("failed, expected", [
    ("make bb", [("make bb", None), ("score bb 0,score bb 1", "afterok:3")]),
    ("score a 1", [("score a 1", None)]),
])
def test_rerun_after_a_failure_resubmits_it_and_its_dependants(tmp_path, fake_slurm, failed,
                                                               expected):
    spec, ctx = toy(tmp_path), context(tmp_path / "w")
    first = submit_study(spec, ctx, "slurm")
    run_study(spec, ctx)  # the jobs "ran"; now one failed, so its dependants never ran
    statuses = study_status(spec, ctx.store)
    lost = {failed} | {s.job.label for s in statuses if any(i.label == failed for i in s.job.inputs)}
    for st in statuses:
        if st.job.label in lost:
            shutil.rmtree(ctx.store.find(st.stage, st.hash).path)
    stuck = [first.submitted[l] for l in sorted(lost - {failed})]  # left pending: DependencyNeverSatisfied
    (fake_slurm / "queue.txt").write_text("".join(f"{i} PENDING\n" for i in stuck))
    rerun = submit_study(spec, ctx, "slurm")
    subs = submissions(fake_slurm)[2:]
    assert sorted(rerun.submitted) == sorted(lost) and rerun.cancelled == stuck
    got = [(",".join(l for l, i in rerun.submitted.items() if i.split("_")[0] == s["id"]), s.get("dependency"))
           for s in subs]
    assert got == expected
    log = fake_slurm / "scancel.log"
    assert (log.read_text().split() if log.exists() else []) == stuck


def test_a_running_stage_is_not_resubmitted(tmp_path, fake_slurm):
    spec, ctx = toy(tmp_path), context(tmp_path / "w")
    first = submit_study(spec, ctx, "slurm")
    (fake_slurm / "queue.txt").write_text(f"{first.submitted['make bb']} RUNNING\n"
                                          + "".join(f"{first.submitted[f'score bb {s}']} PENDING\n" for s in (0, 1)))
    run_study(load_spec(write_spec(tmp_path / "a.yaml", tmp_path, cells=["a"])), ctx)  # cell a finished
    rerun = submit_study(spec, ctx, "slurm")
    assert not rerun.submitted and not rerun.cancelled and len(rerun.kept) == 3
    assert len(submissions(fake_slurm)) == 2


def test_gpu_stages_and_torchrun(tmp_path, fake_slurm):
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, cells=["a"], seeds=[0],
                                resources={"toy_make": {"gpus": 2, "mem_gb": 16, "partition": "gpu"}}))
    submit_study(spec, context(tmp_path / "w"), "slurm")
    make, score = submissions(fake_slurm)
    assert make["gpus-per-node"] == "2" and make["mem"] == "16GB" and make["partition"] == "gpu"
    assert "array" not in make and score["dependency"] == "afterok:1" and "gpus-per-node" not in score
    cmd = torchrun_command(Path("/x/p.pkl"), 4)
    assert cmd[1:] == ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node=4",
                       "-m", "mbertlab.studies.executors", "/x/p.pkl"]


def test_two_nodes_with_one_gpu_per_task(tmp_path, fake_slurm, monkeypatch):
    """`nodes: 2, gpus: 2`: one sbatch job of 2 nodes x 2 tasks, each task with its own GPU (srun starts the ranks,
    no torchrun); each task then builds the stage in place (its rank from SLURM's environment)."""
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, cells=["a"], seeds=[0],
                                resources={"toy_make": {"gpus": 2, "nodes": 2, "partition": "gpu"}}))
    submit_study(spec, context(tmp_path / "w"), "slurm")
    make, score = submissions(fake_slurm)
    assert (make["nodes"], make["ntasks-per-node"], make["gpus-per-task"]) == ("2", "2", "1")
    assert "gpus-per-node" not in make and score.get("nodes", "1") == "1" and "gpus-per-task" not in score
    monkeypatch.setattr("mbertlab.studies.executors.torchrun_command", lambda *a: pytest.fail("srun starts the ranks"))
    monkeypatch.setenv("SLURM_PROCID", "0")
    [task] = [t for t in pickled_tasks(tmp_path / "w") if t.job.kind == "toy_make"]
    assert task.nodes == 2 and Path(task()).parent.name == "toy_make"  # the artifact itself, not a payload


def pickled_tasks(workdir: Path) -> list:
    """The StageTasks submitit pickled for the submitted jobs."""
    import pickle

    return [pickle.loads(p.read_bytes()).args[0] for p in (workdir / "slurm").rglob("*_submitted.pkl")]


def test_nodes_only_for_stages_that_split_over_ranks():
    with pytest.raises(ConfigError, match="s.yaml: key 'resources.toy_score.nodes': 2 asked"):
        parse_resources({"default": {"cpus": 2}, "toy_score": {"nodes": 2}}, "s.yaml")
    table = parse_resources({"default": {"gpus": 2, "nodes": 2}}, "s.yaml")
    assert resources_for("toy_make", table).nodes == 2 and resources_for("toy_score", table).nodes == 1


def test_resources_parse():
    table = parse_resources({"default": {"cpus": 4, "time_min": 30}, "toy_make": {"gpus": 1}}, "s.yaml")
    assert table["toy_make"] == Resources(gpus=1, cpus=4, time_min=30)
    assert parse_resources(None, "s.yaml")["default"] == Resources()
    with pytest.raises(ConfigError, match="unknown stage kind.*pretrian"):
        parse_resources({"pretrian": {"gpus": 1}}, "s.yaml")
    with pytest.raises(ConfigError, match="resources.default"):
        parse_resources({"default": {"gpu": 1}}, "s.yaml")


# every stage kind that loads or trains an encoder, written out here rather than read from the kinds table
RUNS_A_MODEL = {"pretrain", "student", "transfer", "retrieval", "langid", "balance", "word_retrieval",
                "wd2020_checkpoint"}


def test_default_gpus_reach_only_the_kinds_that_run_a_model():
    kinds = [*BUILTIN_STAGE_KINDS, *get_design("wd2020").stage_kinds]  # a paper's own kinds too, once loaded
    table = parse_resources({"default": {"gpus": 4, "cpus": 8}}, "s.yaml")
    got = {kind: resources_for(kind, table).gpus for kind in kinds}
    assert got == {kind: 4 if kind == "pretrain" else 1 if kind in RUNS_A_MODEL else 0 for kind in got}
    assert {resources_for(kind, table).cpus for kind in kinds} == {8}
    own = parse_resources({"default": {"gpus": 1}, "transfer": {"gpus": 0}}, "s.yaml")
    assert resources_for("transfer", own).gpus == 0 and resources_for("langid", own).gpus == 1


@pytest.mark.parametrize("kind, gpus, why", [("corpus", 1, "at most 0 .it runs no model"),
                                             ("transfer", 2, "at most 1 .only pretrain[, a-z_]* split over torchrun"),
                                             ("student", 4, "at most 1")])
def test_a_kind_asking_for_gpus_it_cannot_use_is_an_error(kind, gpus, why):
    with pytest.raises(ConfigError, match=f"s.yaml: key 'resources.{kind}.gpus': {gpus} asked.*{why}"):
        parse_resources({"default": {"cpus": 2}, kind: {"gpus": gpus}}, "s.yaml")


def test_slurm_asks_gpus_for_model_stages_only(tmp_path, fake_slurm):
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, cells=["a"], seeds=[0],
                                resources={"default": {"gpus": 1, "cpus": 2}}))
    submit_study(spec, context(tmp_path / "w"), "slurm")
    make, score = submissions(fake_slurm)
    assert make["job-name"] == "toy:toy_make" and make["gpus-per-node"] == "1"
    assert score["job-name"] == "toy:toy_score" and "gpus-per-node" not in score and "gres" not in score


@pytest.mark.slow
def test_a_multi_gpu_stage_runs_under_torchrun(tmp_path, monkeypatch):
    """submitit's local executor with 2 'GPUs' (CUDA_VISIBLE_DEVICES=0,1, none present): the pretraining
    stand-in runs as two torchrun ranks on the CPU, the store's lock lets one of them build it."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "src"), str(REPO)]))
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, cells=["a"], seeds=[0],
                                resources={"default": {"gpus": 2}}))
    assert execute(spec, context(tmp_path / "w"), "submitit-local").startswith("2 stages submitted")
    assert builds(tmp_path) == ["make a", "score a 0"]
    assert sorted((tmp_path / "ranks.log").read_text().splitlines()) == ["rank 0 of 2", "rank 1 of 2"]
    assert len(list((tmp_path / "w" / "slurm" / "payloads").glob("*.pkl"))) == 1


def test_submitit_local_executor_runs_the_study_in_subprocesses(tmp_path, monkeypatch):
    # the toy design lives in the tests package; src first, so the subprocesses run this checkout's package
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(REPO / "src"), str(REPO)]))
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path))
    summary = execute(spec, context(tmp_path / "w"), "submitit-local")
    assert summary.startswith("6 stages submitted in 2 job arrays")
    assert sorted(builds(tmp_path)) == ALL_BUILDS
    assert {s.state for s in study_status(spec, context(tmp_path / "w").store)} == {"done"}
    ref = tmp_path / "ref"
    ref.mkdir()
    spec_ref = load_spec(write_spec(tmp_path / "ref.yaml", ref))
    execute(spec_ref, context(tmp_path / "w_ref"), "local", jobs=1)
    assert table_text(spec, tmp_path / "w") == table_text(spec_ref, tmp_path / "w_ref").replace(str(ref), str(tmp_path))


def test_local_jobs_2_builds_each_artifact_once(tmp_path):
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, sleep=0.2))
    execute(spec, context(tmp_path / "w"), "local", jobs=2)
    metas = sorted(p.parent.parent.name for p in (tmp_path / "w").glob("*/*/meta.json"))
    assert metas == ["toy_make"] * 2 + ["toy_score"] * 4 and sorted(builds(tmp_path)) == ALL_BUILDS
    one = tmp_path / "one"
    one.mkdir()
    spec_one = load_spec(write_spec(tmp_path / "one.yaml", one, sleep=0.2))
    execute(spec_one, context(tmp_path / "w1"), "local", jobs=1)
    assert table_text(spec, tmp_path / "w") == table_text(spec_one, tmp_path / "w1").replace(str(one), str(tmp_path))


def test_cli_run_with_the_slurm_executor(tmp_path, fake_slurm, capsys):
    from mbertlab.cli.main import run

    spec = write_spec(tmp_path / "toy.yaml", tmp_path, resources=RESOURCES)
    args = ["--workdir", str(tmp_path / "w"), "study", "run", str(spec)]
    assert run(args + ["--executor", "slurm", "--jobs", "3"]) == 0
    assert "6 stages submitted in 2 job arrays" in capsys.readouterr().out
    assert [s["array"] for s in submissions(fake_slurm)] == ["0-1%2", "0-3%3"]
    assert not (tmp_path / "w" / "reports").exists()  # nothing has run yet: no report
    assert run(args + ["--executor", "pbs"]) == 1
    assert "local, slurm, submitit-local" in capsys.readouterr().err
