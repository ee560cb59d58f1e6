"""The pretraining objective behind one interface, so the loop makes one loss call whatever the objective:
masked LM (hard labels, + NSP with sentence pairs) or distillation from teachers (`pretrain.distill`).
`objective_for` picks one from the config through the explicit table OBJECTIVES."""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch

from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import Batch, MicroBatch
from mbertlab.pretrain.distill import CPU, Distiller
from mbertlab.pretrain.model import pretraining_loss
from mbertlab.tokenizers.shards import ShardReader


class Objective(Protocol):
    """What the loop asks of an objective: one loss per micro-batch (OBJECTIVES says how each is built)."""

    def loss(self, model, micro: MicroBatch) -> torch.Tensor:
        """The loss of a micro-batch or of one rank's slice of it (`MicroBatch.shard`): its sums over its masked
        positions divided by the whole micro-batch's counts, so that summing gradients over ranks gives the whole
        micro-batch's gradient."""
        ...


class MaskedLM:
    """Hard labels at the masked positions (BERT), plus next-sentence prediction when the batch has its labels."""

    @classmethod
    def from_config(cls, config: PretrainConfig, shards: ShardReader, device: torch.device = CPU) -> MaskedLM:
        """The signature OBJECTIVES expects; masked LM needs nothing from it."""
        return cls()

    def loss(self, model, micro: MicroBatch) -> torch.Tensor:
        batch = micro.batch
        masked = Batch(micro.inputs, batch.lang, batch.token_type_ids, batch.attention_mask, batch.nsp_labels)
        return pretraining_loss(model, masked, micro.selection())


OBJECTIVES: dict[str, Callable[[PretrainConfig, ShardReader, torch.device], Objective]] = {
    "mlm": MaskedLM.from_config,
    "distill": Distiller.from_config,
}


def objective_for(config: PretrainConfig, shards: ShardReader, device: torch.device = CPU) -> Objective:
    """The objective `config.objective` names, built for the run's device."""
    return OBJECTIVES[config.objective](config, shards, device)
