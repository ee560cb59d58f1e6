"""The GPU rates `study plan` assumes, measured: the package's own pretraining loop, step by step.

`studies/plan.py` prices a pretraining on the GPU at max(FLOPs at an MFU of an H100's 989 TFLOP/s, a floor of
a + b x layers ms per micro-batch), and a study's wall time with its jobs sharing the GPU; this script measured
those constants (benchmarks/README.md) and prints the plan's estimate beside what it measures. It runs `pretrain_into`
(generated text, word-level shards, the prefetching thread, bf16, sdpa, fused AdamW) at shapes from launch-bound
to compute-bound, synchronises the device at the first timed step and the last, and prints per shape the
measured ms a step, the plan's estimate and which bound gave it, and the FLOP/s reached (the plan's own FLOP
count). Then a floor a + b x layers fitted by least squares to the one-process ms a step of the hidden-128
depths, and `--procs`: that many processes of the first shape (k2020's gpu shape) at once on the one device
(as `study run --jobs N` puts them), their summed steps/s against one process's.

    python benchmarks/plan_gpu_rate.py [--device cuda] [--steps 60] [--procs 1 4 8]
    python benchmarks/plan_gpu_rate.py --device cpu --shapes tiny --steps 3 --skip 1 --procs 1 2   # plumbing
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from gpu_busy import shards
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.cost import flops_per_token, tokens_processed
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.runtime import cpu_count, setup_torch
from mbertlab.studies.plan import GPU_PEAK_FLOPS, LAUNCH_S, gpu_compute_seconds, micro_batch_floor
from mbertlab.tokenizers.shards import ShardReader

# name: (layers, hidden, heads, batch, seq_len). `k2020` is k2020's gpu-scale base (4 x 128, batch 256 x 64);
# `d*` vary its depth for the floor's fit; `quick` is the quick spec's gpu shape; `base` is BERT-base.
SHAPES = {
    "k2020": (4, 128, 2, 256, 64), "d1": (1, 128, 2, 256, 64), "d2": (2, 128, 2, 256, 64),
    "d8": (8, 128, 2, 256, 64), "d12": (12, 128, 2, 256, 64), "quick": (6, 256, 4, 128, 32),
    "base": (12, 768, 12, 256, 128), "tiny": (1, 32, 2, 8, 16),
}
DEPTH_FIT = ("d1", "d2", "k2020", "d8", "d12")


def config_for(name: str, device: str, steps: int) -> PretrainConfig:
    layers, hidden, heads, batch, seq = SHAPES[name]
    cuda = device.startswith("cuda")
    return PretrainConfig.model_validate({
        "model": {"layers": layers, "hidden": hidden, "heads": heads, "attention": "sdpa" if cuda else "eager",
                  "max_positions": max(128, seq)},
        "batch_size": batch, "seq_len": seq, "device": device, "precision": "bf16" if cuda else "fp32",
        "steps": steps, "checkpoint_every": steps, "warmup": min(10, steps), "lr": 1e-4, "eval_batches": 1})


def timed_run(name: str, device: str, skip: int, steps: int, shards_dir: Path, out: Path) -> float:
    """Seconds a step, from a synchronised step `skip` (at least 1) to a synchronised last step."""
    config = config_for(name, device, skip + steps)
    marks: list[float] = []

    def mark(*_) -> None:
        if len(marks) in (skip - 1, skip + steps - 1) and device.startswith("cuda"):
            torch.cuda.synchronize()
        marks.append(time.perf_counter())

    out.mkdir(parents=True)
    hook = register_optimizer_step_post_hook(mark)
    try:
        pretrain_into(config, shards_dir, out)
    finally:
        hook.remove()
    return (marks[skip + steps - 1] - marks[skip - 1]) / steps


def measure(name: str, args, shards_dir: Path, work: Path, vocab: int) -> float:
    config = config_for(name, args.device, args.skip + args.steps)
    seconds = timed_run(name, args.device, args.skip, args.steps, shards_dir, work / f"run-{name}")
    flops = tokens_processed(config) * flops_per_token(config, vocab) / config.steps  # a step's
    compute, floor = gpu_compute_seconds(flops), micro_batch_floor(config.model.layers)
    plan = max(compute, floor)
    layers, hidden, _, batch, seq = SHAPES[name]
    print(f"{name} ({layers} x {hidden}, batch {batch} x {seq}, vocab {vocab}): {seconds * 1e3:.2f} ms/step "
          f"measured, plan {plan * 1e3:.2f} ({'floor' if floor >= compute else 'compute'}; compute "
          f"{compute * 1e3:.3f}, floor {floor * 1e3:.2f}), measured/plan {seconds / plan:.2f}, "
          f"{flops / seconds / 1e12:.2f} TFLOP/s = {flops / seconds / GPU_PEAK_FLOPS:.4f} of 989", flush=True)
    return seconds


def fit_floor(times: dict[str, float]) -> None:
    points = [(SHAPES[n][0], times[n]) for n in DEPTH_FIT if n in times]
    if len(points) < 2:
        return
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    print(f"floor fit over {len(points)} depths: {(my - slope * mx) * 1e3:.2f} ms + {slope * 1e3:.3f} ms x layers "
          f"(plan: {LAUNCH_S[0] * 1e3:g} + {LAUNCH_S[1] * 1e3:g} x layers)", flush=True)
    print(f"floor_ms={(my - slope * mx) * 1e3:.4f}\nfloor_per_layer_ms={slope * 1e3:.4f}", flush=True)


def concurrent(args, data: Path, work: Path) -> None:
    """Processes of the first shape (k2020's by default) at once on the one device, each with the runner's share
    of the cores: summed steps/s against one process's."""
    single = None
    name = args.shapes[0]
    for n in args.procs:
        cmd = [sys.executable, __file__, "--worker", "--device", args.device, "--shapes", name, "--skip",
               str(args.skip), "--steps", str(args.proc_steps), "--data", str(data)]
        env = {**os.environ, "MBERTLAB_THREADS": str(max(1, cpu_count() // n))}  # the runner's share of cores
        procs = [subprocess.Popen([*cmd, "--out", str(work / f"proc{n}-{i}")], stdout=subprocess.PIPE, text=True,
                                  env=env) for i in range(n)]
        rates = [1 / float(p.communicate()[0].split()[-1]) for p in procs]
        if any(p.returncode for p in procs):
            raise SystemExit(f"a worker of {n} failed")
        total = sum(rates)
        single = single or total / n
        print(f"{n} processes of {name}: {total:.3f} steps/s summed ({statistics.fmean(rates):.3f} each), "
              f"{total / single:.2f}x one process", flush=True)
        print(f"procs_{n}={total / single:.4f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--shapes", nargs="+", default=["k2020", "d1", "d2", "d8", "d12", "quick", "base"],
                        choices=sorted(SHAPES))
    parser.add_argument("--steps", type=int, default=60, help="timed steps")
    parser.add_argument("--skip", type=int, default=10, help="steps before timing (allocator, kernels warm up), >= 1")
    parser.add_argument("--procs", type=int, nargs="*", default=[1, 2, 4, 8])
    parser.add_argument("--proc-steps", type=int, default=300, help="timed steps of each concurrent process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    setup_torch()
    if args.worker:  # one concurrent process: prints its seconds a step
        print(timed_run(args.shapes[0], args.device, args.skip, args.steps, args.data, args.out))
        return
    print(f"device {torch.cuda.get_device_name() if args.device.startswith('cuda') else 'cpu'}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data = shards(work / "data")
        vocab = ShardReader(data).vocab_size
        times = {name: measure(name, args, data, work, vocab) for name in args.shapes}
        fit_floor(times)
        concurrent(args, data, work)


if __name__ == "__main__":
    main()
