"""The pretraining loop: one function a reader can follow, over one `Run` that holds what it needs.

The objective (masked LM or distillation) is behind `pretrain.objective.Objective`: the loop makes one loss
call per micro-batch whichever it is. Checkpoints resume exactly (`pretrain.checkpoint`). Batches are drawn on
the CPU, with their masked positions and counts, and moved to the run's device (on a GPU by a prefetching thread,
`mbertlab.prefetch`); the step reads nothing back from the device except the loss every `log_every` steps.
Data parallelism is PyTorch's DistributedDataParallel (`pretrain.distributed`); rank 0 alone reads and writes files.
"""
from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import torch

from mbertlab.errors import ConfigError
from mbertlab.pretrain.checkpoint import TrainState, copy_tokenizer, process_rng, resume, save_checkpoint
from mbertlab.pretrain.config import PretrainConfig, check_against_run
from mbertlab.pretrain.data import (Masker, MicroBatch, WindowSampler, dev_batches, training_data,
                                    with_epoch_steps)
from mbertlab.pretrain.distributed import World, no_sync, world_from_env
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


class LossModule(torch.nn.Module):
    """The model and its objective as one module whose forward is the loss: DistributedDataParallel hooks the
    forward of the module it wraps, and the objectives call the encoder and the head, not `model.forward`."""

    def __init__(self, model: torch.nn.Module, objective: Objective):
        super().__init__()
        self.model, self.objective = model, objective  # teachers live in the objective: not DDP's parameters

    def forward(self, micro: MicroBatch) -> torch.Tensor:
        return self.objective.loss(self.model, micro)


@dataclass
class Run:
    """Everything the loop reads or updates; `open_run` builds it (resumed from `out`'s newest checkpoint)."""

    config: PretrainConfig
    shards: ShardReader
    out: Path | None  # the artifact directory (checkpoints/, metrics.jsonl, model/); None on ranks other than 0
    world: World
    model: torch.nn.Module
    step: torch.nn.Module  # LossModule, under DistributedDataParallel with several ranks
    opt: torch.optim.Optimizer
    state: TrainState
    sampler: WindowSampler
    masker: Masker
    dev: dict[str, list]  # language -> fixed (inputs, labels) dev batches, on the device (rank 0's)
    device: torch.device


def build_pretrain(store: ArtifactStore, config: PretrainConfig, shards: Artifact) -> Artifact:
    """The pretrain artifact, also under torchrun: rank 0 alone goes through the store (lock, `.partial-<hash>`,
    rename) and tells the others whether it trains; they train beside it without touching any file and return
    once the artifact is in place (at once when it already was). The config is checked against the shards first,
    so a rejected one leaves no directory."""
    check_against_run(config, ShardReader(shards.path))
    world = world_from_env(resolve_device(config.device))
    if world.size == 1:
        return store.build("pretrain", config, lambda out: pretrain_into(config, shards.path, Path(out)), [shards],
                           resumable=True)
    with world.failures("pretrain"):
        if not world.main:
            if world.broadcast(None):  # rank 0 is training
                pretrain_into(config, shards.path, None, world)
            world.barrier()  # rank 0 has renamed the artifact into place
            hash_ = store.hash_for("pretrain", config, [shards])
            return Artifact("pretrain", hash_, store.workdir / "pretrain" / hash_)
        trained = []

        def builder(out: Path) -> None:
            trained.append(world.broadcast(True))
            pretrain_into(config, shards.path, Path(out), world)

        artifact = store.build("pretrain", config, builder, [shards], resumable=True)
        if not trained:
            world.broadcast(False)
        world.barrier()
        return artifact


