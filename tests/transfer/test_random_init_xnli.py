"""No shortcut across a script for an encoder either (issue 49): a randomly initialised encoder fine-tuned on the
source's generated XNLI stays at chance on the disjoint-script target, whose words it has never seen. Were the
label readable from anything a script does not change (lengths, positions, shared marks), it would find it."""
from __future__ import annotations

import math

import pytest

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.data.generate.config import quick_preset
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.store.results import ResultsDB
from mbertlab.tokenizers.shards import ShardsConfig, write_shards_into
from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.run import run_transfer_into

TEST_PAIRS = 1500


@pytest.mark.slow
def test_a_random_init_encoder_stays_at_chance_on_the_fake_script_xnli(tmp_path):
    gen, tok, shards, encoder, out = (tmp_path / n for n in ("gen", "tok", "shards", "pretrain", "transfer"))
    for d in (tok, shards, encoder, out):
        d.mkdir()
    langs = ["src", "fake"]
    languages = [lang for lang in quick_preset()["languages"] if lang["name"] in langs]
    generate_into(preset_config("quick", 0, {
        "languages": languages, "sentences": {"train": 2000, "dev": 50, "test": 50},
        "tasks": {"nli": {"train": 1500, "dev": 150, "test": TEST_PAIRS}, "mldoc": {"train": 4, "dev": 4, "test": 4}}}),
        gen)
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=langs),
                         {l: gen / l / "text" / "train.txt" for l in langs}, tok)
    write_shards_into(ShardsConfig(languages=langs), tok,
                      {l: {s: gen / l / "text" / f"{s}.txt" for s in ("train", "dev")} for l in langs}, shards)
    # the shape and tokenizer only: random_init re-draws every weight
    pretrain_into(PretrainConfig(steps=2, batch_size=8, seq_len=16, checkpoint_every=2, precision="fp32"),
                  shards, encoder)
    config = TransferConfig(
        task="xnli", mode="random_init", lr=3e-4, epochs=3, precision="fp32",
        train=DataFile(lang="src", split="train", path="xnli/src.train.tsv", format="xnli"),
        evaluate=[DataFile(lang=l, split="test", path=f"xnli/{l}.test.tsv", format="xnli") for l in langs])
    results = ResultsDB(tmp_path / "results.db")
    run_transfer_into(config, encoder / "model", out, results, "tiny", gen)
    scores = {r.test_lang: r.value for r in results.query(mode="random_init", metric="accuracy")}
    three_se = 3 * math.sqrt(1 / 3 * 2 / 3 / TEST_PAIRS)  # 3.6 points
    assert abs(scores["fake"] - 1 / 3) < three_se, scores
