"""One training run of a task model at one grid point, calling back for evaluation.

Fine-tuning modes: AdamW, linear warmup over the first `warmup` share of steps, then linear decay.
Frozen-encoder modes (Wu & Dredze 2019): Adam at `feature_lr`, halved whenever the source dev score does not
improve, stopped when the rate falls below `min_lr` (or after `epochs`).
Batches are length-bucketed and collated on the CPU, then moved to the model's device (on a GPU ahead of the
step by a prefetching thread; fused optimisers there).
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from mbertlab.prefetch import prefetched
from mbertlab.transfer.adapter import TaskAdapter, TaskModel, batch_to, train_batches
from mbertlab.transfer.config import TransferConfig
from mbertlab.transfer.encoder import FROZEN_MODES

# evaluate(step, epoch) scores every file and returns the source-dev score (None without a source dev file)
Evaluate = Callable[[int, float], "float | None"]


def _optimizer(config: TransferConfig, params: list, lr: float, total: int, device: torch.device):
    fused = device.type == "cuda" or None
    if config.mode in FROZEN_MODES:
        opt = torch.optim.Adam(params, lr=config.feature_lr, fused=fused)
        return opt, None
    warmup = max(1, int(config.warmup * total))
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=0.01, fused=fused)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup))))
    return opt, sched


def fit(adapter: TaskAdapter, model: TaskModel, items: list, config: TransferConfig, lr: float, batch_size: int,
        epochs: float, pad_id: int, evaluate: Evaluate) -> None:
    """One grid point: `epochs` passes (or `config.steps` steps) at `lr` and `batch_size`."""
    gen = torch.Generator().manual_seed(config.seed)
    per_epoch = max(1, -(-len(items) // batch_size))
    total = config.steps or max(1, int(epochs * per_epoch))
    every = config.eval_every or per_epoch
    params = [p for p in model.parameters() if p.requires_grad]
    device = model.device
    opt, sched = _optimizer(config, params, lr, total, device)
    frozen = config.mode in FROZEN_MODES
    best = -math.inf
    step = 0
    for _ in range(math.ceil(total / per_epoch)):
        model.train()
        collated = (adapter.collate(batch, pad_id) for batch in train_batches(adapter, items, batch_size, gen))
        for batch in prefetched(collated, lambda b: batch_to(b, device), device):
            if step >= total:
                break
            loss = model.loss(batch)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            if sched is not None:
                sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step % every == 0 or step == total:
                score = evaluate(step, step / per_epoch)
                model.train()
                if frozen and score is not None:
                    if score <= best:
                        for group in opt.param_groups:
                            group["lr"] /= 2
                    best = max(best, score)
                    if opt.param_groups[0]["lr"] < config.min_lr:
                        return
        if step >= total:
            return
