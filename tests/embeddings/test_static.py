from __future__ import annotations

import json
import random
from itertools import combinations, pairwise

import numpy as np
import pytest
from gensim.models import KeyedVectors

from mbertlab.embeddings.static import (
    StaticConfig,
    TokenisedCorpus,
    train_glove,
    train_static_into,
)
from mbertlab.tokenizers.train import (
    TokenizerConfig,
    load_tokenizer,
    train_tokenizer_into,
)

TOPIC_A = [f"alpha{c}" for c in "bcdfghkl"]
TOPIC_B = [f"omega{c}" for c in "mnprstvz"]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """Two disjoint topic vocabularies: a sentence draws only from one of them."""
    root = tmp_path_factory.mktemp("static")
    rng = random.Random(0)
    lines = [" ".join(rng.choices(TOPIC_A if i % 2 else TOPIC_B, k=8)) for i in range(600)]
    text = root / "x.txt"
    text.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tok = root / "tok"
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=100, languages=["x"]), {"x": text}, tok)
    return tok, text


def _gap(kv: KeyedVectors) -> tuple[float, float]:
    """Mean cosine of co-occurring (same-topic) pairs and of never co-occurring (cross-topic) pairs."""
    same = [kv.similarity(a, b) for t in (TOPIC_A, TOPIC_B) for a, b in combinations(t, 2)]
    cross = [kv.similarity(a, b) for a in TOPIC_A for b in TOPIC_B]
    return float(np.mean(same)), float(np.mean(cross))


@pytest.mark.parametrize("method", ["word2vec_sg", "word2vec_cbow", "glove"])
def test_vectors_load_in_gensim_and_cooccurring_words_are_closer(corpus, tmp_path, method):
    tok, text = corpus
    config = StaticConfig(method=method, dim=16, window=3, epochs=10, seed=1)
    stats = train_static_into(config, tok, [text], tmp_path)
    kv = KeyedVectors.load_word2vec_format(str(tmp_path / "vectors.txt"), binary=False)
    assert kv.vector_size == 16 and set(TOPIC_A + TOPIC_B) <= set(kv.index_to_key)
    same, cross = _gap(kv)
    assert same > cross + 0.2, (same, cross)
    assert json.loads((tmp_path / "stats.json").read_text())["tokens"] == 600 * 8 == stats["tokens"]


def test_word2vec_is_deterministic(corpus, tmp_path):
    tok, text = corpus
    config = StaticConfig(method="word2vec_sg", dim=8, epochs=2, seed=3)
    train_static_into(config, tok, [text], tmp_path / "a")
    train_static_into(config, tok, [text], tmp_path / "b")
    assert (tmp_path / "a/vectors.txt").read_bytes() == (tmp_path / "b/vectors.txt").read_bytes()


def test_glove_loss_decreases_over_first_epochs(corpus):
    tok, text = corpus
    config = StaticConfig(method="glove", dim=16, window=3, epochs=6)
    _, losses = train_glove(config, TokenisedCorpus(load_tokenizer(tok), [text]))
    assert all(b < a for a, b in pairwise(losses)), losses


def test_glove_cooccurrence_is_one_over_distance_and_keeps_distances_past_dropped_pieces():
    from mbertlab.embeddings.static import cooccurrence

    full = cooccurrence([["a", "b", "c"]], {"a": 0, "b": 1, "c": 2}, window=2).toarray()
    assert full.tolist() == [[0, 1, 0.5], [0, 0, 1], [0, 0, 0]]
    assert cooccurrence([["a", "b", "c"]], {"a": 0, "c": 1}, window=2).toarray().tolist() == [[0, 0.5], [0, 0]]
