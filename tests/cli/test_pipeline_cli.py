"""The stage commands chained by hand on real data: corpus → tokenizer → shards → pretrain → transfer → score."""
from __future__ import annotations

import json

import pytest
import yaml

from mbertlab.cli.main import run
from mbertlab.store.results import ResultsDB


def last_line(capsys) -> str:
    return capsys.readouterr().out.strip().splitlines()[-1]


@pytest.mark.slow
def test_pipeline_on_shared_data(tmp_path, shared_data, capsys):
    w = ["--workdir", str(tmp_path / "w")]
    corpus_cfg = tmp_path / "corpus.yaml"
    corpus_cfg.write_text(yaml.safe_dump({"languages": [
        {"name": "en", "sources": [{"path": str(shared_data / "raw_text" / "en.txt")}], "max_sentences": 800},
        {"name": "en_fake", "sources": [{"path": str(shared_data / "raw_text" / "en.txt")}], "max_sentences": 800,
         "derive": "fake-script"}], "dev_fraction": 0.1}))
    assert run(w + ["corpus", "build", str(corpus_cfg)]) == 0
    corpus = last_line(capsys)
    stats = json.loads((tmp_path / "w" / "corpus" / corpus.rsplit("/", 1)[1] / "stats.json").read_text())
    assert stats["en"]["train"]["sentences"] + stats["en"]["dev"]["sentences"] == 800
    tok_cfg = tmp_path / "tok.yaml"
    tok_cfg.write_text(yaml.safe_dump({"kind": "wordpiece", "vocab_size": 1000, "languages": ["en", "en_fake"]}))
    assert run(w + ["tokenizer", "train", str(tok_cfg), "--corpus", corpus]) == 0
    tokenizer = last_line(capsys)
    assert run(w + ["tokenizer", "encode", "--tokenizer", tokenizer, "--corpus", corpus, "--lang", "en",
                    "--lang", "en_fake"]) == 0
    shards = last_line(capsys)
    assert run(w + ["pretrain", "--shards", shards, "--set", "steps=20", "--set", "checkpoint_every=10",
                    "--set", "batch_size=8", "--set", "model.hidden=32"]) == 0
    encoder = last_line(capsys)
    transfer_cfg = tmp_path / "transfer.yaml"
    gold = shared_data / "ud" / "en_partut-ud-dev.conllu"
    transfer_cfg.write_text(yaml.safe_dump({
        "task": "upos", "epochs": 1, "lr": 1e-3, "max_train_sentences": 300,
        "train": {"lang": "en", "split": "train", "path": str(shared_data / "ud" / "en_partut-ud-train.conllu")},
        "evaluate": [{"lang": "en", "split": "dev", "path": str(gold)}]}))
    assert run(w + ["transfer", str(transfer_cfg), "--encoder", encoder]) == 0
    artifact = last_line(capsys)
    [row] = ResultsDB(tmp_path / "w" / "results.db").query(metric="accuracy")
    assert row.test_lang == "en" and 0 < row.value <= 1 and row.artifact == artifact
    pred = f"{artifact}/predictions/upos.en.dev.conllu"
    assert run(["score", "upos", str(gold), pred]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(row.value)
