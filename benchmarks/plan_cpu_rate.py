"""The CPU rate `study plan` divides FLOPs by: the loop's fp32 masked-only MLM step (forward, backward, AdamW)
at k2020's lab shape, timed per step, with the FLOPs of `pretrain.cost.flops_per_token` (the plan's own model).

Prints ms/step, tokens/s and GFLOP/s per shape, and last `cpu_flops=<FLOP/s at the first shape>`.

    python benchmarks/plan_cpu_rate.py [--steps 25]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from mbertlab.pretrain.config import ModelShape, PretrainConfig
from mbertlab.pretrain.cost import flops_per_token
from mbertlab.pretrain.data import Masker
from mbertlab.pretrain.model import mlm_loss, new_model
from mbertlab.runtime import setup_torch

# (vocabulary, layers, hidden, heads, batch, seq_len): k2020's lab shape, then a wider one with long windows
SHAPES = [(500, 4, 128, 2, 64, 16), (8000, 4, 256, 4, 32, 128)]


def rate(vocab: int, layers: int, hidden: int, heads: int, batch: int, seq: int, steps: int) -> float:
    torch.manual_seed(0)
    config = PretrainConfig(model=ModelShape(layers=layers, hidden=hidden, heads=heads), batch_size=batch,
                            seq_len=seq, precision="fp32")
    model = new_model(config.model, vocab)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    masker, gen = Masker(vocab, 5, config.mask_prob), torch.Generator().manual_seed(0)
    times = []
    for _ in range(steps):
        inputs, labels = masker(torch.randint(5, vocab, (batch, seq), generator=gen), gen)
        start = time.perf_counter()
        mlm_loss(model, inputs, labels).backward()
        opt.step()
        opt.zero_grad()
        times.append(time.perf_counter() - start)
    step = statistics.median(times[5:])  # the first steps warm the allocator
    flops = batch * seq * flops_per_token(config, vocab) / step
    print(f"vocab {vocab}, {layers} x {hidden}, batch {batch} x {seq}: {step * 1000:.1f} ms/step, "
          f"{batch * seq / step:,.0f} tokens/s, {flops / 1e9:.1f} GFLOP/s", flush=True)
    return flops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=25)
    args = parser.parse_args()
    setup_torch()
    rates = [rate(*shape, args.steps) for shape in SHAPES]
    print(f"cpu_flops={rates[0]:.4g}")


if __name__ == "__main__":
    main()
