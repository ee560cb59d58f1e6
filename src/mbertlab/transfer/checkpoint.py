"""Transfer from one kept pretraining checkpoint rather than the final model (Wu & Dredze 2020 Fig. 4: dev
score against pretraining steps).

The pretraining loop keeps `checkpoints/step-N/` (a Hugging Face directory with the tokenizer) for the
newest `keep_checkpoints` saves. `run_transfer` only reads a pretrain artifact's final `model/`, so this
runs the same transfer on the checkpoint's directory and records the rows under its own artifact
(`ckpt_transfer/<hash>`), the model named `<stage>/<hash>@step-N`.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.transfer.config import TransferConfig


class CheckpointTransferConfig(Config):
    step: int = Field(ge=1, description="Pretraining step of the checkpoint (checkpoints/step-N).")
    transfer: TransferConfig


def run_checkpoint_transfer(config: CheckpointTransferConfig, store: ArtifactStore, results: ResultsDB,
                            pretrain: Artifact, data: Artifact, study: str = "") -> Artifact:
    """Build the `ckpt_transfer` artifact: `config.transfer` on checkpoint `config.step` of `pretrain`, data
    paths relative to the `data` artifact."""
    from mbertlab.transfer.encoder import checkpoint_dir  # torch: not needed to plan a study
    from mbertlab.transfer.run import run_transfer_into

    name = f"{pretrain.stage}/{pretrain.hash}@step-{config.step}"
    return store.build("ckpt_transfer", config, lambda out: run_transfer_into(
        config.transfer, checkpoint_dir(pretrain.path, config.step), Path(out), results, name, data.path, study),
        [pretrain, data])
