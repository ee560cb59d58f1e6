"""DistributedDataParallel on the CPU: two gloo ranks of `mbertlab pretrain` against one process at the same global
batch, a SIGKILL and a resume, a rerun over the finished artifact, and a rank that dies or hangs."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file

from tests.pretrain.test_distributed import free_port

SETS = {"steps": 6, "checkpoint_every": 2, "batch_size": 8, "accumulation": 2, "seq_len": 16, "warmup": 2,
        "model.hidden": 32, "model.layers": 1, "model.heads": 2, "precision": "fp32",
        "eval_batches": 1, "log_every": 1}
# A rank run through the CLI, after an optional patch: rank 0 SIGKILLs itself right after its step-N checkpoint
# (a kill at a known point), or a rank sleeps in its N-th optimiser step (a hung rank).
CLI = """
import os, signal, sys, time
kill, hang = int(os.environ.get("TEST_KILL_AFTER", 0)), int(os.environ.get("TEST_HANG_AT", 0))
if kill and os.environ["RANK"] == "0":
    import mbertlab.pretrain.loop as loop
    save = loop.save_checkpoint
    def save_then_die(out, model, opt, state, *rest):
        save(out, model, opt, state, *rest)
        if state.step == kill:
            os.kill(os.getpid(), signal.SIGKILL)
    loop.save_checkpoint = save_then_die
if hang and os.environ["RANK"] == "1":
    import torch
    step = torch.optim.AdamW.step
    calls = []
    def slow(self, *a, **k):
        calls.append(1)
        if len(calls) == hang:
            time.sleep(20)
        return step(self, *a, **k)
    torch.optim.AdamW.step = slow
from mbertlab.cli.main import main
sys.argv = ["mbertlab", *sys.argv[1:]]
main()
"""


@pytest.fixture(scope="module")
def store(tmp_path_factory, src_shards) -> Path:
    """A workdir holding the test shards as a shards artifact."""
    root = tmp_path_factory.mktemp("ddp")
    shards = root / "w" / "shards" / "0123456789abcdef"
    shutil.copytree(src_shards, shards)
    (shards / "meta.json").write_text("{}")
    (root / "cli.py").write_text(CLI)
    return root


def command(root: Path, workdir: str, **extra) -> list[str]:
    sets = [a for k, v in {**SETS, **extra}.items() for a in ("--set", f"{k}={v}")]
    return [sys.executable, str(root / "cli.py"), "--workdir", str(root / workdir), "pretrain", "--shards",
            str(root / "w" / "shards" / "0123456789abcdef"), *sets]


def ranks(root: Path, workdir: str, env: dict | None = None, timeout: float = 300, **extra) -> list:
    """Two gloo ranks (as torchrun would start them: RANK, LOCAL_RANK, WORLD_SIZE, MASTER_*); their
    (returncode, stdout, stderr, seconds)."""
    port, started = str(free_port()), time.time()
    procs = [subprocess.Popen(command(root, workdir, **extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, env={**os.environ, "MBERTLAB_THREADS": "1", "RANK": str(rank),
                                              "LOCAL_RANK": str(rank), "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1",
                                              "MASTER_PORT": port, **(env or {})}) for rank in (0, 1)]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=timeout)
        out.append((p.returncode, stdout, stderr, time.time() - started))
    return out


def weights(path: Path) -> dict:
    return load_file(str(path / "model" / "model.safetensors"))


def artifact(root: Path, workdir: str) -> Path:
    [built] = [p for p in (root / workdir / "pretrain").iterdir() if not p.name.startswith(".")]
    return built


@pytest.mark.slow
def test_two_ranks_equal_one_process_rerun_at_once_and_resume_exactly_after_a_sigkill(store):
    """Same global batch (8 rows, accumulation 2 under no_sync): without dropout the weights of two ranks equal
    one process's within 1e-5 (the gradient's sum is ordered differently), and a rerun over the artifact returns
    on every rank without touching it. With dropout 0.1 (each rank its own
    stream), a run whose rank 0 is SIGKILLed after its step-4 checkpoint resumes to the uninterrupted two-rank
    run's weights bitwise: each rank's own RNG states are restored."""
    env = {**os.environ, "MBERTLAB_THREADS": "1"}
    one = subprocess.run(command(store, "one"), env=env, capture_output=True, text=True, check=True)
    whole = ranks(store, "whole")
    assert [r[0] for r in whole] == [0, 0], whole[1][2][-2000:]
    assert whole[0][1].strip() == str(artifact(store, "whole")) and whole[1][1] == ""  # rank 0 prints the path
    assert artifact(store, "whole").name == Path(one.stdout.strip()).name
    a, b = weights(Path(one.stdout.strip())), weights(artifact(store, "whole"))
    assert a.keys() == b.keys()
    assert max((a[k] - b[k]).abs().max().item() for k in a) < 1e-5

    built = artifact(store, "whole")  # a rerun over the artifact: every rank returns it, nothing is rewritten
    before = {p: p.stat().st_mtime_ns for p in built.rglob("*")}
    again = ranks(store, "whole", timeout=120)
    assert [r[0] for r in again] == [0, 0] and again[0][1] == whole[0][1], [r[2][-1500:] for r in again]
    assert {p: p.stat().st_mtime_ns for p in built.rglob("*")} == before
    assert not list((store / "whole" / "pretrain").glob(".partial-*"))

    dropout = {"model.dropout": 0.1}
    whole = ranks(store, "dropout", **dropout)
    assert [r[0] for r in whole] == [0, 0], whole[1][2][-2000:]
    killed = ranks(store, "killed", {"TEST_KILL_AFTER": "4"}, **dropout)
    assert killed[0][0] == -9 and killed[1][0] == 1
    lines = killed[1][2].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: pretrain: rank 1 of 2: another rank failed"), lines
    [partial] = (store / "killed" / "pretrain").glob(".partial-*")
    assert sorted(p.name for p in (partial / "checkpoints").iterdir()) == ["step-2", "step-4"]
    resumed = ranks(store, "killed", **dropout)
    assert [r[0] for r in resumed] == [0, 0], resumed[1][2][-2000:]
    b, c = weights(artifact(store, "dropout")), weights(artifact(store, "killed"))
    assert all(torch.equal(b[k], c[k]) for k in b)
    assert not all(torch.equal(a[k], c[k]) for k in a)  # dropout did change the weights
    rows = (artifact(store, "killed") / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(r)["step"] for r in rows] == [2, 4, 6]  # once each: rank 0 alone writes


@pytest.mark.slow
def test_a_hung_rank_makes_the_other_fail_with_one_line_after_the_timeout(store):
    started = time.time()
    out = ranks(store, "hung", {"TEST_HANG_AT": "2", "MBERTLAB_DIST_TIMEOUT": "10"}, timeout=200, steps=4)
    rank0 = out[0]
    assert rank0[0] == 1 and rank0[3] < 150, rank0[2][-2000:]
    lines = rank0[2].strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: pretrain: rank 0 of 2: another rank failed"), lines
    assert time.time() - started < 200
