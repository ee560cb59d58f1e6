"""Exact checkpoint/resume of a pretraining run.

Resume restores model, optimiser, every RNG (data draws and masking; each rank's own torch, Python, NumPy and
CUDA generators) and the step, so a run killed with SIGKILL and resumed ends with the same weights (bitwise in
fp32 on the CPU, also with several ranks; on a GPU bitwise under deterministic algorithms, see docs/devices.md).
"""
from __future__ import annotations

import copy
import json
import logging
import pickle
import random
import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import torch

from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import Masker, MicroBatch, WindowSampler
from mbertlab.store.faults import storage_fault

log = logging.getLogger("mbertlab")


class TrainState:
    """Everything that must survive a kill besides the weights."""

    def __init__(self, config: PretrainConfig):
        self.step = 0
        self.data_rng = np.random.default_rng([config.seed, 1])
        self.mask_gen = torch.Generator().manual_seed(config.seed * 1000 + 2)
        self.drawn: dict | None = None  # generator states after the last micro-batch used, when drawn ahead
        self.ranks: list[dict] | None = None  # every rank's `process_rng()`, gathered by the loop at a checkpoint
        self.resumed: dict | None = None  # the state last loaded (rank 0 hands it to the other ranks)
        self.best_loss, self.best_step, self.since_best = float("inf"), 0, 0  # early stopping (`patience`)

    def generators(self) -> dict:
        """A copy of the data and mask generators' states (a prefetching thread draws ahead of the step: a
        checkpoint must save the states as of the last micro-batch the step used, not the last drawn)."""
        return {"data_rng": copy.deepcopy(self.data_rng.bit_generator.state), "mask_gen": self.mask_gen.get_state()}

    def draw(self, sampler: WindowSampler, masker: Masker, rows: int, index: int) -> MicroBatch:
        """The next global micro-batch (`index` is its global number). Nothing else draws from the data and mask
        generators, so a run's micro-batches are a pure function of its seed, data settings and shards."""
        batch = sampler.draw(self.data_rng, rows)  # [rows, S], on every rank
        inputs, labels = masker(batch.input_ids, self.mask_gen)
        return MicroBatch(index, batch, inputs, labels)

    def state_dict(self) -> dict:
        return {"step": self.step, **(self.drawn or self.generators()), "ranks": self.ranks or [process_rng()],
                "best": (self.best_loss, self.best_step, self.since_best)}

    def load_state_dict(self, state: dict, rank: int = 0) -> None:
        """Restore the step, the data generators and rank `rank`'s own RNG states (a checkpoint of fewer ranks
        gives rank k the entry k modulo their number: resuming with other ranks cannot replay their dropout)."""
        self.step, self.resumed = state["step"], state
        self.best_loss, self.best_step, self.since_best = state.get("best", (float("inf"), 0, 0))
        self.data_rng.bit_generator.state = state["data_rng"]
        self.mask_gen.set_state(state["mask_gen"])
        ranks = state.get("ranks") or [state]  # checkpoints before per-rank states kept rank 0's at the top
        set_process_rng(ranks[rank % len(ranks)])

    def should_stop(self, loss: float, patience: int) -> bool:
        """Record an evaluation's mean dev loss; True once `patience` evaluations in a row brought no gain."""
        if loss < self.best_loss:
            self.best_loss, self.best_step, self.since_best = loss, self.step, 0
        else:
            self.since_best += 1
        return self.since_best >= patience


