"""Distillation overhead and the top-k cache's error, in one run.

1. Step time of the same student (vocab 16000, hidden 128, 4 layers, 2 heads, batch 64 x 32, bf16 autocast
   where the CPU has it, masked-only head) with hard labels (`pretraining_loss`) and with the distillation
   objective of the loop (`Distiller.loss`, one live frozen teacher of the student's shape), in alternating
   chunks so both see the same machine state. The issue's target: the teacher adds at most 1x the student's
   forward + backward, i.e. ratio <= 2.
2. The cache's error for small k: on a generated language (a 2,650-word lexicon), a teacher trained for
   `--teacher-steps` and a student trained with hard labels for a tenth of that; over 8 of the run's
   micro-batches, the soft loss from the top k teacher probabilities (float16, renormalised, as the cache
   stores them) against the loss over the full vocabulary: mean top-k mass, relative loss error, and the
   cosine between the gradients with respect to the student's logits.

Last line `ratio=<distill step / hard step>`.

    .venv/bin/python benchmarks/distill_overhead.py [--steps 60] [--chunk 10] [--teacher-steps 1500]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from mbertlab.pretrain.config import ModelShape, PretrainConfig
from mbertlab.pretrain.data import Batch, Masker, MicroBatch, Selection
from mbertlab.pretrain.distill import soft_label_loss, teacher_logits, topk_soft_label_loss
from mbertlab.pretrain.model import logits_at
from mbertlab.pretrain.objective import Distiller
from mbertlab.pretrain.model import bf16_supported, new_model, pretraining_loss
from mbertlab.runtime import setup_torch

VOCAB, HIDDEN, LAYERS, HEADS, BATCH, SEQ = 16000, 128, 4, 2, 64, 32
LEXICON = {"NOUN": 1500, "VERB": 600, "ADJ": 300, "ADV": 100, "ADP": 20, "DET": 10, "PRON": 10, "NUM": 30,
           "CCONJ": 5, "PER": 40, "LOC": 20, "ORG": 15}


def batches(n: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Zipfian token streams with exact 15% BERT masking."""
    gen = torch.Generator().manual_seed(0)
    probs = 1.0 / torch.arange(1, VOCAB - 4) ** 1.1
    masker = Masker(VOCAB, 5, 0.15)
    return [masker(torch.multinomial(probs, BATCH * SEQ, replacement=True, generator=gen).view(BATCH, SEQ) + 5, gen)
            for _ in range(n)]


