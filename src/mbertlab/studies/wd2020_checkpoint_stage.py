"""Stage kind `wd2020_checkpoint`: fine-tune and score one saved pretraining checkpoint (Wu & Dredze 2020
Fig. 4); the work is `mbertlab.transfer.checkpoint`, this adapts it to the runner."""
from __future__ import annotations

from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import RunContext
from mbertlab.transfer.checkpoint import CheckpointTransferConfig, run_checkpoint_transfer


def _build(config: CheckpointTransferConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    pretrain, data = inputs
    return run_checkpoint_transfer(config, ctx.store, ctx.results, pretrain, data, ctx.study)
