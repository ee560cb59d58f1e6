"""The pretraining loop: one function a reader can follow, over one `Run` that holds what it needs.

The objective (masked LM or distillation) is behind `pretrain.objective.Objective`: the loop makes one loss
call per micro-batch whichever it is. Checkpoints resume exactly (`pretrain.checkpoint`). Batches are drawn on
the CPU and moved to the run's device (on a GPU by a prefetching thread, `mbertlab.prefetch`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import torch

from mbertlab.errors import ConfigError
from mbertlab.pretrain.checkpoint import TrainState, copy_tokenizer, resume, save_checkpoint
from mbertlab.pretrain.config import PretrainConfig, check_against_run
from mbertlab.pretrain.data import Masker, MicroBatch, WindowSampler, dev_batches, training_data
from mbertlab.pretrain.distributed import World, world_from_env
from mbertlab.pretrain.evaluate import log_dev_scores
from mbertlab.pretrain.model import autocast_for, load_model, new_model
from mbertlab.pretrain.objective import Objective, objective_for
from mbertlab.pretrain.schedule import lr_at
from mbertlab.prefetch import prefetched
from mbertlab.progress import progress
from mbertlab.runtime import (attention_for, record_runtime, resolve_device, resolve_precision, seed_everything,
                              setup_torch, to_device)
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.tokenizers.shards import ShardReader


@dataclass
class Run:
    """Everything the loop reads or updates; `open_run` builds it (resumed from `out`'s newest checkpoint)."""

    config: PretrainConfig
    shards: ShardReader
    out: Path  # the artifact directory: checkpoints/, metrics.jsonl, model/
    world: World
    model: torch.nn.Module
    opt: torch.optim.Optimizer
    state: TrainState
    sampler: WindowSampler
    masker: Masker
    dev: dict[str, list]  # language -> fixed (inputs, labels) dev batches, on the device
    objective: Objective
    device: torch.device


def build_pretrain(store: ArtifactStore, config: PretrainConfig, shards: Artifact) -> Artifact:
    """The pretrain artifact, also under torchrun: rank 0 owns the store's build (lock, `.partial-<hash>`,
    rename); the other ranks train in that same directory and write nothing, so no rank waits on a lock
    the others hold. The config is checked against the shards first, so a rejected one leaves no directory."""
    check_against_run(config, ShardReader(shards.path))
    if not world_from_env(resolve_device(config.device)).main:
        hash_ = store.hash_for("pretrain", config, [shards])
        pretrain_into(config, shards.path, store.workdir / "pretrain" / f".partial-{hash_}")
        return Artifact("pretrain", hash_, store.workdir / "pretrain" / hash_)
    return store.build("pretrain", config, lambda out: pretrain_into(config, shards.path, Path(out)), [shards],
                       resumable=True)


def pretrain_into(config: PretrainConfig, shards_dir: Path, out: Path) -> None:
    """Train (or resume from the newest checkpoint in `out`) and save the final model to `out/model`.

    Under torchrun (or SLURM) every rank runs this with the same `out`; only rank 0 writes.
    """
    run = open_run(config, shards_dir, out)
    train(run)
    if run.world.main:
        if config.patience is not None:
            keep_best(run)
        run.model.save_pretrained(str(out / "model"))
        record_runtime(out, run.device, resolve_precision(config.precision, run.device))
        copy_tokenizer(run.shards.tokenizer_dir, out / "model")
    run.world.barrier()


def open_run(config: PretrainConfig, shards_dir: Path, out: Path) -> Run:
    """A fresh or resumed run. The order of these steps is the order of the RNG draws: keep it."""
    setup_torch()
    device = resolve_device(config.device)
    world = world_from_env(device)
    seed_everything(config.seed)
    shards = ShardReader(shards_dir)
    check_against_run(config, shards)
    if config.nsp and config.layout != "pairs":
        raise ConfigError("pretrain: nsp needs layout: pairs (next-sentence prediction is over sentence pairs)")
    attention = attention_for(device, config.model.attention)
    model = load_model(config.init_from, attention) if config.init_from else \
        new_model(config.model, shards.vocab_size, nsp=config.nsp, attention=attention)
    if config.seq_len > model.config.max_position_embeddings:  # init_from: the loaded model's table counts
        raise ConfigError(f"pretrain: key 'seq_len': {config.seq_len} exceeds the {config.init_from} model's "
                          f"{model.config.max_position_embeddings} positions")
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, betas=config.betas, weight_decay=config.weight_decay,
                            fused=device.type == "cuda" or None)  # fused made no difference on the CPU here
    state = TrainState(config)
    resume(out, model, opt, state)
    sampler, masker = training_data(config, shards)
    if config.compile:
        model.bert.compile()  # in place: parameter names, and so checkpoints, stay the same
    dev = {lang: [(to_device(i, device), to_device(l, device)) for i, l in batches]
           for lang, batches in dev_batches(config, shards, masker).items()}
    objective = objective_for(config, shards, world, device)
    return Run(config, shards, out, world, model, opt, state, sampler, masker, dev, objective, device)


