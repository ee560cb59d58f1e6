"""A tiny encoder pretrained on a generated language pair transfers UPOS zero-shot to a language that
shares no token with the source; the same recipe from a random encoder does not."""
from __future__ import annotations


import pytest

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.store.results import ResultsDB
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.run import run_transfer_into
from tests.transfer.tiny_encoder import pretrained_encoder
from tests.conftest import NO_TASKS


@pytest.mark.slow
def test_pretrained_pair_transfers_upos_zero_shot(tmp_path):
    gen = tmp_path / "gen"
    generate_into(preset_config("quick", 0, {"sentences": {"train": 20000, "dev": 300, "test": 500},
                                               "tasks": NO_TASKS}), gen)
    langs = ["src", "fake"]
    encoder = pretrained_encoder(gen, tmp_path, langs, steps=1000, batch_size=64)
    scores = {}
    for mode in ("finetune", "random_init", "majority"):
        config = TransferConfig(
            task="upos", mode=mode, lr=3e-4, epochs=2, max_train_sentences=2000, precision="fp32",
            train=DataFile(lang="src", split="train", path="src/ud/train.conllu"),
            evaluate=[DataFile(lang=l, split="test", path=f"{l}/ud/test.conllu") for l in langs])
        out = tmp_path / mode
        out.mkdir()
        results = ResultsDB(tmp_path / "results.db")
        run_transfer_into(config, encoder / "model", out, results, "tiny", gen)
        scores[mode] = {r.test_lang: r.value for r in results.query(mode=mode, metric="accuracy")}
    assert scores["finetune"]["src"] > 0.97
    assert scores["finetune"]["fake"] > scores["majority"]["fake"] + 0.15, scores
    assert scores["finetune"]["fake"] > scores["random_init"]["fake"] + 0.15, scores
