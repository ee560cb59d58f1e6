"""GPU busy share of a pretraining step: does the data pipeline keep the GPU fed?

Runs the package's own pretraining loop (`pretrain_into`: batches drawn and masked on the CPU, moved by the
prefetching thread, the step, the optimiser) on generated text, under `torch.profiler`. A global optimiser
post-step hook marks the steps; after `--skip` steps (compilation, allocator warm-up) `--steps` steps are
recorded. busy = the union of the GPU's kernel, copy and memset intervals inside the recorded steps' window,
over that window's length: 1.0 means the GPU never waited on the host. On a CPU run the main thread's top-level
operators stand in for the kernels (the plumbing only; there is no device to starve).

Shapes: `base` (BERT-base: 12 layers, 768 hidden, 12 heads, batch 256 × 128, dropout 0.1) and `quick` (the
quick spec's gpu shape: 6 × 256, 4 heads, batch 128 × 32), bf16 on CUDA. Prints per shape steps/s, tokens/s,
busy, the longest GPU idle gap, then `busy_<shape>=`, and last `busy=` (the lowest).

    python benchmarks/gpu_busy.py [--device cuda] [--shapes base quick] [--steps 20]
    python benchmarks/gpu_busy.py --device cpu --shapes tiny --steps 3 --skip 1   # the plumbing, on the CPU
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.runtime import setup_torch
from mbertlab.tokenizers.shards import ShardsConfig, write_shards_into
from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

SHAPES = {
    "base": {"model": {"layers": 12, "hidden": 768, "heads": 12, "dropout": 0.1}, "batch_size": 256, "seq_len": 128},
    "quick": {"model": {"layers": 6, "hidden": 256, "heads": 4, "dropout": 0.1}, "batch_size": 128, "seq_len": 32},
    "tiny": {"model": {"layers": 1, "hidden": 32, "heads": 2}, "batch_size": 8, "seq_len": 16},
}
DEVICE_CATEGORIES = {"kernel", "gpu_memcpy", "gpu_memset"}


def merged_length(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Length of the union of [start, end) intervals, clipped to [lo, hi)."""
    total, reach = 0.0, lo
    for start, end in sorted(intervals):
        start, end = max(start, reach), min(end, hi)
        if end > start:
            total += end - start
            reach = end
    return total


def longest_gap(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """The longest stretch of [lo, hi) that no interval covers."""
    gap, reach = 0.0, lo
    for start, end in sorted(intervals):
        if start > reach:
            gap = max(gap, min(start, hi) - reach)
        reach = max(reach, end)
        if reach >= hi:
            break
    return max(gap, hi - reach)


def busy_from_trace(events: list[dict], device: str) -> tuple[float, float, float, int]:
    """(busy share, window µs, longest idle gap µs, recorded steps) from a Chrome trace's events."""
    steps = [e for e in events if e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#")]
    if not steps:
        raise SystemExit("the trace recorded no steps")
    lo = min(float(e["ts"]) for e in steps)
    hi = max(float(e["ts"]) + float(e["dur"]) for e in steps)
    if device == "cuda":
        work = [e for e in events if e.get("ph") == "X" and e.get("cat") in DEVICE_CATEGORIES]
    else:
        main = steps[0]["tid"]
        work = [e for e in events if e.get("ph") == "X" and e.get("cat") == "cpu_op" and e.get("tid") == main]
    intervals = [(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in work]
    return merged_length(intervals, lo, hi) / (hi - lo), hi - lo, longest_gap(intervals, lo, hi), len(steps)


def shards(root: Path) -> Path:
    """Two generated languages, word-level vocabulary, the loop's shards."""
    gen, tok, out = root / "gen", root / "tok", root / "shards"
    languages = ["src", "fake"]
    tok.mkdir(parents=True)
    out.mkdir()
    generate_into(preset_config("quick", 0, {"sentences": {"train": 3000, "dev": 200, "test": 10}}), gen)
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=languages),
                         {lang: gen / lang / "text" / "train.txt" for lang in languages}, tok)
    texts = {lang: {s: gen / lang / "text" / f"{s}.txt" for s in ("train", "dev")} for lang in languages}
    write_shards_into(ShardsConfig(languages=languages), tok, texts, out)
    return out


def measure(name: str, args, shards_dir: Path, work: Path) -> float:
    shape = SHAPES[name]
    cuda = args.device.startswith("cuda")
    total = args.skip + args.steps + 1
    config = PretrainConfig.model_validate({
        **shape, "model": {**shape["model"], "attention": "sdpa" if cuda else "eager",
                           "max_positions": max(128, shape["seq_len"])},
        "device": args.device, "precision": "bf16" if cuda else "fp32", "steps": total, "checkpoint_every": total,
        "warmup": 10, "lr": 1e-4, "eval_batches": 1, "compile": args.compile})
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
    schedule = torch.profiler.schedule(wait=max(0, args.skip - 1), warmup=1 if args.skip else 0, active=args.steps,
                                       repeat=1)
    trace, out = work / f"trace-{name}.json", work / f"run-{name}"
    out.mkdir()
    with torch.profiler.profile(activities=activities, schedule=schedule,
                                on_trace_ready=lambda p: p.export_chrome_trace(str(trace))) as prof:
        hook = register_optimizer_step_post_hook(lambda *_: prof.step())
        start = time.perf_counter()
        try:
            pretrain_into(config, shards_dir, out)
        finally:
            hook.remove()
        seconds = time.perf_counter() - start
    events = json.loads(trace.read_text())["traceEvents"]
    busy, window, gap, recorded = busy_from_trace(events, "cuda" if cuda else "cpu")
    rate = recorded / (window / 1e6)
    print(f"{name}: {total} steps in {seconds:.1f} s (profiled, evaluation and checkpoint included); "
          f"{recorded} recorded steps: {rate:.2f} steps/s, {rate * shape['batch_size'] * shape['seq_len']:,.0f} "
          f"tokens/s, device busy {busy:.3f}, longest idle gap {gap / 1e3:.2f} ms", flush=True)
    print(f"busy_{name}={busy:.4f}", flush=True)
    return busy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--shapes", nargs="+", default=["base", "quick"], choices=sorted(SHAPES))
    parser.add_argument("--steps", type=int, default=20, help="recorded steps")
    parser.add_argument("--skip", type=int, default=8, help="steps before recording (compilation, warm-up)")
    parser.add_argument("--compile", nargs="?", const=True, default=False, choices=[True, "reduce-overhead",
                        "max-autotune"], help="compile: true, as a spec may set it; or a torch.compile mode "
                        "(reduce-overhead: CUDA graphs)")
    args = parser.parse_args()
    setup_torch()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shards_dir = shards(work / "data")
        lowest = min(measure(name, args, shards_dir, work) for name in args.shapes)
    print(f"busy={lowest:.4f}")


if __name__ == "__main__":
    main()
