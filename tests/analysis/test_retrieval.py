"""Word retrieval MRR, P@k and CSLS against hand computations."""
from __future__ import annotations

import numpy as np
import pytest

from mbertlab.analysis.retrieval import csls_scores, mrr_by_class, word_retrieval


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
    src = np.array([[1.0, 0.0], [0.0, 1.0]])
    tgt = np.array([[1.0, 0.0], [0.6, 0.8]])
    cos = np.array([[1.0, 0.6], [0.0, 0.8]])
    expected = 2 * cos - cos.mean(1, keepdims=True) - cos.mean(0, keepdims=True)  # k = all neighbours
    assert np.allclose(csls_scores(src, tgt, k=2), expected)


def test_mrr_by_class_by_hand():
    ranks = {"house": 1, "tree": 4, "run": 2, "the": 1}
    classes = {"house": "NOUN", "tree": "NOUN", "run": "VERB", "the": "DET"}
    out = mrr_by_class(ranks, classes, {"open": {"NOUN", "VERB"}, "closed": {"DET"}})
    assert out["NOUN"] == pytest.approx((1 + 0.25) / 2) and out["VERB"] == 0.5
    assert out["open"] == pytest.approx((1 + 0.25 + 0.5) / 3) and out["closed"] == 1.0
