"""The pretraining objective behind one interface, so the loop makes one loss call whatever the objective:
masked LM (hard labels, + NSP with sentence pairs) or distillation from teachers (`Distiller`: the losses and
teachers in `pretrain.distill`, the top-k cache in `pretrain.teacher_cache`).
`objective_for` picks one from the config through the explicit table OBJECTIVES."""
from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import torch
import torch.nn.functional as F

from mbertlab.errors import ConfigError
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import Batch, MicroBatch
from mbertlab.pretrain.distill import (CPU, load_teachers, mixed_loss, soft_label_loss, teacher_logits,
                                       topk_soft_label_loss)
from mbertlab.pretrain.model import logits_at, pretraining_loss
from mbertlab.pretrain.teacher_cache import TopkCache
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


class Distiller:
    """The distillation objective (an `Objective`): live teachers or a top-k cache. Under data
    parallelism every rank distils its own rows (teachers are not part of the module DDP wraps)."""

    def __init__(self, temperature: float, hard_weight: float, teachers: dict[str, torch.nn.Module] | None = None,
                 cache: TopkCache | None = None):
        self.temperature, self.hard_weight = temperature, hard_weight
        self.teachers, self.cache = teachers, cache

    @classmethod
    def from_config(cls, config: PretrainConfig, shards: ShardReader, device: torch.device = CPU) -> Distiller:
        if config.nsp:
            raise ConfigError("pretrain: objective distill does not combine with nsp (the teachers predict tokens)")
        if config.teacher_cache:
            return cls(config.temperature, config.hard_weight, cache=TopkCache(config.teacher_cache, config, shards))
        return cls(config.temperature, config.hard_weight, teachers=load_teachers(config.teachers, shards, device))

    def loss(self, model, micro: MicroBatch) -> torch.Tensor:
        """The micro-batch's (or slice's) sums over its masked positions divided by the whole micro-batch's number
        of masked positions (as `pretraining_loss`)."""
        batch, inputs, selected = micro.batch, micro.inputs, micro.selection()
        student = logits_at(model, inputs, selected.positions, batch.attention_mask, batch.token_type_ids)
        if self.cache is not None:
            ids, probs = self.cache.targets(micro.index, selected, inputs.device)
            soft = topk_soft_label_loss(student, ids, probs, self.temperature, "sum")
        else:
            langs = batch.langs or [batch.lang] * len(inputs)  # a batch built by hand may not list them
            teacher = teacher_logits(self.teachers, langs, batch, inputs, selected)
            soft = soft_label_loss(student, teacher, self.temperature, "sum")
        if not self.hard_weight:  # soft labels only (the paper's students): no cross-entropy to compute
            return soft / selected.total
        hard = F.cross_entropy(student.float(), selected.gold, reduction="sum")
        return mixed_loss(hard, soft, self.hard_weight) / selected.total


OBJECTIVES: dict[str, Callable[[PretrainConfig, ShardReader, torch.device], Objective]] = {
    "mlm": MaskedLM.from_config,
    "distill": Distiller.from_config,
}


def objective_for(config: PretrainConfig, shards: ShardReader, device: torch.device = CPU) -> Objective:
    """The objective `config.objective` names, built for the run's device."""
    return OBJECTIVES[config.objective](config, shards, device)
