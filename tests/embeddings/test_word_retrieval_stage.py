"""The word_retrieval stage on crafted static vectors: ranks, MRR, P@1 and MRR by part of speech equal a
hand computation; identical pairs can be left out; words with [UNK] pieces or never seen in the text are
not scored."""
from __future__ import annotations

import json

import numpy as np
import pytest

from mbertlab.analysis.retrieve import WordRetrievalConfig, word_retrieval_into
from mbertlab.store.artifacts import Artifact
from mbertlab.store.results import ResultsDB
from mbertlab.tokenizers.train import TokenizerConfig, load_tokenizer, train_tokenizer_into
from mbertlab.transfer.static_features import write_static_dir

# source a b c d s; target x y z s (s is spelled alike in both); q is in the lexicon, never in the text
VECTORS = {"a": [1.0, 0.0], "b": [0.0, 1.0], "c": [1.0, 1.0], "d": [-1.0, -0.2], "s": [0.3, -1.0],
           "x": [1.0, 0.1], "y": [0.1, 1.0], "z": [-1.0, 1.0], "w": [-1.0, -0.1]}
LEXICON = "a x\nb y\nc z\nd w\ns s\nq x\n"
TAGS = {"a": "NOUN", "b": "VERB", "c": "ADJ", "d": "ADP", "s": "NOUN"}


@pytest.fixture
def world(tmp_path):
    data = tmp_path / "data"
    for lang, words in (("src", "a b c d s"), ("tgt", "x y z w s")):
        (data / lang / "text").mkdir(parents=True)
        for split in ("train", "dev"):
            (data / lang / "text" / f"{split}.txt").write_text(f"{words}\n{words}\n")
    (data / "lexicon").mkdir()
    (data / "lexicon" / "src-tgt.txt").write_text(LEXICON)
    (data / "src" / "ud").mkdir()
    conllu = "".join(f"{i}\t{w}\t_\t{t}\t_\t_\t{int(i > 1)}\t{'root' if i == 1 else 'dep'}\t_\t_\n"
                     for i, (w, t) in enumerate(TAGS.items(), 1))
    (data / "src" / "ud" / "train.conllu").write_text(conllu + "\n")
    tok = tmp_path / "tok"
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=50, languages=["src", "tgt"]),
                         {l: data / l / "text" / "train.txt" for l in ("src", "tgt")}, tok)
    art = tmp_path / "static" / "h"
    write_static_dir(load_tokenizer(tok), {k: np.array(v, dtype=np.float32) for k, v in VECTORS.items()},
                     art / "model", "word2vec_sg")
    return data, Artifact("static", "h", art), ResultsDB(tmp_path / "results.db")


def _cos(u, v):
    u, v = np.array(u), np.array(v)
    return u @ v / np.linalg.norm(u) / np.linalg.norm(v)


def hand_ranks(pairs: dict[str, str]) -> dict[str, int]:
    targets = sorted(set(pairs.values()))
    return {w: 1 + sum(_cos(VECTORS[w], VECTORS[c]) > _cos(VECTORS[w], VECTORS[g]) for c in targets)
            for w, g in pairs.items()}


@pytest.mark.parametrize("identical", [True, False])
def test_scores_equal_a_hand_computation(world, tmp_path, identical):
    data, art, results = world
    out = tmp_path / f"out-{identical}"
    out.mkdir()
    config = WordRetrievalConfig(source="src", target="tgt", lexicon="lexicon/src-tgt.txt", identical=identical)
    summary = word_retrieval_into(config, art, data, out, results, "t")
    pairs = {"a": "x", "b": "y", "c": "z", "d": "w"} | ({"s": "s"} if identical else {})
    ranks = hand_ranks(pairs)
    assert summary["ranks"] == ranks and summary["pairs"] == len(pairs)  # q (never in the text) is not scored
    mrr = np.mean([1 / r for r in ranks.values()])
    assert summary["mrr"] == pytest.approx(mrr)
    assert summary["p@1"] == pytest.approx(np.mean([r == 1 for r in ranks.values()]))
    nouns = [w for w in ranks if TAGS[w] == "NOUN"]
    assert summary["mrr_NOUN"] == pytest.approx(np.mean([1 / ranks[w] for w in nouns]))
    assert summary["mrr_ADJ"] == pytest.approx(1 / ranks["c"])
    assert summary["mrr_closed"] == pytest.approx(1 / ranks["d"])  # ADP is a closed class
    open_words = [w for w in ranks if TAGS[w] != "ADP"]
    assert summary["mrr_open"] == pytest.approx(np.mean([1 / ranks[w] for w in open_words]))
    rows = {r.metric: r.value for r in results.query(study="t") if r.artifact.endswith(out.name)}
    assert rows["mrr"] == pytest.approx(mrr) and rows["mrr_VERB"] == pytest.approx(1 / ranks["b"])
    assert json.loads((out / "scores.json").read_text())["pairs_by_upos"]["NOUN"] == len(nouns)


def test_words_with_unknown_pieces_are_not_scored(world, tmp_path):
    data, art, results = world
    (data / "lexicon" / "src-tgt.txt").write_text(LEXICON + "a unseenword\n")
    (data / "tgt" / "text" / "dev.txt").write_text("x y z w s unseenword\n")  # seen, but [UNK] for the tokenizer
    out = tmp_path / "out"
    out.mkdir()
    config = WordRetrievalConfig(source="src", target="tgt", lexicon="lexicon/src-tgt.txt", identical=False)
    summary = word_retrieval_into(config, art, data, out, results)
    assert summary["ranks"] == hand_ranks({"a": "x", "b": "y", "c": "z", "d": "w"})