def process_rng() -> dict:
    """This process's own RNG states: torch's CPU generator (dropout on the CPU), Python's, NumPy's global one,
    and its GPU's (dropout there; each rank's GPU draws its own stream)."""
    state = {"torch": torch.get_rng_state(), "python": random.getstate(), "numpy": np.random.get_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = torch.cuda.get_rng_state()  # the current device: this rank's
    return state


def set_process_rng(state: dict) -> None:
    torch.set_rng_state(state["torch"])
    random.setstate(state["python"])
    np.random.set_state(state["numpy"])
    cuda = state.get("cuda")
    if cuda is not None and torch.cuda.is_available():
        if isinstance(cuda, list):  # an older checkpoint's every-device list, from one process
            if len(cuda) == torch.cuda.device_count():
                torch.cuda.set_rng_state_all(cuda)
        else:
            torch.cuda.set_rng_state(cuda)


def copy_tokenizer(src: Path, dst: Path) -> None:
    """The tokenizer files beside a saved model, so the directory loads as a Hugging Face model."""
    for item in src.iterdir():
        if item.is_file() and item.name != "config.json":
            shutil.copy2(item, dst / item.name)


def save_checkpoint(out: Path, model, opt, state: TrainState, tokenizer_dir: Path, keep: int) -> None:
    """Write checkpoints/step-N atomically (temp dir, then rename); keep the newest `keep`, and the best
    evaluation's (early stopping reads its weights at the end)."""
    root = out / "checkpoints"
    tmp = root / f".tmp-step-{state.step}"
    shutil.rmtree(tmp, ignore_errors=True)
    written(tmp / "model.safetensors", lambda: model.save_pretrained(str(tmp)))
    written(tmp, lambda: copy_tokenizer(tokenizer_dir, tmp))
    state_file = tmp / "trainer_state.pt"
    written(state_file, lambda: torch.save({"optimizer": opt.state_dict(), "state": state.state_dict()}, state_file))
    final = root / f"step-{state.step}"
    shutil.rmtree(final, ignore_errors=True)
    tmp.rename(final)
    for step, old in list_checkpoints(out)[:-keep]:
        if step != state.best_step:
            shutil.rmtree(old)


def written(path: Path, write: Callable[[], object]) -> None:
    """Run `write`; a full disk or another refusal of the file system is one line naming `path`, the file being
    written: torch's and safetensors' errors name no file, and a copy's OSError names its source."""
    try:
        write()
    except Exception as err:
        fault = storage_fault(err, path)
        if fault is None:
            raise
        raise fault from err


def list_checkpoints(out: Path) -> list[tuple[int, Path]]:
    """(step, directory) of every complete checkpoint, oldest first."""
    root = Path(out) / "checkpoints"
    if not root.is_dir():
        return []
    found = [(int(p.name.split("-")[1]), p) for p in root.glob("step-*") if (p / "trainer_state.pt").is_file()]
    return sorted(found)


def resume(out: Path, model, opt, state: TrainState) -> None:
    """Load the newest intact checkpoint in `out`, if any, into model, optimiser and state.

    A newer checkpoint that cannot be read (its files cut short: a disk that filled or lost power before the
    data reached it) is skipped with one warning line; it is not deleted, and the run writes it anew when it
    reaches that step again. Saves cut short (`.tmp-step-N`, never loaded) are removed to free their space."""
    for unfinished in (Path(out) / "checkpoints").glob(".tmp-step-*"):
        shutil.rmtree(unfinished, ignore_errors=True)
    for step, path in reversed(list_checkpoints(out)):
        saved = _read_checkpoint(path)
        if saved is None:
            continue
        weights, trainer = saved
        model.load_state_dict(weights, strict=False)
        model.tie_weights()
        opt.load_state_dict(trainer["optimizer"])
        state.load_state_dict(trainer["state"])
        drop_metrics_after(out, step)
        log.info("resumed from %s", path)
        return
    drop_metrics_after(out, 0)  # no checkpoint, or killed after the first evaluation, before its checkpoint


def _read_checkpoint(path: Path) -> tuple[dict, dict] | None:
    """A checkpoint's weights and trainer state, both read before either is applied; None if unreadable."""
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        weights = load_file(str(path / "model.safetensors"))
        # on the CPU: RNG states must be CPU byte tensors; the optimiser state moves to its parameters' device
        trainer = torch.load(path / "trainer_state.pt", weights_only=False, map_location="cpu")
        return weights, trainer
    except (OSError, RuntimeError, EOFError, ValueError, pickle.UnpicklingError, SafetensorError) as err:
        reason = (str(err) or type(err).__name__).splitlines()[0][:160]
        message = f"checkpoint {path} is unreadable ({reason}); skipped, trying the one before it"
        log.warning(message)
        return None


def drop_metrics_after(out: Path, step: int) -> None:
    """Drop evaluations logged after `step`, the checkpoint a run resumes from: the resumed run logs them
    again, and a kill between evaluation and checkpoint would otherwise leave each such step twice."""
    metrics = Path(out) / "metrics.jsonl"
    if metrics.exists():
        rows = [l for l in metrics.read_text().splitlines() if _step_of(l) <= step]
        metrics.write_text("".join(r + "\n" for r in rows))


def _step_of(line: str) -> float:
    """A row's step; a line cut short by a kill mid-write counts as after every checkpoint."""
    try:
        return json.loads(line)["step"]
    except (ValueError, KeyError, TypeError):
        return float("inf")
