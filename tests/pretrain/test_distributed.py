"""Two data-parallel processes (gloo) end with the weights of one process on the same global batch."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest
import torch
from safetensors.torch import load_file

TINY = {"model": {"layers": 2, "hidden": 32, "heads": 2}, "batch_size": 8, "seq_len": 16, "precision": "fp32",
        "steps": 6, "checkpoint_every": 6, "warmup": 2, "eval_batches": 1}

RUN = """
import sys, json
from pathlib import Path
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.loop import pretrain_into
pretrain_into(PretrainConfig.model_validate(json.loads(sys.argv[1])), Path(sys.argv[2]), Path(sys.argv[3]))
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_ranks_equal_one_process(tmp_path, src_shards):
    script = tmp_path / "run.py"
    script.write_text(RUN)
    config = json.dumps(TINY)
    single, ddp = tmp_path / "single", tmp_path / "ddp"
    single.mkdir()
    ddp.mkdir()
    subprocess.run([sys.executable, str(script), config, str(src_shards), str(single)], check=True)
    port = str(free_port())
    procs = []
    for rank in range(2):
        env = {**os.environ, "RANK": str(rank), "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": port,
               "MBERTLAB_THREADS": "1"}
        procs.append(subprocess.Popen([sys.executable, str(script), config, str(src_shards), str(ddp)], env=env))
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    a = load_file(str(single / "model" / "model.safetensors"))
    b = load_file(str(ddp / "model" / "model.safetensors"))
    assert a.keys() == b.keys()
    for key in a:
        assert torch.allclose(a[key], b[key], atol=1e-5), key


def test_slices_with_global_normaliser_sum_to_the_full_batch_gradient():
    """Adam hides a wrong gradient scale, so check the scale itself: Σ_rank ∇(sum_r / N) = ∇ mean."""
    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.data import IGNORE, Masker
    from mbertlab.pretrain.distributed import World
    from mbertlab.pretrain.model import mlm_loss, new_model

    torch.manual_seed(0)
    model = new_model(ModelShape(layers=1, hidden=16, heads=2), 100)
    ids = torch.randint(5, 100, (6, 12))
    inputs, labels = Masker(100, 5, 0.3)(ids, torch.Generator().manual_seed(1))
    mlm_loss(model, inputs, labels).backward()
    full = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    n = int((labels != IGNORE).sum())
    for rank in range(3):
        world = World(rank, 3)
        mlm_loss(model, world.shard(inputs), world.shard(labels), n).backward()  # grads accumulate = summed
    for g, p in zip(full, model.parameters()):
        assert torch.allclose(g, p.grad, atol=1e-6)


def test_pretrain_command_under_torchrun(tmp_path, src_shards):
    """`torchrun --nproc_per_node 2 -m mbertlab pretrain` builds one artifact equal to a single process's."""
    import shutil
    from pathlib import Path

    torchrun = Path(sys.executable).with_name("torchrun")
    shards_dir = tmp_path / "w" / "shards" / "0123456789abcdef"
    shutil.copytree(src_shards, shards_dir)
    (shards_dir / "meta.json").write_text("{}")
    sets = ["--set", "steps=4", "--set", "checkpoint_every=2", "--set", "batch_size=8", "--set", "model.hidden=32",
            "--set", "model.layers=1", "--set", "precision=fp32"]
    cmd = ["-m", "mbertlab", "--workdir", str(tmp_path / "w"), "pretrain", "--shards", str(shards_dir), *sets]
    env = {**os.environ, "MBERTLAB_THREADS": "1"}
    subprocess.run([str(torchrun), "--nproc_per_node", "2", "--master_port", str(free_port()), *cmd], check=True,
                   env=env, capture_output=True)
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
