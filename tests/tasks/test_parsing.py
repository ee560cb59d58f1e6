"""MST decoding always yields a tree with one root; attachment scores equal hand-computed CoNLL 2018 values."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mbertlab.tasks.parsing.decode import decode_mst
from mbertlab.tasks.parsing.metric import attachment_scores
from tests.conftest import examples


def is_tree_with_one_root(heads: list[int]) -> bool:
    n = len(heads)
    if sum(h == 0 for h in heads) != 1 or any(not 0 <= h <= n or h == i + 1 for i, h in enumerate(heads)):
        return False
    for start in range(1, n + 1):
        seen, node = set(), start
        while node:
            if node in seen:
                return False
            seen.add(node)
            node = heads[node - 1]
    return True


def tree_score(scores: np.ndarray, heads: list[int]) -> float:
    return sum(scores[d + 1, h] for d, h in enumerate(heads))


@settings(max_examples=examples(150), deadline=None)
@given(st.integers(1, 9), st.integers(0, 2**31 - 1), st.booleans())
def test_random_scores_give_a_single_rooted_tree(n, seed, root_heavy):
    scores = np.random.default_rng(seed).normal(size=(n + 1, n + 1))
    if root_heavy:  # tempt the decoder to attach everything to the root
        scores[:, 0] += 5.0
    heads = decode_mst(scores)
    assert len(heads) == n and is_tree_with_one_root(heads)


def test_decoder_finds_the_best_single_rooted_tree_by_brute_force():
    rng = np.random.default_rng(0)
    for _ in range(30):
        n = 4
        scores = rng.normal(size=(n + 1, n + 1))
        scores[:, 0] += rng.uniform(0, 3)
        trees = [list(h) for h in itertools.product(range(n + 1), repeat=n) if is_tree_with_one_root(list(h))]
        best = max(tree_score(scores, t) for t in trees)
        assert tree_score(scores, decode_mst(scores)) == pytest.approx(best)


def test_attachment_scores_by_hand():
    gold_heads = [[2, 0, 2, 2]]
    gold_rels = [["nsubj", "root", "obj", "punct"]]
    gold_upos = [["PRON", "VERB", "NOUN", "PUNCT"]]
    pred_heads = [[2, 0, 1, 2]]  # obj attached wrongly
    pred_rels = [["nsubj:pass", "root", "obj", "dep"]]  # subtype ignored; punct label wrong
    with_punct = attachment_scores(gold_heads, gold_rels, gold_upos, pred_heads, pred_rels)
    assert with_punct == {"uas": 3 / 4, "las": 2 / 4}
    without = attachment_scores(gold_heads, gold_rels, gold_upos, pred_heads, pred_rels, punct=False)
    assert without == {"uas_nopunct": 2 / 3, "las_nopunct": 2 / 3}