def pretrain_into(config: PretrainConfig, shards_dir: Path, out: Path | None, world: World | None = None) -> None:
    """Train (or resume from the newest checkpoint in `out`) and save the final model to `out/model`.

    Under torchrun (or SLURM) every rank runs this; rank 0 with the artifact's directory, the others with None.
    """
    run = open_run(config, shards_dir, out, world)
    with run.world.failures("pretrain"):
        train(run)
    if run.world.main:
        if config.patience is not None:
            keep_best(run)
        run.model.save_pretrained(str(out / "model"))
        record_runtime(out, run.device, resolve_precision(config.precision, run.device))
        copy_tokenizer(run.shards.tokenizer_dir, out / "model")


def open_run(config: PretrainConfig, shards_dir: Path, out: Path | None, world: World | None = None) -> Run:
    """A fresh or resumed run. The order of these steps is the order of the RNG draws: keep it."""
    setup_torch()
    device = resolve_device(config.device)
    world = world or world_from_env(device)
    seed_everything(config.seed)
    shards = ShardReader(shards_dir)
    config = with_epoch_steps(config, shards)
    check_against_run(config, shards)
    if config.nsp and config.layout != "pairs":
        raise ConfigError("pretrain: nsp needs layout: pairs (next-sentence prediction is over sentence pairs)")
    attention = attention_for(device, config.model.attention)
    model = load_model(config.init_from, attention) if config.init_from else \
        new_model(config.model, shards.vocab_size, nsp=config.nsp, attention=attention)
    if config.seq_len > model.config.max_position_embeddings:  # init_from: the loaded model's table counts
        raise ConfigError(f"pretrain: key 'seq_len': {config.seq_len} exceeds the {config.init_from} model's "
                          f"{model.config.max_position_embeddings} positions")
    if config.warmup > config.steps and world.main:  # a warning: a short run of a longer schedule is a valid test
        logging.getLogger("mbertlab").warning(
            f"pretrain: key 'warmup': {config.warmup} is longer than steps ({config.steps}), so the learning rate "
            f"never reaches lr ({config.lr:g}); set warmup to at most steps for the whole schedule to run")
    if world.rank:  # each rank its own dropout stream (rank 0's is one process's); weights come from rank 0
        torch.manual_seed(config.seed + world.rank)
    model.to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, betas=config.betas, weight_decay=config.weight_decay,
                            fused=device.type == "cuda" or None)  # fused made no difference on the CPU here
    state = TrainState(config)
    with world.failures("pretrain"):
        _resume(out, model, opt, state, world)
    sampler, masker = training_data(config, shards)
    if config.compile:  # in place: parameter names, and so checkpoints, stay the same
        model.bert.compile(**({} if config.compile is True else {"mode": config.compile}))
    dev = {lang: [(to_device(i, device), to_device(l, device)) for i, l in batches]
           for lang, batches in dev_batches(config, shards, masker).items()} if world.main else {}
    with world.failures("pretrain"):  # DDP broadcasts rank 0's (resumed) weights as it wraps the model
        step = world.wrap(LossModule(model, objective_for(config, shards, device)))
    return Run(config, shards, out, world, model, step, opt, state, sampler, masker, dev, device)


def _resume(out: Path | None, model, opt, state: TrainState, world: World) -> None:
    """Rank 0 loads the newest checkpoint in `out`; the other ranks receive its optimiser state and training
    state (each restoring its own RNG entry) and never read the directory. The weights reach them when
    DistributedDataParallel broadcasts rank 0's."""
    if world.main:
        resume(out, model, opt, state)
    if world.size == 1:
        return
    from torch.utils._pytree import tree_map

    on_cpu = lambda t: t.cpu() if isinstance(t, torch.Tensor) else t  # noqa: E731 (not rank 0's GPU elsewhere)
    shared = world.broadcast((tree_map(on_cpu, opt.state_dict()), state.resumed) if world.main else None)
    if not world.main and shared[1] is not None:
        opt.load_state_dict(shared[0])  # moved to this rank's parameters' device
        state.load_state_dict(shared[1], world.rank)


