"""Word retrieval MRR, P@k and CSLS against hand computations and a dense-matrix oracle."""
from __future__ import annotations

import numpy as np
import pytest

from mbertlab.analysis.retrieval import mrr_by_class, word_retrieval


def test_mrr_and_precision_by_hand():
    src = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0]), "c": np.array([1.0, 1.0])}
    tgt = {"x": np.array([1.0, 0.1]), "y": np.array([0.1, 1.0]), "z": np.array([-1.0, 0.0])}
    dictionary = {"a": ["x"], "b": ["z"], "c": ["y", "x"], "d": ["x"]}
    scores = word_retrieval(dictionary, src, tgt)
    # a: x is nearest -> rank 1; b: z has cosine 0, below y (0.995) and x (0.0995) -> rank 3;
    # c: x and y tie at cos 0.773, gold includes both -> rank 1; d has no vector -> skipped
    assert scores.ranks == {"a": 1, "b": 3, "c": 1}
    assert scores.mrr == pytest.approx((1 + 1 / 3 + 1) / 3)
    assert scores.p_at_1 == pytest.approx(2 / 3) and scores.p_at_5 == 1.0 and scores.pairs == 3


def test_csls_by_hand():
    """k = every neighbour: CSLS = 2·cos − row mean − column mean = [[0.7, -0.3], [-0.9, 0.5]]."""
    src = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0])}
    tgt = {"x": np.array([1.0, 0.0]), "y": np.array([0.6, 0.8])}
    cos = np.array([[1.0, 0.6], [0.0, 0.8]])
    expected = 2 * cos - cos.mean(1, keepdims=True) - cos.mean(0, keepdims=True)
    assert np.allclose(expected, [[0.7, -0.3], [-0.9, 0.5]])
    scores = word_retrieval({"a": ["y"], "b": ["x"]}, src, tgt, csls=True, k=2)
    assert scores.ranks == {"a": 2, "b": 2}
    assert word_retrieval({"a": ["x"], "b": ["y"]}, src, tgt, csls=True, k=2).ranks == {"a": 1, "b": 1}


def dense_ranks(dictionary, src_vectors, tgt_vectors, csls: bool, k: int = 10) -> dict[str, int]:
    """The oracle: the whole float64 similarity matrix at once, CSLS by full sorts (the code before blocks);
    scores within 1e-9 of the gold one tie with it."""
    sources = [w for w in dictionary if w in src_vectors and any(t in tgt_vectors for t in dictionary[w])]
    targets = sorted({t for w in sources for t in dictionary[w] if t in tgt_vectors})
    unit = lambda m: m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)  # noqa: E731
    cos = unit(np.stack([src_vectors[w] for w in sources])) @ unit(np.stack([tgt_vectors[t] for t in targets])).T
    if csls:
        r_src = np.sort(cos, axis=1)[:, -min(k, cos.shape[1]):].mean(1)
        r_tgt = np.sort(cos, axis=0)[-min(k, cos.shape[0]):, :].mean(0)
        cos = 2 * cos - r_src[:, None] - r_tgt[None, :]
    ranks = {}
    for i, w in enumerate(sources):
        best = max(cos[i, targets.index(t)] for t in dictionary[w] if t in targets)
        ranks[w] = int((cos[i] > best + 1e-9).sum()) + 1
    return ranks


@pytest.mark.parametrize("csls", [False, True])
@pytest.mark.parametrize("rows", [1, 7, 64, 10_000])
def test_blocks_rank_as_the_dense_matrix_ties_included(csls, rows):
    """Vectors with entries in {-1, 0, 1} (3 dimensions): many words share a direction, so many exact ties."""
    rng = np.random.default_rng(rows + csls)
    words = [f"w{i}" for i in range(150)]
    src = {w: rng.integers(-1, 2, 3).astype(np.float64) for w in words}
    tgt = {f"t{i}": rng.integers(-1, 2, 3).astype(np.float64) for i in range(120)}
    dictionary = {w: [f"t{j}" for j in rng.choice(130, size=rng.integers(1, 3), replace=False)] for w in words}
    n_targets = len({t for ts in dictionary.values() for t in ts if t in tgt})
    memory_mb = rows * 2 * 8 * n_targets / 2**20  # exactly `rows` source rows per block
    got = word_retrieval(dictionary, src, tgt, csls=csls, memory_mb=memory_mb)
    expected = dense_ranks(dictionary, src, tgt, csls)
    assert got.ranks == expected
    assert len(set(expected.values())) > 5 and got.pairs == len(expected)
    assert got.mrr == pytest.approx(np.mean([1 / r for r in expected.values()]), abs=1e-12)


def test_mrr_by_class_by_hand():
    ranks = {"house": 1, "tree": 4, "run": 2, "the": 1}
    classes = {"house": "NOUN", "tree": "NOUN", "run": "VERB", "the": "DET"}
    out = mrr_by_class(ranks, classes, {"open": {"NOUN", "VERB"}, "closed": {"DET"}})
    assert out["NOUN"] == pytest.approx((1 + 0.25) / 2) and out["VERB"] == 0.5
    assert out["open"] == pytest.approx((1 + 0.25 + 0.5) / 3) and out["closed"] == 1.0
