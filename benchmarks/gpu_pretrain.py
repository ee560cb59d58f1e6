"""GPU pretraining throughput: our MLM step vs a Hugging Face BertForMaskedLM loop, in one run.

BERT-base by default (12 layers, 768 hidden, 12 heads, sequence 128, batch 256), once per vocabulary
(30k and 120k). Both sides see the same Zipfian batches with the same BERT masks (built on the CPU, pinned,
copied to the device before timing), start from the same seed, clip gradients at 1.0 and step AdamW (fused
on CUDA) under bf16 autocast (where the CPU has no bf16: fp32). Hugging Face runs with its best GPU
settings: sdpa attention, `torch.compile` of the whole model, the full MLM head. Ours is the package's own
model builder (`new_model`) and loss (`MaskedLM`, the masked-only head), sdpa on CUDA and eager on the CPU,
`model.bert.compile()` as the loop does with `compile: true`. The sides alternate in chunks of steps.

`mfu` = the matmul FLOPs each side executes per step × steps/s over the matmul peak measured here (a large
bf16 matmul, or fp32 where the run is fp32). FLOPs per step (`step_flops`; a multiply-add is 2 FLOPs, the
backward twice the forward, so 6 per weight per row): 6·T·L·12H² for the layers' weights (T = batch·seq tokens),
12·T·L·S·H for attention's scores and weighted sums, and 6·R·(H² + H·V) for the MLM head's transform and
decoder over the R rows it runs on: every token for Hugging Face's full head, the masked positions only for ours
(15%: the masked-only head is credited with the work it does, not with the full head's). Prints tokens/s, mfu and
GFLOP per step and loss curves of both sides per vocabulary, `ratio_<vocab>=` and `mfu_<vocab>=`, then `mfu=`
(ours, the lowest over the vocabularies) and last `ratio=` (the lowest).

    python benchmarks/gpu_pretrain.py [--device cuda] [--vocab 30000 120000] [--steps 100]
    python benchmarks/gpu_pretrain.py --device cpu --layers 2 --hidden 64 --heads 2 --batch 4 --seq 16 \\
        --vocab 1000 --steps 3 --warmup 1 --chunk 2     # the plumbing, tiny, on the CPU
"""
from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from dataclasses import dataclass, field

import torch

from mbertlab.pretrain.config import ModelShape
from mbertlab.pretrain.data import Batch, Masker, MicroBatch
from mbertlab.pretrain.model import bf16_supported, new_model
from mbertlab.pretrain.objective import MaskedLM
from mbertlab.runtime import setup_torch

N_SPECIALS, MASK_PROB, LR = 5, 0.15, 1e-4


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def compute_dtype(device: torch.device) -> torch.dtype:
    return torch.bfloat16 if device.type == "cuda" or bf16_supported() else torch.float32


def autocast(device: torch.device):
    dtype = compute_dtype(device)
    return torch.autocast(device.type, dtype=dtype) if dtype != torch.float32 else contextlib.nullcontext()


def matmul_peak(device: torch.device, dtype: torch.dtype) -> float:
    """FLOP/s of a large square matmul in the run's dtype (median of timed reps)."""
    n = 8192 if device.type == "cuda" else 1024
    a = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ a
    times = []
    for _ in range(10):
        sync(device)
        t = time.perf_counter()
        a @ a
        sync(device)
        times.append(time.perf_counter() - t)
    return 2 * n**3 / statistics.median(times)


def batches(args, vocab: int, n: int, device: torch.device) -> list[MicroBatch]:
    """Zipfian token streams with BERT's 15% masking, made on the CPU with their masked positions (as the loop
    draws them) and copied (pinned, async) to the device."""
    gen = torch.Generator().manual_seed(0)
    probs = 1.0 / torch.arange(1, vocab - N_SPECIALS + 1) ** 1.1
    masker = Masker(vocab, N_SPECIALS, MASK_PROB)
    out = []
    for i in range(n):
        ids = torch.multinomial(probs, args.batch * args.seq, replacement=True, generator=gen)
        inputs, labels = masker(ids.view(args.batch, args.seq) + N_SPECIALS, gen)
        out.append(MicroBatch(i, Batch(inputs, "x"), inputs, labels).shard(0, 1).to(device))
    sync(device)
    return out


def step_flops(args, vocab: int, head_rows: float) -> float:
    """Matmul FLOPs of one training step (module docstring): layers, attention, and the head over `head_rows`."""
    tokens, h = args.batch * args.seq, args.hidden
    return 6 * tokens * args.layers * 12 * h * h + 12 * tokens * args.layers * args.seq * h + \
        6 * head_rows * (h * h + h * vocab)


@dataclass
class Side:
    name: str
    model: torch.nn.Module
    opt: torch.optim.Optimizer
    loss: object  # (model, micro-batch) -> loss
    times: list[float] = field(default_factory=list)  # seconds per timed step (chunk time / chunk steps)
    losses: list[float] = field(default_factory=list)


