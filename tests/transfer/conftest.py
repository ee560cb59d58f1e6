"""A tiny world for transfer tests: generated languages and a randomly initialised 2-layer encoder whose
word-level tokenizer knows them. Random weights are enough to test the machinery; whether pretraining
helps is test_zero_shot.py's question."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass
class Tiny:
    data: Path
    encoder: Path


@pytest.fixture(scope="session")
def tiny(tmp_path_factory) -> Tiny:
    import torch
    from transformers import AutoTokenizer

    from mbertlab.data.generate import generate_into, preset_config
    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    root = tmp_path_factory.mktemp("tiny")
    data, tok, enc = root / "gen", root / "tok", root / "enc"
    generate_into(preset_config("quick", 0, {"sentences": {"train": 600, "dev": 100, "test": 100}, "tasks": {
        "nli": {"train": 1500, "dev": 150, "test": 150}, "mldoc": {"train": 50, "dev": 20, "test": 20}}}), data)
    tok.mkdir()
    langs = ["src", "fake"]
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=langs),
                         {l: data / l / "text" / "train.txt" for l in langs}, tok)
    torch.manual_seed(0)  # the random encoder is the same in every run
    new_model(ModelShape(layers=2, hidden=32, heads=2), 2000).save_pretrained(enc)
    AutoTokenizer.from_pretrained(tok).save_pretrained(enc)
    return Tiny(data, enc)
