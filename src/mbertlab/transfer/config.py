"""Transfer configs: which task, which data, which encoder mode, which optimisation grid."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field, field_validator, model_validator

from mbertlab.config import (Config, LanguageName, Precision, SafeName, Seed, Steps, device_field, precision_field,
                             safe_name)
from mbertlab.transfer.task_table import DataFormatName, TaskName


FileLanguage = Annotated[str, AfterValidator(lambda lang: lang and safe_name(lang))]  # '' (no name): scoring only


class DataFile(Config):
    lang: FileLanguage = Field(description="The file's language; it names prediction files.")
    split: SafeName = Field("test", description="train, dev or test.")
    path: str
    format: DataFormatName = "conllu"
    hypothesis_path: str | None = Field(None, description="XNLI: a parallel file (same examples, another "
                                        "language) whose hypotheses replace this file's (K et al. Table 11).")
    hypothesis_lang: LanguageName | None = None
    start: int = Field(0, ge=0, description="Use examples [start, end) of the file, e.g. to train on part of "
                       "a dev set and evaluate on the rest (the XNLI path of the shared data).")
    end: int | None = Field(None, ge=1)
    v1_to_v2: bool = Field(False, description="CoNLL-U: map UD v1 labels (CONJ, dobj, ...) to v2 on reading. Off: "
                           "labels are read and scored as written.")


class TransferConfig(Config):
    task: TaskName
    mode: Literal["finetune", "random_init", "freeze", "feature", "bilstm_crf", "probe", "probe_random_init",
                  "majority"] = Field(
        "finetune", description="finetune: all weights; random_init: same shape, fresh weights (a control); "
        "freeze: bottom `freeze_layers` frozen (0 = embeddings); feature: frozen encoder, scalar mix of all "
        "layers, 2-layer BiLSTM; bilstm_crf: feature + CRF; probe: linear on frozen layer `probe_layer`; "
        "probe_random_init: the same probe on the encoder's shape with fresh weights (the probe's control); "
        "majority: most frequent training label.")
    train: list[DataFile] = Field(min_length=1, description="One or more source files (their union trains).")
    evaluate: list[DataFile] = Field(min_length=1, description="Every file scored; the source language's dev "
                                     "file, when listed, selects the model (zero-shot protocol).")
    seed: Seed = 0
    lr: list[float] = Field([5e-5], min_length=1, description="Grid of peak learning rates (fine-tuning modes).")
    batch_size: list[int] = Field([32], min_length=1, description="Grid of batch sizes.")
    epochs: float | list[float] = Field(2.0, description="Passes over the training set; a list is a grid (Wu & "
                                        "Dredze 2019: {3, 4}), each its own run with its own decay.")
    checkpoints: list[int] = Field(default_factory=list, description="Pretraining steps whose saved checkpoints "
                                   "are candidates beside the final model, chosen on the source dev set with the "
                                   "grid (Wu & Dredze 2020: the best of five). Needs a pretrain artifact.")
    steps: Steps | None = Field(None, description="Optimiser steps, whatever the training set's size (Wu & "
                              "Dredze 2020: 10k); set, it replaces `epochs`.")
    eval_every: int | None = Field(None, ge=1, description="Evaluate every k steps; default once per epoch.")
    warmup: float = Field(0.1, ge=0.0, le=1.0, description="Share of steps with linear warmup; then linear decay.")
    feature_lr: float = Field(1e-3, description="Adam lr of frozen-encoder modes; halved on a dev plateau.")
    min_lr: float = Field(1e-5, description="Frozen-encoder modes stop when the lr falls below this.")
    max_train_sentences: int | None = Field(None, gt=0)
    max_eval_sentences: int | None = Field(None, gt=0)
    dropout: float = 0.1
    max_length: int = Field(128, ge=8, description="Subwords per sequence (tagging slides a window beyond).")
    freeze_layers: int = 0
    probe_layer: int = Field(-1, description="probe: the hidden state used (0 = embeddings, -1 = last).")
    markers: bool = Field(False, description="Language identity markers in the inputs (K et al. §3.4.2): each "
                          "[SEP] becomes the [SEP-xx] of its segment's language (the file's `lang`, a pair's "
                          "second segment `hypothesis_lang`); the tokenizer must have them (markers: true).")
    lstm_hidden: int = 256
    crf: bool = Field(False, description="NER/UPOS: a CRF on top of the tagging head.")
    gold_upos: bool = Field(False, description="parse: concatenate gold-UPOS embeddings (mBERT(Z+POS)).")
    arc_mlp: int = 500
    label_mlp: int = 100
    upos_dim: int = 50
    save_model: bool = Field(False, description="Keep the selected model in `model/` (for `mbertlab evaluate`).")
    precision: Precision = precision_field()
    device: str = device_field()

    @field_validator("train", mode="before")
    @classmethod
    def _one_or_many(cls, value):
        return [value] if isinstance(value, (dict, DataFile)) else value

    @field_validator("lr", "batch_size", mode="before")
    @classmethod
    def _scalar_or_grid(cls, value):
        return [value] if isinstance(value, (int, float)) else value

    @model_validator(mode="after")
    def _steps_or_epochs_grid(self):
        if self.steps is not None and isinstance(self.epochs, list):
            raise ValueError("epochs: a grid of epochs and a fixed number of steps exclude each other")
        return self

    @property
    def epoch_grid(self) -> list[float]:
        return self.epochs if isinstance(self.epochs, list) else [self.epochs]

    @property
    def source_langs(self) -> list[str]:
        return sorted({f.lang for f in self.train})
