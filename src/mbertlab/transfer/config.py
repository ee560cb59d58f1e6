"""Transfer configs: which task, which data, which encoder mode, which optimisation."""
from __future__ import annotations

from typing import Literal

from pydantic import Field

from mbertlab.config import Config


class DataFile(Config):
    lang: str
    split: str = Field("test", description="train, dev or test.")
    path: str
    format: Literal["conllu", "ner", "udpos"] = "conllu"


class TransferConfig(Config):
    task: Literal["upos", "ner"]
    mode: Literal["finetune", "random_init", "freeze", "majority"] = Field(
        "finetune", description="finetune: all weights; random_init: same shape, fresh weights (a control); "
        "freeze: bottom `freeze_layers` frozen (0 = embeddings); majority: most frequent training tag.")
    train: DataFile
    evaluate: list[DataFile] = Field(min_length=1)
    seed: int = 0
    lr: float = 5e-5
    batch_size: int = 32
    epochs: float = 2.0
    warmup: float = Field(0.1, description="Share of steps with linear warmup; then linear decay.")
    max_train_sentences: int | None = None
    max_eval_sentences: int | None = None
    dropout: float = 0.1
    max_length: int = 128
    freeze_layers: int = 0
