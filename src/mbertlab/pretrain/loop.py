"""The pretraining loop: one function a reader can follow, plus exact checkpoint/resume.

Resume restores model, optimiser, every RNG (Python, NumPy data draws, torch, masking) and the
step, so a run killed with SIGKILL and resumed ends with the same weights (bitwise in fp32).
"""
from __future__ import annotations

import contextlib
import json
import logging
import math
import random
import shutil
import time
from pathlib import Path

import numpy as np
import torch

from mbertlab.errors import ConfigError
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import IGNORE, Batch, Masker, PairSampler, WindowSampler
from mbertlab.pretrain.distill import Distiller
from mbertlab.pretrain.distributed import World, world_from_env
from mbertlab.pretrain.model import bf16_supported, load_model, masked_logits, new_model, pretraining_loss
from mbertlab.pretrain.schedule import lr_at
from mbertlab.progress import progress
from mbertlab.runtime import seed_everything, setup_torch
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.tokenizers.shards import ShardReader

log = logging.getLogger("mbertlab")


class TrainState:
    """Everything that must survive a kill besides the weights."""

    def __init__(self, config: PretrainConfig):
        self.step = 0
        self.data_rng = np.random.default_rng([config.seed, 1])
        self.mask_gen = torch.Generator().manual_seed(config.seed * 1000 + 2)

    def state_dict(self) -> dict:
        return {"step": self.step, "data_rng": self.data_rng.bit_generator.state,
                "mask_gen": self.mask_gen.get_state(), "torch": torch.get_rng_state(),
                "python": random.getstate(), "numpy": np.random.get_state()}

    def load_state_dict(self, state: dict) -> None:
        self.step = state["step"]
        self.data_rng.bit_generator.state = state["data_rng"]
        self.mask_gen.set_state(state["mask_gen"])
        torch.set_rng_state(state["torch"])
        random.setstate(state["python"])
        np.random.set_state(state["numpy"])


def build_pretrain(store: ArtifactStore, config: PretrainConfig, shards: Artifact) -> Artifact:
    """The pretrain artifact, also under torchrun: rank 0 owns the store's build (lock, `.partial-<hash>`,
    rename); the other ranks train in that same directory and write nothing, so no rank waits on a lock
    the others hold."""
    if not world_from_env().main:
        hash_ = store.hash_for("pretrain", config, [shards])
        pretrain_into(config, shards.path, store.workdir / "pretrain" / f".partial-{hash_}")
        return Artifact("pretrain", hash_, store.workdir / "pretrain" / hash_)
    return store.build("pretrain", config, lambda out: pretrain_into(config, shards.path, Path(out)), [shards],
                       resumable=True)


def pretrain_into(config: PretrainConfig, shards_dir: Path, out: Path) -> None:
    """Train (or resume from the newest checkpoint in `out`) and save the final model to `out/model`.

    Under torchrun (or SLURM) every rank runs this with the same `out`; only rank 0 writes.
    """
    setup_torch()
    world = world_from_env()
    seed_everything(config.seed)
    shards = ShardReader(shards_dir)
    if config.nsp and config.layout != "pairs":
        raise ConfigError("pretrain: nsp needs layout: pairs (next-sentence prediction is over sentence pairs)")
    model = load_model(config.init_from, config.model.attention) if config.init_from else \
        new_model(config.model, shards.vocab_size, nsp=config.nsp)
    opt = torch.optim.AdamW(model.parameters(), lr=config.lr, betas=config.betas, weight_decay=config.weight_decay)
    state = TrainState(config)
    _resume(out, model, opt, state)
    sampler, masker = training_data(config, shards)
    if config.compile:
        model.bert.compile()  # in place: parameter names, and so checkpoints, stay the same
    dev = dev_batches(config, shards, masker)
    distiller = Distiller.from_config(config, shards, world) if config.objective == "distill" else None
    _train(config, model, opt, state, sampler, masker, dev, distiller, shards, out, world)
    if world.main:
        model.save_pretrained(str(out / "model"))
        _copy_tokenizer(shards.tokenizer_dir, out / "model")
    world.barrier()


