"""`epochs` counts passes over the text: the steps a run takes are resolved from its shards' training windows,
counted here apart from the engine by re-tokenizing the training text with the shards' own tokenizer."""
from __future__ import annotations

import math

import pytest
from pydantic import ValidationError
from transformers import AutoTokenizer

from mbertlab.pretrain.checkpoint import list_checkpoints
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import with_epoch_steps
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.tokenizers.shards import ShardReader

TINY = {"model": {"layers": 1, "hidden": 16, "heads": 1}, "batch_size": 8, "seq_len": 16, "precision": "fp32",
        "checkpoint_every": 1000, "warmup": 2, "eval_batches": 1}


def test_epochs_are_passes_over_the_training_windows(tmp_path, src_shards):
    tokenizer = AutoTokenizer.from_pretrained(str(src_shards / "tokenizer"))
    text = (src_shards.parent / "gen" / "src" / "text" / "train.txt").read_text(encoding="utf-8").splitlines()
    tokens = sum(len(tokenizer(line, add_special_tokens=False)["input_ids"]) for line in text)
    windows = tokens // 16
    expected = math.ceil(0.05 * windows / 8)
    config = PretrainConfig.model_validate({**TINY, "epochs": 0.05, "steps": 9999})
    assert with_epoch_steps(config, ShardReader(src_shards)).steps == expected
    assert 10 < expected < 9999  # the text, not `steps`, decides: ~12 tokens a sentence, 3,000 sentences
    pretrain_into(config, src_shards, tmp_path)
    assert [step for step, _ in list_checkpoints(tmp_path)][-1] == expected
    # without epochs, steps is the run's length; the hash is the config's as written either way
    assert with_epoch_steps(PretrainConfig.model_validate(TINY), ShardReader(src_shards)).steps == 1000


def test_min_steps_floors_the_steps_epochs_resolve_to(src_shards):
    shards = ShardReader(src_shards)
    few = with_epoch_steps(PretrainConfig.model_validate({**TINY, "epochs": 0.05}), shards).steps
    floored = PretrainConfig.model_validate({**TINY, "epochs": 0.05, "min_steps": few + 7})
    assert with_epoch_steps(floored, shards).steps == few + 7
    above = PretrainConfig.model_validate({**TINY, "epochs": 0.05, "min_steps": max(1, few - 3)})
    assert with_epoch_steps(above, shards).steps == few  # a floor below the passes changes nothing


def test_min_steps_without_epochs_is_refused():
    with pytest.raises(ValidationError, match="min_steps 50 floors the steps that epochs resolves to"):
        PretrainConfig.model_validate({**TINY, "min_steps": 50})
