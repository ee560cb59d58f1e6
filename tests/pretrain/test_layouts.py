"""Sentence pairs with NSP, language markers, and that every objective variant trains."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mbertlab.errors import ConfigError
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import PairSampler, WindowSampler
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.tokenizers.shards import ShardReader
from mbertlab.tokenizers.train import CLS_ID, PAD_ID, SEP_ID

TINY = {"model": {"layers": 1, "hidden": 32, "heads": 2}, "batch_size": 16, "seq_len": 32, "steps": 40,
        "checkpoint_every": 20, "warmup": 5, "eval_batches": 1, "lr": 3e-3, "precision": "fp32"}


def test_pairs_layout_segments_and_nsp_share(marker_shards):
    shards = ShardReader(marker_shards)
    markers = {"src": 5, "fake": 6}
    batch = PairSampler(shards, "train", 32, 0.0, {}, markers, nsp=True).draw(np.random.default_rng(0), 400)
    ids, types = batch.input_ids.numpy(), batch.token_type_ids.numpy()
    assert (ids[:, 0] == CLS_ID).all() and not (ids == SEP_ID).any()
    marker = markers[batch.lang]
    for row, t in zip(ids, types):
        seps = np.flatnonzero(row == marker)
        assert len(seps) == 2 and (t[: seps[0] + 1] == 0).all() and (t[seps[0] + 1: seps[1] + 1] == 1).all()
        assert (row[seps[1] + 1:] == PAD_ID).all()
    assert abs(batch.nsp_labels.float().mean().item() - 0.5) < 0.08
    true_next = PairSampler(shards, "train", 32, 0.0, {}, None, nsp=False).draw(np.random.default_rng(0), 8)
    assert true_next.nsp_labels is None and (true_next.input_ids == SEP_ID).sum() == 16


def test_stream_windows_open_with_the_marker(marker_shards):
    batch = WindowSampler(ShardReader(marker_shards), "train", 16, 0.0, {}, {"src": 5, "fake": 6}).draw(
        np.random.default_rng(1), 4)
    assert batch.input_ids.shape == (4, 16) and (batch.input_ids[:, 0] == {"src": 5, "fake": 6}[batch.lang]).all()


@pytest.mark.parametrize("variant", [{"layout": "pairs", "nsp": True}, {"layout": "pairs", "nsp": False},
                                     {"layout": "pairs", "nsp": True, "markers": True}, {"markers": True}])
def test_variants_train(tmp_path, marker_shards, variant):
    pretrain_into(PretrainConfig.model_validate({**TINY, **variant}), marker_shards, tmp_path)
    rows = [json.loads(l) for l in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    first, last = rows[0]["loss"], rows[-1]["loss"]
    assert np.isfinite(last) and last < first + 0.05 and (tmp_path / "model" / "model.safetensors").exists()


def test_bad_combinations_are_config_errors(tmp_path, src_shards):
    with pytest.raises(ConfigError, match="layout: pairs"):
        pretrain_into(PretrainConfig.model_validate({**TINY, "nsp": True}), src_shards, tmp_path)
    with pytest.raises(ConfigError, match="markers: true"):
        pretrain_into(PretrainConfig.model_validate({**TINY, "markers": True}), src_shards, tmp_path)


def test_within_batch_mixing_follows_the_probabilities(marker_shards):
    sampler = WindowSampler(ShardReader(marker_shards), "train", 16, 0.0, {}, {"src": 5, "fake": 6}, within_batch=True)
    batch = sampler.draw(np.random.default_rng(2), 2000)
    share_src = (batch.input_ids[:, 0] == 5).float().mean().item()
    assert batch.lang == "mixed" and abs(share_src - 0.5) < 0.05
