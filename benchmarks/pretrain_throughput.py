"""Pretraining throughput: our loop vs a plain Hugging Face BertForMaskedLM + AdamW loop, in one run.

Same model shape (vocab 16000, hidden 256, 4 layers, 4 heads, batch 32 x 128), same batches and masks,
alternating chunks of steps so both see the same machine state. HF runs with its own best settings on
this CPU (sdpa attention, bf16 autocast, dropout 0.1, full MLM head); ours with the masked-only head,
eager attention, bf16 autocast and malloc tuning, once with dropout 0.1 (like for like) and once with
dropout 0 (the lab default). Prints median tokens/s, achieved matmul FLOP/s against a bf16 peak measured
here, the mean loss gap over the steps, and as its last line `ratio=<ours (dropout 0.1) / HF>`.

    .venv/bin/python benchmarks/pretrain_throughput.py [--steps 120] [--chunk 10]
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from mbertlab.pretrain.config import ModelShape
from mbertlab.pretrain.data import Masker
from mbertlab.pretrain.model import mlm_loss, new_model
from mbertlab.runtime import setup_torch

VOCAB, HIDDEN, LAYERS, HEADS, BATCH, SEQ = 16000, 256, 4, 4, 32, 128


def matmul_peak() -> float:
    a = torch.randn(2048, 2048, dtype=torch.bfloat16)
    for _ in range(3):
        a @ a
    times = []
    for _ in range(8):
        t = time.perf_counter()
        a @ a
        times.append(time.perf_counter() - t)
    return 2 * 2048**3 / statistics.median(times)


def executed_flops(masked: int, full_head: bool) -> float:
    tokens, inter = BATCH * SEQ, 4 * HIDDEN
    encoder = tokens * 6 * LAYERS * (4 * HIDDEN**2 + 2 * HIDDEN * inter)
    attention = tokens * 12 * SEQ * HIDDEN * LAYERS
    head_rows = tokens if full_head else masked
    return encoder + attention + head_rows * 6 * (HIDDEN**2 + VOCAB * HIDDEN)


def batches(n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Zipfian token streams (so the loss has something to learn) with exact 15% BERT masking."""
    gen = torch.Generator().manual_seed(0)
    probs = 1.0 / torch.arange(1, VOCAB - 4) ** 1.1
    masker = Masker(VOCAB, 5, 0.15)
    out = []
    for _ in range(n):
        ids = torch.multinomial(probs, BATCH * SEQ, replacement=True, generator=gen).view(BATCH, SEQ) + 5
        out.append(masker(ids, gen))
    return out


def make(kind: str):
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    if kind == "hf":
        config = BertConfig(vocab_size=VOCAB, hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=HEADS,
                            intermediate_size=4 * HIDDEN)
        model = BertForMaskedLM._from_config(config, attn_implementation="sdpa")
        step_loss = lambda m, x, y: m(input_ids=x, labels=y).loss  # noqa: E731
    else:
        dropout = 0.1 if kind == "ours_d0.1" else 0.0
        model = new_model(ModelShape(layers=LAYERS, hidden=HIDDEN, heads=HEADS, max_positions=512,
                                     dropout=dropout, attention="eager"), VOCAB)
        step_loss = mlm_loss
    model.train()
    return model, torch.optim.AdamW(model.parameters(), lr=1e-4), step_loss


def run_chunk(state, data, start: int, chunk: int, times: list[float], losses: list[float]) -> None:
    model, opt, step_loss = state
    for i in range(start, start + chunk):
        x, y = data[i % len(data)]
        t = time.perf_counter()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = step_loss(model, x, y)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t)
        losses.append(loss.item())


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=120)
    parser.add_argument("--chunk", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    setup_torch()
    peak = matmul_peak()
    data = batches(args.steps)
    masked = int((data[0][1] != -100).sum())
    kinds = ("hf", "ours_d0.1", "ours_d0")
    states = {k: make(k) for k in kinds}
    times = {k: [] for k in kinds}
    losses = {k: [] for k in kinds}
    for start in range(0, args.steps, args.chunk):
        for k in kinds:
            run_chunk(states[k], data, start, args.chunk, times[k], losses[k])
    tokens = BATCH * SEQ
    rate = {k: tokens / statistics.median(times[k][args.warmup:]) for k in kinds}
    print(f"bf16 matmul peak (2048^2): {peak / 1e9:.0f} GFLOP/s")
    for k in kinds:
        flops = executed_flops(masked, k == "hf") * rate[k] / tokens
        gap = statistics.fmean(a - b for a, b in zip(losses[k], losses["hf"]))
        print(f"{k:10s} {rate[k]:9,.0f} tokens/s  {flops / 1e9:6.0f} GFLOP/s ({flops / peak:5.1%} of peak)  "
              f"first loss {losses[k][0]:.3f} last {losses[k][-1]:.3f}  mean gap vs hf {gap:+.3f}")
    print(f"ratio_dropout0={rate['ours_d0'] / rate['hf']:.2f}")
    print(f"ratio={rate['ours_d0.1'] / rate['hf']:.2f}")


if __name__ == "__main__":
    main()
