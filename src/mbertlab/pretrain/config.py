"""Pretraining configs: the encoder's shape and the run (objective, data layout, optimisation)."""
from __future__ import annotations

from typing import Literal

from pydantic import Field, model_serializer

from mbertlab.config import Config
from mbertlab.corpus.build import omit_defaults


class ModelShape(Config):
    layers: int = Field(4, ge=1)
    hidden: int = Field(128, ge=8)
    heads: int = Field(2, ge=1)
    intermediate: int | None = Field(None, description="FFN size; default 4 × hidden.")
    max_positions: int = 128
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="Hidden and attention dropout. BERT uses 0.1; at "
                           "lab scale 0 leaves the loss plateau far sooner (docs/lab-recipe.md).")
    attention: Literal["eager", "sdpa"] = Field("eager", description="eager is fastest in bf16 on CPU here.")


class PretrainConfig(Config):
    seed: int = 0
    model: ModelShape = Field(default_factory=ModelShape)
    init_from: str | None = Field(None, description="A Hugging Face masked-LM directory to continue from.")
    steps: int = Field(1000, ge=1)
    batch_size: int = Field(128, ge=1, description="Sequences per optimiser step (all accumulation micro-batches).")
    accumulation: int = Field(1, ge=1)
    seq_len: int = Field(16, ge=4, description="Tokens per training window (XLM-style stream).")
    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.98)
    weight_decay: float = 0.01
    warmup: int = Field(300, ge=0)
    schedule: Literal["constant", "linear", "inverse_sqrt"] = "constant"
    grad_clip: float = 1.0
    precision: Literal["auto", "bf16", "fp32"] = "auto"
    mask_prob: float = Field(0.15, gt=0.0, lt=1.0)
    selection: Literal["uniform", "rare"] = Field("uniform", description="rare: selection ∝ count^-0.5 (XLM).")
    alpha: float = Field(0.0, ge=0.0, description="Language sampling p ∝ n^alpha (0: uniform, 0.7: mBERT).")
    mixing: Literal["per_batch", "within_batch"] = Field("per_batch", description="Draw one language per batch, "
                                                         "or one per sequence.")
    compile: bool = Field(False, description="torch.compile the encoder (measured 0.86-1.13x on this CPU).")
    layout: Literal["stream", "pairs"] = Field("stream", description="stream: XLM-style windows ignoring sentence "
                                               "boundaries; pairs: BERT-style [CLS] A [SEP] B [SEP] with segment ids.")
    nsp: bool = Field(False, description="Next-sentence prediction (pairs only; K et al. compare with and without).")
    markers: bool = Field(False, description="Language markers [SEP-xx] (the tokenizer must have them): they "
                          "replace [SEP] in pairs and open every stream window.")
    permute: dict[str, float] = Field(default_factory=dict, description="Per language share p of word-piece "
                                      "pairs swapped (K et al. §3.2.2).")
    checkpoint_every: int = Field(500, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    eval_batches: int = Field(4, ge=1, description="Fixed dev batches per language for loss, perplexity, MRR.")
    objective: Literal["mlm", "distill"] = Field("mlm", description="mlm: hard labels; distill: soft labels from "
                                                 "the teacher of each row's language (Limisiewicz et al. 2023).")
    teachers: dict[str, str] = Field(default_factory=dict, description="distill: language -> teacher (a Hugging "
                                     "Face masked-LM directory or a pretrain artifact) sharing the shards' vocabulary.")
    temperature: float = Field(1.0, gt=0.0, description="distill: softmax temperature of teacher and student "
                               "(the soft loss is scaled by T², as Hinton et al.).")
    hard_weight: float = Field(0.0, ge=0.0, le=1.0, description="distill: loss = w·hard + (1 − w)·soft.")
    teacher_cache: str | None = Field(None, description="distill: a top-k cache written by "
                                      "cache_teacher_topk_into for this data config, read instead of running teachers.")

    @model_serializer(mode="wrap")
    def _hash_stable(self, handler):
        return omit_defaults(handler(self), self, DISTILL_KEYS)


DISTILL_KEYS = ("objective", "teachers", "temperature", "hard_weight", "teacher_cache")
