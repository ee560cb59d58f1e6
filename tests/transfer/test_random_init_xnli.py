"""No shortcut across a script for an encoder either (issue 49): a randomly initialised encoder fine-tuned on the
source's generated XNLI stays at chance on the disjoint-script target, whose words it has never seen. Were the
label readable from anything a script does not change (lengths, positions, shared marks), it would find it."""
from __future__ import annotations

import math

import pytest

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.data.generate.config import quick_preset
from mbertlab.store.results import ResultsDB
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.run import run_transfer_into
from tests.transfer.tiny_encoder import pretrained_encoder

TEST_PAIRS = 1500


@pytest.mark.slow
def test_a_random_init_encoder_stays_at_chance_on_the_fake_script_xnli(tmp_path):
    gen, out = tmp_path / "gen", tmp_path / "transfer"
    out.mkdir()
    langs = ["src", "fake"]
    languages = [lang for lang in quick_preset()["languages"] if lang["name"] in langs]
    generate_into(preset_config("quick", 0, {
        "languages": languages, "sentences": {"train": 2000, "dev": 50, "test": 50},
        "tasks": {"nli": {"train": 1500, "dev": 150, "test": TEST_PAIRS}, "mldoc": {"train": 4, "dev": 4, "test": 4}}}),
        gen)
    encoder = pretrained_encoder(gen, tmp_path, langs, steps=2, batch_size=8)  # its shape: random_init re-draws
    config = TransferConfig(
        task="xnli", mode="random_init", lr=3e-4, epochs=3, precision="fp32",
        train=DataFile(lang="src", split="train", path="xnli/src.train.tsv", format="xnli"),
        evaluate=[DataFile(lang=l, split="test", path=f"xnli/{l}.test.tsv", format="xnli") for l in langs])
    results = ResultsDB(tmp_path / "results.db")
    run_transfer_into(config, encoder / "model", out, results, "tiny", gen)
    scores = {r.test_lang: r.value for r in results.query(mode="random_init", metric="accuracy")}
    three_se = 3 * math.sqrt(1 / 3 * 2 / 3 / TEST_PAIRS)  # 3.6 points
    assert abs(scores["fake"] - 1 / 3) < three_se, scores