def training_data(config: PretrainConfig, shards: ShardReader) -> tuple[WindowSampler, Masker]:
    """The batch sampler and masker; with a fresh TrainState they replay the same batches in every run."""
    info = json.loads((shards.tokenizer_dir / "mbertlab_tokenizer.json").read_text())
    markers = _marker_ids(shards) if config.markers else None
    within = config.mixing == "within_batch"
    if config.layout == "pairs":
        sampler = PairSampler(shards, "train", config.seq_len, config.alpha, config.permute, markers, within,
                              nsp=config.nsp)
    else:
        sampler = WindowSampler(shards, "train", config.seq_len, config.alpha, config.permute, markers, within)
    counts = shards.token_counts() if config.selection == "rare" else None
    return sampler, Masker(shards.vocab_size, info["specials"], config.mask_prob, counts)


def autocast_for(config: PretrainConfig):
    """A factory of the run's autocast context: bf16 when asked for, or on `auto` where the CPU has it."""
    if config.precision == "bf16" or (config.precision == "auto" and bf16_supported()):
        return lambda: torch.autocast("cpu", dtype=torch.bfloat16)
    return contextlib.nullcontext


def _train(config, model, opt, state, sampler, masker, dev, distiller, shards, out, world: World) -> None:
    micro = config.batch_size // config.accumulation
    autocast = autocast_for(config)
    model.train()
    started, tokens = time.time(), 0
    with progress() as bar:
        task = bar.add_task("pretrain", total=config.steps, completed=state.step)
        while state.step < config.steps:
            state.step += 1
            for group in opt.param_groups:
                group["lr"] = lr_at(state.step, config.lr, config.warmup, config.steps, config.schedule)
            total_loss = 0.0
            for i in range(config.accumulation):
                langs = distiller.row_languages(sampler, state.data_rng, micro) if distiller else None
                batch = sampler.draw(state.data_rng, micro)  # the global micro-batch, on every rank
                inputs, labels = masker(batch.input_ids, state.mask_gen)
                selected = int((labels != IGNORE).sum())
                with autocast():
                    if distiller:  # keyed by the micro-batch's global index, for the top-k cache
                        loss = distiller.loss(model, batch, inputs, labels, langs,
                                              (state.step - 1) * config.accumulation + i)
                    else:
                        loss = pretraining_loss(model, _slice(batch, inputs, world), world.shard(labels), selected,
                                                len(inputs))
                    loss = loss / config.accumulation
                loss.backward()
                total_loss += world.sum(loss.item())
                tokens += inputs.numel()
            world.sum_gradients(model.parameters())
            torch.nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            opt.step()
            opt.zero_grad(set_to_none=True)
            rate = tokens / max(1e-9, time.time() - started)
            bar.update(task, advance=1, description=f"pretrain loss {total_loss:.3f} {rate:,.0f} tok/s")
            if (state.step % config.checkpoint_every == 0 or state.step == config.steps) and world.main:
                _evaluate(model, dev, state.step, out, autocast)
                _checkpoint(out, model, opt, state, shards, config.keep_checkpoints)
            world.barrier()


def _slice(batch: Batch, inputs: torch.Tensor, world: World) -> Batch:
    """This rank's rows of a masked global batch."""
    part = lambda t: None if t is None else world.shard(t)  # noqa: E731
    return Batch(world.shard(inputs), batch.lang, part(batch.token_type_ids), part(batch.attention_mask),
                 part(batch.nsp_labels))


def _marker_ids(shards: ShardReader) -> dict[str, int]:
    from tokenizers import Tokenizer

    from mbertlab.tokenizers.train import marker_token

    tokenizer = Tokenizer.from_file(str(shards.tokenizer_dir / "tokenizer.json"))
    ids = {lang: tokenizer.token_to_id(marker_token(lang)) for lang in shards.languages}
    missing = [l for l, i in ids.items() if i is None]
    if missing:
        raise ConfigError(f"pretrain: markers need a tokenizer trained with markers: true "
                          f"(no {', '.join(marker_token(l) for l in missing)})")
    return ids


