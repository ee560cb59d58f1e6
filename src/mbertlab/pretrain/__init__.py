"""Pretraining: BERT masked-LM from scratch (or continued) on token shards."""
from __future__ import annotations

from mbertlab.pretrain.config import ModelShape, PretrainConfig

__all__ = ["ModelShape", "PretrainConfig"]
