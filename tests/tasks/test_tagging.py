"""Tagging: the NER repair, entity F1 equal to seqeval, sliding windows, freezing."""
from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
import torch
from seqeval.metrics import f1_score
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import BertConfig, BertModel, PreTrainedTokenizerFast

from mbertlab.formats.ner_columns import read_ner
from mbertlab.tasks.ner import ner_metrics, repair_bio, token_macro_f1
from mbertlab.tasks.tagging import IGNORE, TaggingHead, WordPieces, collate, windows_for
from mbertlab.tasks.upos import upos_metrics
from mbertlab.transfer.adapter import TaskModel
from mbertlab.transfer.encoder import Features


@pytest.mark.parametrize("tags, repaired", [
    (["I-PER", "I-PER", "O"], ["B-PER", "I-PER", "O"]),  # stand-alone I-X becomes B-X
    (["B-LOC", "I-ORG", "O"], ["B-ORG", "I-ORG", "O"]),  # B-X I-Y -> B-Y I-Y
    (["B-PER", "I-LOC", "I-ORG"], ["B-ORG", "I-ORG", "I-ORG"]),  # the final entity type wins
    (["O", "B-PER", "B-PER"], ["O", "B-PER", "B-PER"]),
])
def test_repair_cases(tags, repaired):
    assert repair_bio(tags) == repaired


def test_entity_f1_equals_seqeval_on_perturbed_real_tags(shared_data):
    """Perturbations include I- tags of another type and stand-alone I- tags: scored as predicted, no repair."""
    gold = [s.tags for s in read_ner(shared_data / "ner" / "conll2003" / "eng.testa")][:800]
    rng = random.Random(0)
    types = ["PER", "LOC", "ORG", "MISC"]
    noise = lambda: rng.choice(["O", f"B-{rng.choice(types)}", f"I-{rng.choice(types)}"])  # noqa: E731
    pred = [[t if rng.random() > 0.15 else noise() for t in s] for s in gold]
    assert ner_metrics(gold, pred)["f1"] == pytest.approx(f1_score(gold, pred), abs=1e-12)
    repaired = [repair_bio(p) for p in pred]
    assert ner_metrics(gold, pred)["f1_repaired"] == pytest.approx(f1_score(gold, repaired), abs=1e-12)
    assert ner_metrics(gold, pred)["f1"] != ner_metrics(gold, pred)["f1_repaired"]


def test_token_macro_f1_by_hand():
    gold = [["B-PER", "O", "O"], ["B-LOC"]]
    pred = [["B-PER", "B-LOC", "O"], ["O"]]
    # B-PER: tp1 -> F1 1; O: tp1 fp1 fn1 -> 2/4; B-LOC: tp0 fp1 fn1 -> 0
    assert token_macro_f1(gold, pred) == pytest.approx((1 + 0.5 + 0) / 3)
    assert upos_metrics([["A", "B"], ["C"]], [["A", "X"], ["C"]])["accuracy"] == pytest.approx(2 / 3)


def test_token_macro_f1_is_the_same_under_every_hash_seed():
    """Found in lms2023 probes: the labels were summed in a set's order, so two runs differed in the last bit."""
    import subprocess
    import sys

    code = ("import random; from mbertlab.tasks.ner import token_macro_f1; r = random.Random(0); "
            "tags = [f'{p}-T{i}' for p in 'BI' for i in range(15)] + ['O']; "
            "gold = [[r.choice(tags) for _ in range(20)] for _ in range(200)]; "
            "pred = [[t if r.random() < 0.6 else r.choice(tags) for t in s] for s in gold]; "
            "print(repr(token_macro_f1(gold, pred)))")
    runs = {subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": str(seed)}).stdout for seed in range(6)}
    assert len(runs) == 1, runs


def tiny_tokenizer(words: list[str], tmp_path: Path) -> PreTrainedTokenizerFast:
    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + words)}
    for w in words:
        vocab.setdefault(f"##{w}", len(vocab))
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                   sep_token="[SEP]", mask_token="[MASK]")


