"""Stage kind `wd2020_checkpoint`: fine-tune and score one saved pretraining checkpoint (Wu & Dredze 2020
Fig. 4, dev score against pretraining steps).

The pretraining loop keeps `checkpoints/step-N/` (a Hugging Face directory with the tokenizer) for the
newest `keep_checkpoints` saves; the wd2020 design sets that to keep every one. The transfer stage only
reads a pretrain artifact's final `model/`, so this stage calls the transfer library on the checkpoint's
directory itself, and records its rows under its own artifact (`ckpt_transfer/<hash>`).
"""
from __future__ import annotations

from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import RunContext
from mbertlab.transfer.config import TransferConfig


class CheckpointTransferConfig(Config):
    step: int = Field(ge=1, description="Pretraining step of the checkpoint (checkpoints/step-N).")
    transfer: TransferConfig


def checkpoint_dir(pretrain: Artifact, step: int) -> Path:
    path = pretrain.path / "checkpoints" / f"step-{step}"
    if not (path / "config.json").is_file():
        kept = sorted(p.name for p in (pretrain.path / "checkpoints").glob("step-*"))
        raise DataError(path, None, f"no such checkpoint (kept: {', '.join(kept) or 'none'}; raise the pretrain "
                        "config's keep_checkpoints to keep every save)")
    return path


def _build(config: CheckpointTransferConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.transfer.run import run_transfer_into

    pretrain, data = inputs
    name = f"{pretrain.stage}/{pretrain.hash}@step-{config.step}"
    return ctx.store.build("ckpt_transfer", config, lambda out: run_transfer_into(
        config.transfer, checkpoint_dir(pretrain, config.step), Path(out), ctx.results, name, data.path, ctx.study),
        inputs)

