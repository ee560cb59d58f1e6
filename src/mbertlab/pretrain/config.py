"""Pretraining configs: the encoder's shape and the run (objective, data layout, optimisation)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from mbertlab.config import Config, Exponent, LanguageName, Precision, Seed, Steps, device_field, precision_field
from mbertlab.errors import ConfigError

if TYPE_CHECKING:
    from mbertlab.tokenizers.shards import ShardReader

Share = Annotated[float, Field(ge=0.0, le=1.0)]
Beta = Annotated[float, Field(ge=0.0, lt=1.0)]


def _invalid(message: str, **values) -> PydanticCustomError:
    """A validator error whose message reads without pydantic's 'Value error, ' prefix."""
    return PydanticCustomError("invalid", message, values)


class ModelShape(Config):
    layers: int = Field(4, ge=1)
    hidden: int = Field(128, ge=8)
    heads: int = Field(2, ge=1, validate_default=True)  # checked against hidden even when left out
    intermediate: int | None = Field(None, description="FFN size; default 4 × hidden.")
    max_positions: int = 128
    dropout: float = Field(0.0, ge=0.0, lt=1.0, description="Hidden and attention dropout. BERT uses 0.1; at "
                           "lab scale 0 leaves the loss plateau far sooner (docs/lab-recipe.md).")
    attention: Literal["eager", "sdpa"] = Field("eager", description="eager is fastest in bf16 on CPU here.")

    @field_validator("heads")
    @classmethod
    def _heads_divide_hidden(cls, heads: int, info: ValidationInfo) -> int:
        """Attention splits the hidden size evenly across heads; Hugging Face fails deep inside otherwise."""
        hidden = info.data.get("hidden")
        if hidden is not None and hidden % heads:
            raise _invalid("model.hidden {hidden} is not a multiple of model.heads {heads}", hidden=hidden,
                           heads=heads)
        return heads