def test_sliding_windows_predict_every_subword_once(tmp_path):
    tok = tiny_tokenizer(["ab", "cd", "e"], tmp_path)
    words = [["ab", "abcd", "e", "cdcdcd"][i % 4] for i in range(90)]  # 1, 2, 1, 3 subwords
    labels = list(range(90))
    for max_length, stride in [(32, 8), (12, 64)]:  # a stride wider than the window must not stall
        check_windows(windows_for(tok, words, labels, 0, max_length=max_length, stride=stride), labels, max_length)
    batch = collate(windows_for(tok, words, labels, 0, max_length=32, stride=8), tok.pad_token_id)
    assert batch["input_ids"].shape[0] > 3


def test_memoised_word_pieces_equal_the_tokenizer_sentence_by_sentence(tmp_path):
    """One memo shared by every sentence of a file (as the tagging and parsing adapters share it) gives each word
    the ids the tokenizer gives it in its own sentence, and asks the tokenizer about each word form once."""
    tok = tiny_tokenizer(["ab", "cd", "e"], tmp_path)
    rng = random.Random(0)
    forms = ["ab", "abcd", "e", "cdcdcd", "zz", "cde", "abab"]  # "zz" is unknown: [UNK]
    sentences = [[rng.choice(forms) for _ in range(rng.randint(1, 9))] for _ in range(60)]
    asked = []
    counting = lambda words, **kw: asked.extend(words) or tok(words, **kw)  # noqa: E731
    pieces_of = WordPieces(counting)
    for words in sentences:
        assert pieces_of(words) == tok(words, add_special_tokens=False)["input_ids"]
    assert sorted(asked) == sorted(set(asked)) == sorted(set(forms))
    for i, words in enumerate(sentences):
        shared = windows_for(tok, words, list(range(len(words))), i, max_length=8, stride=2, pieces_of=pieces_of)
        alone = windows_for(tok, words, list(range(len(words))), i, max_length=8, stride=2)
        assert shared == alone


def check_windows(windows, labels, max_length):
    assert len(windows) > 3 and all(len(w.input_ids) <= max_length for w in windows)
    predicted = [w for win in windows for w in win.words if w >= 0]
    assert sorted(predicted) == list(range(90))  # every word (its first subword) exactly once
    for win in windows:
        for pos, word in enumerate(win.words):
            assert (word >= 0) == (win.labels[pos] != IGNORE)
            if word >= 0:
                assert win.labels[pos] == labels[word]


def test_freeze_bottom_layers_only():
    torch.manual_seed(0)
    encoder = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=3, num_attention_heads=2,
                                   intermediate_size=32), add_pooling_layer=False)
    model = TaskModel(Features(encoder, "freeze", freeze_layers=2), TaggingHead(16, 4))  # embeddings + layer 0
    before = {k: v.clone() for k, v in model.state_dict().items()}
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = torch.randint(5, 50, (4, 8))
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "word_pos": torch.arange(8).expand(4, 8)}
    model(batch).sum().backward()
    opt.step()
    after = model.state_dict()
    prefix = "features.encoder."
    for name in before:
        frozen = name.startswith(prefix + "embeddings") or name.startswith(prefix + "encoder.layer.0.")
        if frozen:
            assert torch.equal(before[name], after[name]), name
    for name in (prefix + "encoder.layer.1.output.dense.weight", prefix + "encoder.layer.2.output.dense.weight",
                 "head.linear.weight"):
        assert not torch.equal(before[name], after[name]), name


@pytest.mark.parametrize("mode", ["feature", "probe"])
def test_frozen_modes_leave_the_encoder_untouched(mode):
    torch.manual_seed(0)
    encoder = BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                                   intermediate_size=32), add_pooling_layer=False)
    features = Features(encoder, mode, layer=1)
    model = TaskModel(features, TaggingHead(16, 4, lstm_hidden=8 if mode == "feature" else None))
    before = {k: v.clone() for k, v in encoder.state_dict().items()}
    opt = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    ids = torch.randint(5, 50, (4, 8))
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "word_pos": torch.arange(8).expand(4, 8),
             "word_mask": torch.ones(4, 8, dtype=torch.bool)}
    model.train()
    assert not encoder.training  # a frozen extractor runs without dropout
    model(batch).sum().backward()
    opt.step()
    assert all(torch.equal(before[k], v) for k, v in encoder.state_dict().items())
    if mode == "feature":
        assert features.mix.weights.grad is not None and features.mix.weights.grad.abs().sum() > 0
