"""The pretraining objective behind one interface, so the loop makes one loss call whatever the objective:
masked LM (hard labels, + NSP with sentence pairs) or distillation from teachers (`pretrain.distill`).
`objective_for` picks one from the config through the explicit table OBJECTIVES."""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch

from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import IGNORE, Batch, MicroBatch
from mbertlab.pretrain.distill import CPU, Distiller
from mbertlab.pretrain.distributed import World
from mbertlab.pretrain.model import pretraining_loss
from mbertlab.tokenizers.shards import ShardReader


class Objective(Protocol):
    """What the loop asks of an objective: one loss per micro-batch (OBJECTIVES says how each is built)."""

    def loss(self, model, micro: MicroBatch) -> torch.Tensor:
        """This rank's share of the global micro-batch's loss: its rows' sums over their masked positions divided
        by the global counts, so that summing gradients over ranks gives the whole micro-batch's gradient."""
        ...


class MaskedLM:
    """Hard labels at the masked positions (BERT), plus next-sentence prediction when the batch has its labels."""

    def __init__(self, world: World):
        self.world = world

    @classmethod
    def from_config(cls, config: PretrainConfig, shards: ShardReader, world: World,
                    device: torch.device = CPU) -> MaskedLM:
        """The signature OBJECTIVES expects; masked LM needs only the rank."""
        return cls(world)

    def loss(self, model, micro: MicroBatch) -> torch.Tensor:
        part = lambda t: None if t is None else self.world.shard(t)  # noqa: E731  (this rank's rows)
        batch = micro.batch
        mine = Batch(part(micro.inputs), batch.lang, part(batch.token_type_ids), part(batch.attention_mask),
                     part(batch.nsp_labels))
        selected = int((micro.labels != IGNORE).sum())  # over the global micro-batch
        return pretraining_loss(model, mine, part(micro.labels), selected, len(micro.inputs))


OBJECTIVES: dict[str, Callable[[PretrainConfig, ShardReader, World, torch.device], Objective]] = {
    "mlm": MaskedLM.from_config,
    "distill": Distiller.from_config,
}


def objective_for(config: PretrainConfig, shards: ShardReader, world: World, device: torch.device = CPU) -> Objective:
    """The objective `config.objective` names, built for this rank and its device."""
    return OBJECTIVES[config.objective](config, shards, world, device)