class PretrainConfig(Config):
    seed: Seed = 0
    model: ModelShape = Field(default_factory=ModelShape)
    init_from: str | None = Field(None, description="A Hugging Face masked-LM directory to continue from.")
    steps: Steps = Field(1000, description="Optimiser steps. With `epochs` set, the plan's estimate only: the run "
                         "takes the steps that `epochs` resolves to.")
    epochs: float | None = Field(None, gt=0.0, description="Passes over the shards' training windows, resolved when "
                                 "the run opens (steps = ceil(epochs × windows / batch_size); a window is seq_len "
                                 "tokens of a language's stream, or a sentence pair with layout: pairs), so an epoch "
                                 "is a pass over the text whatever its sentences' length. None: `steps`.")
    min_steps: int | None = Field(None, ge=1, description="With `epochs`: at least this many steps, a floor for "
                                  "models on little text, which a few passes leave on the MLM plateau.")
    batch_size: int = Field(128, ge=1, description="Sequences per optimiser step (all accumulation micro-batches).")
    accumulation: int = Field(1, ge=1, validate_default=True)
    seq_len: int = Field(16, ge=4, validate_default=True, description="Tokens per training window (XLM-style stream).")
    lr: float = Field(1e-3, gt=0.0)
    betas: tuple[Beta, Beta] = (0.9, 0.98)
    weight_decay: float = Field(0.01, ge=0.0)
    warmup: int = Field(300, ge=0)
    schedule: Literal["constant", "linear", "inverse_sqrt"] = "constant"
    grad_clip: float = Field(1.0, gt=0.0, description="Largest gradient norm; a step's gradient is scaled down to it.")
    precision: Precision = precision_field()
    device: str = device_field()
    mask_prob: float = Field(0.15, gt=0.0, lt=1.0)
    selection: Literal["uniform", "rare"] = Field("uniform", description="rare: selection ∝ count^-0.5 (XLM).")
    alpha: Exponent = Field(0.0, description="Language sampling p ∝ n^alpha (0: uniform, 0.7: mBERT).")
    mixing: Literal["per_batch", "within_batch"] = Field("per_batch", description="Draw one language per batch, "
                                                         "or one per sequence.")
    compile: bool | Literal["reduce-overhead", "max-autotune"] = Field(
        False, description="torch.compile the encoder (measured 0.86-1.13x on this CPU); a mode names "
        "torch.compile's (reduce-overhead: CUDA graphs, for small models whose step is the host's launches).")
    layout: Literal["stream", "pairs"] = Field("stream", description="stream: XLM-style windows ignoring sentence "
                                               "boundaries; pairs: BERT-style [CLS] A [SEP] B [SEP] with segment ids.")
    nsp: bool = Field(False, description="Next-sentence prediction (pairs only; K et al. compare with and without).")
    markers: bool = Field(False, description="Language markers [SEP-xx] (the tokenizer must have them): they "
                          "replace [SEP] in pairs and open every stream window.")
    permute: dict[LanguageName, Share] = Field(default_factory=dict, description="Per language share p of word-piece "
                                      "pairs swapped (K et al. §3.2.2).")
    checkpoint_every: int = Field(500, ge=1)
    keep_checkpoints: int = Field(2, ge=1)
    log_every: int = Field(50, ge=1, exclude=True, description="Steps between reads of the training loss (each "
                           "waits for the device); not part of the artifact's hash.")
    patience: int | None = Field(None, ge=1, description="Early stopping: stop once the dev loss, averaged over "
                                 "languages with each weighing the same (a balanced dev set), has not improved for "
                                 "this many evaluations (one every checkpoint_every steps); the saved model is the "
                                 "best evaluation's. None: every step is trained.")
    eval_batches: int = Field(4, ge=1, description="Fixed dev batches per language for loss, perplexity, MRR.")
    objective: Literal["mlm", "distill"] = Field("mlm", description="mlm: hard labels; distill: soft labels from "
                                                 "the teacher of each row's language (Limisiewicz et al. 2023).")
    teachers: dict[LanguageName, str] = Field(default_factory=dict, description="distill: language -> teacher (a "
                                              "Hugging Face masked-LM directory or a pretrain artifact) sharing the "
                                              "shards' vocabulary.")
    temperature: float = Field(1.0, gt=0.0, description="distill: softmax temperature of teacher and student "
                               "(the soft loss is scaled by T², as Hinton et al.).")
    hard_weight: float = Field(0.0, ge=0.0, le=1.0, description="distill: loss = w·hard + (1 − w)·soft.")
    teacher_cache: str | None = Field(None, description="distill: a top-k cache written by "
                                      "cache_teacher_topk_into for this data config, read instead of running teachers.")

    @field_validator("min_steps")
    @classmethod
    def _min_steps_floors_epochs(cls, min_steps: int | None, info: ValidationInfo) -> int | None:
        """A floor of the steps `epochs` resolves to; with `steps` alone it would do nothing, silently."""
        if min_steps is not None and info.data.get("epochs") is None:
            raise _invalid("min_steps {min_steps} floors the steps that epochs resolves to; set epochs (or raise "
                           "steps)", min_steps=min_steps)
        return min_steps

    @field_validator("accumulation")
    @classmethod
    def _accumulation_divides_batch(cls, accumulation: int, info: ValidationInfo) -> int:
        """Each optimiser step draws `accumulation` micro-batches of batch_size // accumulation rows: a remainder
        would be silently dropped, and fewer rows than micro-batches leaves empty ones."""
        batch = info.data.get("batch_size")
        if batch is not None and batch % accumulation:
            raise _invalid("batch_size {batch} is not a multiple of accumulation {accumulation}", batch=batch,
                           accumulation=accumulation)
        return accumulation

    @field_validator("seq_len")
    @classmethod
    def _seq_len_fits_positions(cls, seq_len: int, info: ValidationInfo) -> int:
        """A window longer than the position table fails in the embedding lookup. With init_from the loaded
        model's table counts instead (`check_against_run` compares it)."""
        model, init_from = info.data.get("model"), info.data.get("init_from")
        if model is not None and init_from is None and seq_len > model.max_positions:
            raise _invalid("seq_len {seq_len} exceeds model.max_positions {max_positions}", seq_len=seq_len,
                           max_positions=model.max_positions)
        return seq_len


def check_against_run(config: PretrainConfig, shards: ShardReader) -> None:
    """What only the run's inputs can tell: init_from exists and permute names languages of the shards.
    Called before the artifact's directory is made, so a rejected config leaves nothing behind."""
    if config.init_from is not None and not Path(config.init_from).is_dir():
        raise ConfigError(f"pretrain: key 'init_from': {config.init_from}: no such directory")
    unknown = sorted(set(config.permute) - set(shards.languages))
    if unknown:
        raise ConfigError(f"pretrain: key 'permute': {', '.join(unknown)} not among the shards' languages "
                          f"({', '.join(shards.languages)})")


DISTILL_KEYS = ("objective", "teachers", "temperature", "hard_weight", "teacher_cache")