def make_side(name: str, args, vocab: int, device: torch.device, compile_: bool) -> Side:
    from transformers import BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    if name == "hf":
        config = BertConfig(vocab_size=vocab, hidden_size=args.hidden, num_hidden_layers=args.layers,
                            num_attention_heads=args.heads, intermediate_size=4 * args.hidden,
                            hidden_dropout_prob=args.dropout, attention_probs_dropout_prob=args.dropout)
        model = BertForMaskedLM._from_config(config, attn_implementation="sdpa").to(device)
        loss = lambda m, micro: m(input_ids=micro.inputs, labels=micro.labels).loss  # noqa: E731
        if compile_:
            model.compile()
    else:
        attention = "sdpa" if device.type == "cuda" else "eager"
        shape = ModelShape(layers=args.layers, hidden=args.hidden, heads=args.heads, max_positions=512,
                           dropout=args.dropout, attention=attention)
        model = new_model(shape, vocab).to(device)
        loss = MaskedLM().loss
        if compile_:
            model.bert.compile()  # as the loop does: parameter names stay the same
    model.train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR, fused=device.type == "cuda")
    return Side(name, model, opt, loss)


def run_chunk(side: Side, data: list, steps: range, device: torch.device, timed: bool) -> None:
    losses = []
    sync(device)
    start = time.perf_counter()
    for i in steps:
        with autocast(device):
            loss = side.loss(side.model, data[i])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(side.model.parameters(), 1.0)
        side.opt.step()
        side.opt.zero_grad(set_to_none=True)
        losses.append(loss.detach())
    sync(device)
    if timed:
        side.times += [(time.perf_counter() - start) / len(steps)] * len(steps)
    side.losses += [float(v) for v in losses]


def compare(args, vocab: int, device: torch.device, compile_: bool) -> tuple[dict[str, float], dict, Side, Side]:
    """Tokens/s of both sides on the same batches, the sides alternating chunk by chunk after the warm-up, and the
    FLOPs each executes per step."""
    data = batches(args, vocab, args.warmup + args.steps, device)
    sides = [make_side(name, args, vocab, device, compile_) for name in ("hf", "ours")]
    for side in sides:
        run_chunk(side, data, range(args.warmup), device, timed=False)  # compilation, allocator, autotuning
    for start in range(args.warmup, args.warmup + args.steps, args.chunk):
        for side in sides:
            run_chunk(side, data, range(start, min(start + args.chunk, args.warmup + args.steps)), device, True)
    tokens = args.batch * args.seq
    masked = statistics.fmean(m.masked.total for m in data)  # counted on the CPU when drawn
    flops = {"hf": step_flops(args, vocab, tokens), "ours": step_flops(args, vocab, masked)}
    return {s.name: tokens / statistics.median(s.times) for s in sides}, flops, *sides


def parameters(model: torch.nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())  # tied decoder and word embeddings counted once


def report(args, vocab: int, rate: dict[str, float], flops: dict[str, float], hf: Side, ours: Side,
           peak: float) -> tuple[float, float]:
    tokens = args.batch * args.seq
    mfu = {name: flops[name] * r / tokens / peak for name, r in rate.items()}
    gap = statistics.fmean(a - b for a, b in zip(ours.losses, hf.losses))
    for side in (hf, ours):
        print(f"vocab {vocab:>6} {side.name:>4}: {rate[side.name]:13,.1f} tokens/s  mfu {mfu[side.name]:6.2%}  "
              f"{flops[side.name] / 1e9:,.4f} GFLOP/step  loss {side.losses[0]:.3f} -> {side.losses[-1]:.3f}")
    print(f"vocab {vocab:>6}: {parameters(hf.model):,} parameters, mean loss gap ours - hf {gap:+.4f}")
    print(f"ratio_{vocab}={rate['ours'] / rate['hf']:.3f}")
    print(f"mfu_{vocab}={mfu['ours']:.4g}")
    return rate["ours"] / rate["hf"], mfu["ours"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--vocab", type=int, nargs="+", default=[30000, 120000])
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--dropout", type=float, default=0.1)
    parser.add_argument("--steps", type=int, default=100, help="timed steps per side")
    parser.add_argument("--warmup", type=int, default=10, help="untimed steps per side first (compilation)")
    parser.add_argument("--chunk", type=int, default=10, help="steps per side before the other side's turn")
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction, default=None,
                        help="torch.compile both models (default: on CUDA only)")
    args = parser.parse_args()
    device = torch.device(args.device)
    setup_torch()
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    compile_ = device.type == "cuda" if args.compile is None else args.compile
    dtype = compute_dtype(device)
    peak = matmul_peak(device, dtype)
    name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    print(f"{name}, {str(dtype).removeprefix('torch.')}, compile {compile_}, {torch.get_num_threads()} threads; "
          f"matmul peak {peak / 1e9:,.1f} GFLOP/s; {args.layers} layers / {args.hidden} hidden / {args.heads} "
          f"heads, batch {args.batch} x {args.seq}, {args.steps} timed steps after {args.warmup}")
    results = []
    for vocab in args.vocab:
        rate, flops, hf, ours = compare(args, vocab, device, compile_)
        results.append(report(args, vocab, rate, flops, hf, ours, peak))
        del hf, ours
        if device.type == "cuda":
            torch.cuda.empty_cache()
    print(f"mfu={min(m for _, m in results):.4g}")
    print(f"ratio={min(r for r, _ in results):.3f}")


if __name__ == "__main__":
    main()