def dev_batches(config: PretrainConfig, shards: ShardReader, masker: Masker) -> dict[str, list]:
    """Fixed dev windows and masks per language, so scores are comparable across checkpoints."""
    rng = np.random.default_rng([config.seed, 99])
    gen = torch.Generator().manual_seed(config.seed + 99)
    out = {}
    for lang in shards.languages:
        stream = shards.tokens(lang, "dev")
        batches = []
        for _ in range(config.eval_batches):
            starts = rng.integers(0, max(1, len(stream) - config.seq_len), size=32)
            windows = torch.from_numpy(np.stack([np.asarray(stream[s:s + config.seq_len], dtype=np.int64)
                                                 for s in starts]))
            batches.append(masker(windows, gen))
        out[lang] = batches
    return out


@torch.inference_mode()
def dev_scores(model, batches: list, autocast) -> tuple[float, float]:
    """Dev MLM loss (nats per masked token) and mean reciprocal rank of the gold token over fixed batches."""
    losses, rr = [], []
    for inputs, labels in batches:
        with autocast():
            logits, gold = masked_logits(model, inputs, labels)
        logits = logits.float()
        losses.append(torch.nn.functional.cross_entropy(logits, gold, reduction="sum").item())
        gold_logit = logits.gather(1, gold[:, None])
        rr += (1.0 / ((logits > gold_logit).sum(1) + 1).double()).tolist()
    return sum(losses) / max(1, len(rr)), float(np.mean(rr))


def _evaluate(model, dev, step: int, out: Path, autocast) -> None:
    """Dev MLM loss, perplexity and mean reciprocal rank of the gold token, per language."""
    model.eval()
    with (out / "metrics.jsonl").open("a", encoding="utf-8") as f:
        for lang, batches in dev.items():
            loss, mrr = dev_scores(model, batches, autocast)
            row = {"step": step, "lang": lang, "loss": loss, "ppl": math.exp(min(loss, 50)), "mrr": mrr}
            f.write(json.dumps(row) + "\n")
            log.info("step %d %s dev loss %.3f mrr %.3f", step, lang, loss, row["mrr"])
    model.train()


def _copy_tokenizer(src: Path, dst: Path) -> None:
    for item in src.iterdir():
        if item.is_file() and item.name != "config.json":
            shutil.copy2(item, dst / item.name)


def _checkpoint(out: Path, model, opt, state: TrainState, shards: ShardReader, keep: int) -> None:
    """Write checkpoints/step-N atomically (temp dir, then rename); keep the newest `keep`."""
    root = out / "checkpoints"
    tmp = root / f".tmp-step-{state.step}"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    _copy_tokenizer(shards.tokenizer_dir, tmp)
    torch.save({"optimizer": opt.state_dict(), "state": state.state_dict()}, tmp / "trainer_state.pt")
    final = root / f"step-{state.step}"
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for _, old in list_checkpoints(out)[:-keep]:
        shutil.rmtree(old)


def list_checkpoints(out: Path) -> list[tuple[int, Path]]:
    """(step, directory) of every complete checkpoint, oldest first."""
    root = Path(out) / "checkpoints"
    if not root.is_dir():
        return []
    found = [(int(p.name.split("-")[1]), p) for p in root.glob("step-*") if (p / "trainer_state.pt").is_file()]
    return sorted(found)


def _resume(out: Path, model, opt, state: TrainState) -> None:
    checkpoints = list_checkpoints(out)
    if not checkpoints:
        return
    step, path = checkpoints[-1]
    from safetensors.torch import load_file

    model.load_state_dict(load_file(str(path / "model.safetensors")), strict=False)
    model.tie_weights()
    saved = torch.load(path / "trainer_state.pt", weights_only=False)
    opt.load_state_dict(saved["optimizer"])
    state.load_state_dict(saved["state"])
    metrics = out / "metrics.jsonl"
    if metrics.exists():  # drop evaluations logged after the checkpoint we resume from
        rows = [l for l in metrics.read_text().splitlines() if json.loads(l)["step"] <= step]
        metrics.write_text("".join(r + "\n" for r in rows))
    log.info("resumed from %s", path)
