"""A tiny encoder pretrained on a generated language pair transfers UPOS zero-shot to a language that
shares no token with the source; the same recipe from a random encoder does not."""
from __future__ import annotations


import pytest

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.store.results import ResultsDB
from mbertlab.tokenizers.shards import ShardsConfig, write_shards_into
from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.run import run_transfer_into


@pytest.mark.slow
def test_pretrained_pair_transfers_upos_zero_shot(tmp_path):
    gen, tok, shards, encoder = (tmp_path / n for n in ("gen", "tok", "shards", "pretrain"))
    for d in (tok, shards, encoder):
        d.mkdir()
    generate_into(preset_config("quick", 0, {"sentences": {"train": 20000, "dev": 300, "test": 500}}), gen)
    langs = ["src", "fake"]
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=langs),
                         {l: gen / l / "text" / "train.txt" for l in langs}, tok)
    write_shards_into(ShardsConfig(languages=langs), tok,
                      {l: {s: gen / l / "text" / f"{s}.txt" for s in ("train", "dev")} for l in langs}, shards)
    # fp32 pinned: `auto` is bf16 on AMX machines and fp32 on others (fp32 on the AVX2 machine this passes on)
    pretrain_into(PretrainConfig(steps=1000, batch_size=64, seq_len=16, checkpoint_every=1000, precision="fp32"),
                  shards, encoder)
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
