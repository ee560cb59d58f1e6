"""Dev scores of a masked LM on fixed batches: the loop logs them at every checkpoint, and the balance measure
scores students and teachers with them on one shared set of batches."""
from __future__ import annotations

import json
import logging
import math
from pathlib import Path

import numpy as np
import torch

from mbertlab.pretrain.model import masked_logits
from mbertlab.runtime import to_device

log = logging.getLogger("mbertlab")


@torch.inference_mode()
def dev_scores(model, batches: list, autocast) -> tuple[float, float]:
    """Dev MLM loss (nats per masked token) and mean reciprocal rank of the gold token over fixed batches (moved
    to the model's device when they are elsewhere)."""
    losses, rr = [], []
    device = next(model.parameters()).device
    for inputs, labels in batches:
        with autocast():
            logits, gold = masked_logits(model, to_device(inputs, device), to_device(labels, device))  # [M, V], [M]
        logits = logits.float()
        losses.append(torch.nn.functional.cross_entropy(logits, gold, reduction="sum").item())
        gold_logit = logits.gather(1, gold[:, None])  # [M, 1]
        rr += (1.0 / ((logits > gold_logit).sum(1) + 1).double()).tolist()
    return sum(losses) / max(1, len(rr)), float(np.mean(rr))


def log_dev_scores(model, dev: dict[str, list], step: int, out: Path, autocast) -> dict[str, float]:
    """Append dev MLM loss, perplexity and mean reciprocal rank of the gold token, per language, to
    out/metrics.jsonl; returns each language's loss."""
    model.eval()
    losses = {}
    with (out / "metrics.jsonl").open("a", encoding="utf-8") as f:
        for lang, batches in dev.items():
            loss, mrr = dev_scores(model, batches, autocast)
            losses[lang] = loss
            row = {"step": step, "lang": lang, "loss": loss, "ppl": math.exp(min(loss, 50)), "mrr": mrr}
            f.write(json.dumps(row) + "\n")
            log.info("step %d %s dev loss %.3f mrr %.3f", step, lang, loss, row["mrr"])
    model.train()
    return losses
