"""Data-parallel ranks (gloo): under torchrun and in a study's stage their weights equal one process's on the same
global batch; each rank's slice of the loss; the process group from srun's environment."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

TINY = {"model": {"layers": 2, "hidden": 32, "heads": 2}, "batch_size": 8, "seq_len": 16, "precision": "fp32",
        "steps": 6, "checkpoint_every": 6, "warmup": 2, "eval_batches": 1}

def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_torchrun(args: list[str], env: dict[str, str]) -> None:
    """Two ranks under torchrun on a free port. A port that another process took between the probe and torchrun's
    bind (the suite runs in parallel) is tried again, at most 3 ports; any other failure shows torchrun's stderr."""
    torchrun = Path(sys.executable).with_name("torchrun")
    for _ in range(3):
        done = subprocess.run([str(torchrun), "--nproc_per_node", "2", "--master_port", str(free_port()), *args],
                              env=env, capture_output=True, text=True)
        if done.returncode == 0:
            return
        if "address already in use" not in done.stderr.lower():
            break
    pytest.fail(f"torchrun exited with {done.returncode}; its stderr ends:\n{done.stderr[-4000:]}")


def test_slices_with_global_normaliser_sum_to_the_full_batch_gradient():
    """Adam hides a wrong gradient scale, so check the scale itself: Σ_rank ∇(rank's slice) = ∇ mean, through the
    slices the loop gives each rank (`MicroBatch.shard`, masked positions found on the CPU)."""
    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.data import Batch, Masker, MicroBatch
    from mbertlab.pretrain.model import mlm_loss, new_model
    from mbertlab.pretrain.objective import MaskedLM

    torch.manual_seed(0)
    model = new_model(ModelShape(layers=1, hidden=16, heads=2), 100)
    ids = torch.randint(5, 100, (6, 12))
    inputs, labels = Masker(100, 5, 0.3)(ids, torch.Generator().manual_seed(1))
    mlm_loss(model, inputs, labels).backward()
    full = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    micro = MicroBatch(0, Batch(ids, "x"), inputs, labels)
    for rank in range(3):
        MaskedLM().loss(model, micro.shard(rank, 3)).backward()  # grads accumulate = summed
    for g, p in zip(full, model.parameters()):
        assert torch.allclose(g, p.grad, atol=1e-6)


def test_pretrain_command_under_torchrun(tmp_path, src_shards):
    """`torchrun --nproc_per_node 2 -m mbertlab pretrain` (gradients accumulated over 2 micro-batches under
    no_sync) builds one artifact equal to a single process's within 1e-5."""
    import shutil

    shards_dir = tmp_path / "w" / "shards" / "0123456789abcdef"
    shutil.copytree(src_shards, shards_dir)
    (shards_dir / "meta.json").write_text("{}")
    sets = ["--set", "steps=4", "--set", "checkpoint_every=2", "--set", "batch_size=8", "--set", "accumulation=2",
            "--set", "model.hidden=32",
            "--set", "model.layers=1", "--set", "precision=fp32"]
    cmd = ["-m", "mbertlab", "--workdir", str(tmp_path / "w"), "pretrain", "--shards", str(shards_dir), *sets]
    env = {**os.environ, "MBERTLAB_THREADS": "1"}
    run_torchrun(cmd, env)
    [built] = [p for p in (tmp_path / "w" / "pretrain").iterdir() if not p.name.startswith(".")]
    single = subprocess.run([sys.executable, *cmd[:2], "--workdir", str(tmp_path / "w1"), *cmd[4:]], check=True,
                            env=env, capture_output=True, text=True).stdout.strip().splitlines()[-1]
    a = load_file(str(built / "model" / "model.safetensors"))
    b = load_file(str(Path(single) / "model" / "model.safetensors"))
    assert Path(single).name == built.name and all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)


@pytest.mark.slow
def test_pretrain_stage_of_a_study_under_torchrun(tmp_path, src_shards):
    """A study's pretrain stage with gpus > 1 (what the SLURM executor submits): every rank builds through the
    stage, rank 0 owns the artifact, and the weights equal one process's."""
    import shutil

    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.pretrain.loop import pretrain_into
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.studies.executors import StageTask
    from mbertlab.studies.jobs import Job
    from mbertlab.studies.kinds import job_hash
    from mbertlab.tokenizers.shards import ShardsConfig

    store = ArtifactStore(tmp_path / "w")
    shards = Job("shards", ShardsConfig(languages=["src"]))
    shutil.copytree(src_shards, store.workdir / "shards" / job_hash(shards, store))
    config = PretrainConfig.model_validate({**TINY, "steps": 4, "checkpoint_every": 2})
    job = Job("pretrain", config, (shards,))
    StageTask(job, str(store.workdir), str(tmp_path / "results.db"), "t", gpus=2)()
    built = store.find("pretrain", job_hash(job, store))
    assert built is not None and (built.path / "meta.json").is_file()
    assert not list((store.workdir / "pretrain").glob(".partial-*"))
    single = tmp_path / "single"
    single.mkdir()
    pretrain_into(config, src_shards, single)
    a = load_file(str(built.path / "model" / "model.safetensors"))
    b = load_file(str(single / "model" / "model.safetensors"))
    assert all(torch.allclose(a[k], b[k], atol=1e-5) for k in a)