def train(run: Run) -> None:
    """Optimiser steps from the run's step to `config.steps`, evaluating and checkpointing on rank 0."""
    config, model, opt, state, world = run.config, run.model, run.opt, run.state, run.world
    autocast = autocast_for(config, run.device)
    model.train()
    started, tokens, shown = time.time(), 0, None
    batches = micro_batches(run)
    with progress() as bar:
        task = bar.add_task("pretrain", total=config.steps, completed=state.step)
        while state.step < config.steps and not stopped(config, state):
            state.step += 1
            for group in opt.param_groups:
                group["lr"] = lr_at(state.step, config.lr, config.warmup, config.steps, config.schedule)
            loss, step_tokens = _accumulate_gradients(run, autocast, batches)
            tokens += step_tokens
            world.sum_gradients(model.parameters())
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            opt.step()
            opt.zero_grad(set_to_none=True)
            if shown is not None:  # the previous step's loss: reading it waits for that step only, so the GPU
                rate = tokens / max(1e-9, time.time() - started)  # keeps this step's queued work
                bar.update(task, description=f"pretrain loss {shown.item():.3f} {rate:,.0f} tok/s")
            shown = loss
            bar.update(task, advance=1)
            if state.step % config.checkpoint_every == 0 or state.step == config.steps:
                _evaluate_and_save(run, autocast)
            world.barrier()


def _evaluate_and_save(run: Run, autocast) -> None:
    """Rank 0 logs the dev scores, counts them toward early stopping and checkpoints; with `patience`, every
    rank learns the stop decision (a sum over ranks of rank 0's)."""
    config, state = run.config, run.state
    stop = False
    if run.world.main:
        losses = log_dev_scores(run.model, run.dev, state.step, run.out, autocast)
        if config.patience is not None:
            stop = state.should_stop(sum(losses.values()) / len(losses), config.patience)
        save_checkpoint(run.out, run.model, run.opt, state, run.shards.tokenizer_dir, config.keep_checkpoints)
    if config.patience is not None and run.world.size > 1:
        stop = bool(run.world.sum(torch.tensor(float(stop), device=run.device)).item())
    if stop:
        state.since_best = max(state.since_best, config.patience)


def stopped(config: PretrainConfig, state: TrainState) -> bool:
    """Early stopping reached (also when resuming a run that had stopped before its model was saved)."""
    return config.patience is not None and state.since_best >= config.patience


def keep_best(run: Run) -> None:
    """Load the best evaluation's weights (its checkpoint is never deleted) and record where the run stopped."""
    import json

    from safetensors.torch import load_file

    state = run.state
    if state.best_step and state.best_step != state.step:
        path = run.out / "checkpoints" / f"step-{state.best_step}" / "model.safetensors"
        run.model.load_state_dict(load_file(str(path)), strict=False)
        run.model.tie_weights()
    info = {"patience": run.config.patience, "best_step": state.best_step, "best_dev_loss": state.best_loss,
            "stopped_at": state.step, "stopped_early": state.step < run.config.steps}
    (run.out / "early_stopping.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def micro_batches(run: Run) -> Iterator[MicroBatch]:
    """The run's remaining global micro-batches in order, on its device. On a GPU a thread draws them ahead, so
    each carries the generator states after its own draw: a checkpoint saves those (`TrainState.drawn`)."""
    config, state = run.config, run.state
    rows = config.batch_size // config.accumulation  # the global micro-batch; each rank keeps its slice
    first = state.step * config.accumulation  # read now, before the loop advances the step
    ahead = run.device.type == "cuda"

    def draws():
        for index in range(first, config.steps * config.accumulation):
            micro = state.draw(run.sampler, run.masker, rows, index)
            yield micro, state.generators() if ahead else None

    def used():
        for micro, drawn in prefetched(draws(), lambda item: (item[0].to(run.device), item[1]), run.device):
            state.drawn = drawn
            yield micro

    return used()


def _accumulate_gradients(run: Run, autocast, batches: Iterator[MicroBatch]) -> tuple[torch.Tensor, int]:
    """Backpropagate the step's `accumulation` micro-batches; their loss summed over ranks (a tensor on the
    device, read later: no wait here), and the tokens."""
    total_loss, tokens = None, 0
    for _ in range(run.config.accumulation):
        micro = next(batches)
        with autocast():
            loss = run.objective.loss(run.model, micro) / run.config.accumulation
        loss.backward()
        total_loss = loss.detach() if total_loss is None else total_loss + loss.detach()
        tokens += micro.inputs.numel()  # [rows, S]
    return run.world.sum(total_loss.float()), tokens