def timed_chunk(step, model, opt, data, start: int, chunk: int, times: list[float]) -> None:
    for i in range(start, start + chunk):
        inputs, labels = data[i % len(data)]
        t = time.perf_counter()
        autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16_supported())
        with autocast:
            loss = step(model, inputs, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        times.append(time.perf_counter() - t)


def overhead(steps: int, chunk: int, warmup: int) -> float:
    shape = ModelShape(layers=LAYERS, hidden=HIDDEN, heads=HEADS)
    torch.manual_seed(0)
    teacher = new_model(shape, VOCAB).eval().requires_grad_(False)
    distiller = Distiller(1.0, 0.0, teachers={"x": teacher})
    steps_by_kind = {
        "hard": lambda m, x, y: pretraining_loss(m, Batch(x, "x"), Selection.of(y)),
        "distill": lambda m, x, y: distiller.loss(m, MicroBatch(0, Batch(x, "x"), x, y)),
    }
    models = {k: new_model(shape, VOCAB).train() for k in steps_by_kind}
    opts = {k: torch.optim.AdamW(m.parameters(), lr=1e-4) for k, m in models.items()}
    data, times = batches(steps), {k: [] for k in steps_by_kind}
    for start in range(0, steps, chunk):
        for k, step in steps_by_kind.items():
            timed_chunk(step, models[k], opts[k], data, start, chunk, times[k])
    median = {k: statistics.median(t[warmup:]) for k, t in times.items()}
    print(f"student {LAYERS} layers / hidden {HIDDEN} / vocab {VOCAB} / batch {BATCH} x {SEQ}, "
          f"bf16 {bf16_supported()}, {steps} steps each")
    for k, m in median.items():
        print(f"{k:8s} step {m * 1000:7.1f} ms  {BATCH * SEQ / m:9,.0f} tokens/s")
    return median["distill"] / median["hard"]


def trained_pair(root: Path, teacher_steps: int) -> tuple[Path, PretrainConfig]:
    """A generated language's shards, a teacher trained on them and a less trained hard-label student."""
    from mbertlab.data.generate import generate_into, preset_config
    from mbertlab.pretrain.loop import pretrain_into
    from mbertlab.tokenizers.shards import ShardsConfig, write_shards_into
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    gen, tok, shards = root / "gen", root / "tok", root / "shards"
    generate_into(preset_config("quick", 0, {"lexicon": LEXICON, "sentences": {"train": 10000, "dev": 200,
                                                                              "test": 10}}), gen)
    text = gen / "src" / "text"
    for d in (tok, shards):
        d.mkdir()
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=5000, languages=["src"]),
                         {"src": text / "train.txt"}, tok)
    write_shards_into(ShardsConfig(languages=["src"]), tok, {"src": {s: text / f"{s}.txt" for s in ("train", "dev")}},
                      shards)
    config = PretrainConfig.model_validate({"model": {"layers": 2, "hidden": 64, "heads": 2}, "batch_size": 32,
                                            "warmup": 100, "lr": 2e-3, "eval_batches": 2, "steps": teacher_steps,
                                            "checkpoint_every": teacher_steps})
    for name, steps in (("teacher", teacher_steps), ("student", teacher_steps // 10)):
        (root / name).mkdir()
        pretrain_into(config.model_copy(update={"steps": steps, "checkpoint_every": steps}), shards, root / name)
    return shards, config


def topk_errors(teacher_steps: int, ks: tuple[int, ...], n_batches: int = 8) -> None:
    from mbertlab.pretrain.checkpoint import TrainState
    from mbertlab.pretrain.data import training_data
    from mbertlab.pretrain.model import load_model
    from mbertlab.tokenizers.shards import ShardReader

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        shards_dir, config = trained_pair(root, teacher_steps)
        shards = ShardReader(shards_dir)
        teacher, student = (load_model(root / n / "model").eval() for n in ("teacher", "student"))
        sampler, masker = training_data(config, shards)
        state, rows = TrainState(config), {k: [] for k in ks}
        for _ in range(n_batches):
            batch = sampler.draw(state.data_rng, config.batch_size)
            inputs, labels = masker(batch.input_ids, state.mask_gen)
            chosen = Selection.of(labels)
            t_logits = teacher_logits({"src": teacher}, ["src"] * len(inputs), batch, inputs, chosen)
            q = F.softmax(t_logits.float(), -1)
            logits = logits_at(student, inputs, chosen.positions).detach().requires_grad_(True)
            full = soft_label_loss(logits, t_logits, reduction="sum")
            (g_full,) = torch.autograd.grad(full, logits)
            for k in ks:
                top = q.topk(k, dim=-1)
                approx = topk_soft_label_loss(logits, top.indices, top.values.half().float(), reduction="sum")
                (g,) = torch.autograd.grad(approx, logits)
                rows[k].append((top.values.sum(-1).mean().item(), abs(approx.item() - full.item()) / full.item(),
                                F.cosine_similarity(g.flatten(), g_full.flatten(), dim=0).item(), full.item() / len(q)))
    print(f"top-k cache error: vocab {shards.vocab_size}, teacher {teacher_steps} steps, student {teacher_steps // 10}"
          f" steps (hard labels), {n_batches} batches of {config.batch_size} x {config.seq_len}")
    for k, r in rows.items():
        mass, err, cos, kl = (statistics.fmean(x[i] for x in r) for i in range(4))
        print(f"k={k:<5d} top-k mass {mass:.3f}  |loss error| {err:6.2%}  gradient cosine {cos:.4f}  "
              f"(full soft loss {kl:.3f} nats/position)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--chunk", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--teacher-steps", type=int, default=1500)
    parser.add_argument("--no-topk", action="store_true", help="Only the step times.")
    args = parser.parse_args()
    setup_torch()
    if not args.no_topk:
        topk_errors(args.teacher_steps, (8, 32, 128, 1024))
    ratio = overhead(args.steps, args.chunk, args.warmup)
    print(f"ratio={ratio:.2f}")


if __name__ == "__main__":
    main()