SRUN_TASK = """
import atexit, os
import torch
import torch.distributed as dist
from mbertlab.pretrain.distributed import world_from_env
atexit.register(lambda: print("group-left-before-teardown", not dist.is_initialized()))  # runs after mbertlab's
world = world_from_env(torch.device("cpu"))
total = world.sum(torch.tensor([world.rank + 1.0]))
print(world.rank, world.size, os.environ["MASTER_ADDR"], int(total.item()))
"""


def fake_scontrol(tmp_path, hosts: list[str]) -> dict:
    """PATH with a `scontrol` that answers `show hostnames` with `hosts`, one a line (as SLURM's does)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    tool = bin_dir / "scontrol"
    tool.write_text("#!/bin/sh\n" + "".join(f"echo {h}\n" for h in hosts))
    tool.chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}"}


def test_two_srun_tasks_on_two_nodes_form_a_group_at_the_first_node(tmp_path):
    """srun's environment alone (no torchrun: no RANK, WORLD_SIZE, MASTER_ADDR): the ranks come from SLURM_PROCID
    and SLURM_NTASKS, the master is the job's first node as `scontrol show hostnames` lists it. A script that never
    closes the group still leaves it before interpreter teardown (else gloo can end the process in SIGABRT)."""
    script = tmp_path / "task.py"
    script.write_text(SRUN_TASK)
    base = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "LOCAL_RANK")}
    base.update(fake_scontrol(tmp_path, ["localhost", "node2"]), SLURM_JOB_NODELIST="localhost,node2",
                SLURM_NTASKS="2", MASTER_PORT=str(free_port()), SLURM_LOCALID="0", MBERTLAB_THREADS="1")
    procs = [subprocess.Popen([sys.executable, str(script)], env={**base, "SLURM_PROCID": str(rank)},
                              stdout=subprocess.PIPE, text=True) for rank in (0, 1)]
    out = [p.communicate(timeout=120)[0].split() for p in procs]
    assert [p.returncode for p in procs] == [0, 0]
    assert out == [[str(r), "2", "localhost", "3", "group-left-before-teardown", "True"] for r in (0, 1)]


def test_the_master_is_the_first_node_of_the_job(tmp_path, monkeypatch):
    from mbertlab.pretrain.distributed import first_node, slurm_master

    monkeypatch.setenv("SLURM_JOB_NODELIST", "gpu[07-08]")
    monkeypatch.setenv("PATH", fake_scontrol(tmp_path, ["gpu07", "gpu08"])["PATH"])
    assert slurm_master() == "gpu07"
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))  # no SLURM tools on this host: the list is parsed
    assert slurm_master() == "gpu07"
    assert [first_node(n) for n in ("gpu[03-05,9],cpu1", "node7", "a1,b2", "x[10,2]")] == ["gpu03", "node7", "a1",
                                                                                             "x10"]
    monkeypatch.delenv("SLURM_JOB_NODELIST")
    monkeypatch.delenv("SLURM_NODELIST", raising=False)
    assert slurm_master() == "127.0.0.1"


@pytest.mark.parametrize("visible, localid, gpu", [(4, "2", 2), (1, "2", 0), (1, "0", 0)],
                         ids=["tasks share the node's GPUs", "one GPU per task", "first task"])
def test_the_local_gpu_under_srun(monkeypatch, visible, localid, gpu):
    """SLURM_LOCALID picks among the node's GPUs only when the task sees them all; with one GPU per task
    (SLURM sets CUDA_VISIBLE_DEVICES to the task's own) it is that one, GPU 0 of the task."""
    from mbertlab.runtime import local_rank

    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.setenv("SLURM_LOCALID", localid)
    assert local_rank(visible) == gpu
    monkeypatch.setenv("LOCAL_RANK", "1")  # torchrun's, when it launched the ranks
    assert local_rank(visible) == 1