def train(run: Run) -> None:
    """Optimiser steps from the run's step to `config.steps`, evaluating and checkpointing on rank 0. The loss is
    read back (summed over ranks) every `log_every` steps only: the host never waits on the device otherwise."""
    config, model, opt, state = run.config, run.model, run.opt, run.state
    autocast = autocast_for(config, run.device)
    run.step.train()
    started, tokens = time.time(), 0
    batches = micro_batches(run)
    with progress() as bar:
        task = bar.add_task("pretrain", total=config.steps, completed=state.step)
        while state.step < config.steps and not stopped(config, state):
            state.step += 1
            for group in opt.param_groups:
                group["lr"] = lr_at(state.step, config.lr, config.warmup, config.steps, config.schedule)
            loss, step_tokens = _accumulate_gradients(run, autocast, batches)
            tokens += step_tokens
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            opt.step()
            opt.zero_grad(set_to_none=True)
            if state.step % config.log_every == 0 or state.step == config.steps:
                shown = run.world.sum(loss).item()
                rate = tokens / max(1e-9, time.time() - started)
                bar.update(task, description=f"pretrain loss {shown:.3f} {rate:,.0f} tok/s")
            bar.update(task, advance=1)
            if state.step % config.checkpoint_every == 0 or state.step == config.steps:
                _evaluate_and_save(run, autocast)


def _evaluate_and_save(run: Run, autocast) -> None:
    """Rank 0 logs the dev scores, counts them toward early stopping and checkpoints (with every rank's RNG
    states, gathered here); with `patience`, every rank learns rank 0's stop decision."""
    config, state = run.config, run.state
    stop = False
    ranks = run.world.gather(process_rng()) if run.world.size > 1 else None
    if run.world.main:
        losses = log_dev_scores(run.model, run.dev, state.step, run.out, autocast)
        if config.patience is not None:
            stop = state.should_stop(sum(losses.values()) / len(losses), config.patience)
        state.ranks = ranks
        save_checkpoint(run.out, run.model, run.opt, state, run.shards.tokenizer_dir, config.keep_checkpoints)
    if config.patience is not None:
        stop = run.world.broadcast(stop)
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
    """This rank's slices of the run's remaining global micro-batches in order, with their masked positions found
    on the CPU, on its device. On a GPU a thread draws them ahead, so each carries the generator states after its
    own draw: a checkpoint saves those (`TrainState.drawn`)."""
    config, state, world = run.config, run.state, run.world
    rows = config.batch_size // config.accumulation  # the global micro-batch; each rank keeps its slice
    first = state.step * config.accumulation  # read now, before the loop advances the step
    ahead = run.device.type == "cuda"

    def draws():
        for index in range(first, config.steps * config.accumulation):
            micro = state.draw(run.sampler, run.masker, rows, index)
            yield micro.shard(world.rank, world.size), state.generators() if ahead else None

    def used():
        for micro, drawn in prefetched(draws(), lambda item: (item[0].to(run.device), item[1]), run.device):
            state.drawn = drawn
            yield micro

    return used()


def _accumulate_gradients(run: Run, autocast, batches: Iterator[MicroBatch]) -> tuple[torch.Tensor, int]:
    """Backpropagate the step's `accumulation` micro-batches, all-reducing gradients (DDP) after the last one
    only; this rank's share of their loss (a tensor on the device: no wait here), and the tokens of all ranks.

    DDP averages gradients over ranks, but each rank's loss is already its share of the global batch's (divided
    by the global counts): the loss is scaled by the number of ranks so that the average is the sum."""
    total_loss, tokens, n = None, 0, run.config.accumulation
    for i in range(n):
        micro = next(batches)
        with no_sync(run.step) if i < n - 1 else contextlib.nullcontext():
            with autocast():
                loss = run.step(micro) / n
            (loss * run.world.size if run.world.size > 1 else loss).backward()
        total_loss = loss.detach() if total_loss is None else total_loss + loss.detach()
        tokens += micro.inputs.numel() * run.world.size  # [rows, S] per rank
    return total_loss.float(), tokens
