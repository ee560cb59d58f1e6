"""K et al.'s language identity markers in the task inputs ([CLS] A [SEP-a] B [SEP-b], §3.4.2): checked against
ids built apart from the tokenizer's own pieces, and through a whole transfer run on a marked tokenizer."""
from __future__ import annotations

import pytest
from transformers import AutoTokenizer

from mbertlab.errors import ConfigError
from mbertlab.store.results import ResultsDB
from mbertlab.tasks.classification import encode_pairs
from mbertlab.tasks.tagging import windows_for
from mbertlab.transfer.adapter import with_markers
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.run import run_transfer_into
from mbertlab.formats.records import PairExample

LANGS = ["src", "fake"]


@pytest.fixture(scope="module")
def marked(tiny, tmp_path_factory):
    """The tiny world's encoder shape on a word tokenizer with [SEP-src] and [SEP-fake]."""
    import torch

    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    root = tmp_path_factory.mktemp("marked")
    tok, enc = root / "tok", root / "enc"
    tok.mkdir()
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=LANGS, markers=True),
                         {l: tiny.data / l / "text" / "train.txt" for l in LANGS}, tok)
    tokenizer = AutoTokenizer.from_pretrained(tok)
    torch.manual_seed(0)
    new_model(ModelShape(layers=1, hidden=32, heads=2), len(tokenizer)).save_pretrained(enc)
    tokenizer.save_pretrained(enc)
    return tokenizer, enc


def _marker(tokenizer, lang: str) -> int:
    (found,) = tokenizer(f"[SEP-{lang}]", add_special_tokens=False)["input_ids"]
    return found


def test_a_pair_reads_cls_a_sep_a_b_sep_b(marked):
    tokenizer, _ = marked
    premise, hypothesis = "the big dog runs", "a cat sleeps"
    (item,) = with_markers(encode_pairs(tokenizer, [PairExample(premise, hypothesis, "entailment")],
                                        {"entailment": 0}, 64),
                           tokenizer.sep_token_id, [_marker(tokenizer, "src"), _marker(tokenizer, "fake")])
    pieces = lambda text: tokenizer(text, add_special_tokens=False)["input_ids"]  # noqa: E731
    assert item.input_ids == ([tokenizer.cls_token_id] + pieces(premise) + [_marker(tokenizer, "src")]
                              + pieces(hypothesis) + [_marker(tokenizer, "fake")])
    assert item.label == 0 and len(item.token_type_ids) == len(item.input_ids)


def test_a_tagged_window_ends_with_its_languages_marker(marked):
    tokenizer, _ = marked
    words = ["the", "big", "dog"]
    (window,) = with_markers(windows_for(tokenizer, words, [0, 1, 2], 0), tokenizer.sep_token_id,
                             [_marker(tokenizer, "fake")])
    assert window.input_ids[0] == tokenizer.cls_token_id and window.input_ids[-1] == _marker(tokenizer, "fake")
    assert tokenizer.sep_token_id not in window.input_ids and len(window.input_ids) == len(window.labels)


def test_a_run_with_markers_feeds_each_files_marker(tiny, marked, tmp_path, monkeypatch):
    from mbertlab.transfer import tagging, train

    tokenizer, enc = marked
    seen = {"train": [], "eval": []}
    fit, predict = train.fit, tagging.TaggingAdapter.predict

    def kept_fit(adapter, model, items, *args):
        seen["train"] += items
        return fit(adapter, model, items, *args)

    def kept_predict(self, model, items, records, pad_id):
        seen["eval"].append(items)
        return predict(self, model, items, records, pad_id)

    monkeypatch.setattr(train, "fit", kept_fit)
    monkeypatch.setattr(tagging.TaggingAdapter, "predict", kept_predict)
    ud = lambda l, s: DataFile(lang=l, split=s, path=f"{l}/ud/{s}.conllu", format="conllu")  # noqa: E731
    config = TransferConfig(task="upos", train=[ud("src", "train")], evaluate=[ud("src", "test"), ud("fake", "test")],
                            epochs=1, markers=True, precision="fp32", max_train_sentences=50, max_eval_sentences=20)
    results = ResultsDB(tmp_path / "results.db")
    (tmp_path / "out").mkdir()
    run_transfer_into(config, enc, tmp_path / "out", results, "marked", tiny.data)
    src, fake = _marker(tokenizer, "src"), _marker(tokenizer, "fake")
    assert len(seen["train"]) >= 50 and {w.input_ids[-1] for w in seen["train"]} == {src}
    assert [{w.input_ids[-1] for w in items} for items in seen["eval"][:2]] == [{src}, {fake}]
    assert all(tokenizer.sep_token_id not in w.input_ids for items in seen["eval"] for w in items)
    # the tiny world's own tokenizer has no markers: a one-line error naming the marker and the file
    with pytest.raises(ConfigError, match=r"no \[SEP-src\] for src/ud/train.conllu"):
        run_transfer_into(config, tiny.encoder, tmp_path / "plain", results, "plain", tiny.data)
