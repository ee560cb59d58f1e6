"""The context-free MLM loss (analysis/plateau.py) against two independent computations: the conditional entropy
of the explicit joint table of (answer, shown token), and the plug-in conditional entropy of the answers given
the shown tokens that pretrain/data.py's own Masker produces on a sampled stream."""
from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats

from mbertlab.analysis.plateau import context_free_loss, selected_distribution
from mbertlab.pretrain.data import IGNORE, Masker


def _zipf(vocab: int, specials: int, a: float, holes: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = np.zeros(vocab)
    counts[specials:] = 1.0 / np.arange(1, vocab - specials + 1) ** a
    counts[specials + rng.integers(0, vocab - specials, holes)] = 0  # ids of other languages
    return counts / counts.sum()


def _by_table(s: np.ndarray, specials: int) -> float:
    """0.8·H(s) + Σ_x J(x) · H(Y | X = x) over the V × V table J of (answer y, shown x)."""
    q = np.zeros(len(s))
    q[specials:] = 1.0 / (len(s) - specials)
    joint = 0.1 * np.diag(s) + 0.1 * np.outer(s, q)
    shown = joint.sum(axis=0)
    return 0.8 * stats.entropy(s) + sum(shown[x] * stats.entropy(joint[:, x]) for x in np.flatnonzero(shown))


@pytest.mark.parametrize("vocab, specials, a, holes", [(500, 5, 1.0, 100), (500, 5, 1.2, 0), (60, 3, 0.8, 10)])
def test_context_free_loss_equals_the_joint_tables_conditional_entropy(vocab, specials, a, holes):
    s = _zipf(vocab, specials, a, holes)
    assert context_free_loss(s, specials) == pytest.approx(_by_table(s, specials), abs=1e-9)


def test_the_gap_below_the_unigram_entropy_at_lab_scale():
    """The issue's reading: about 0.1·H − 0.14 nats below H (0.38 at H = 5.16): a Zipf vocabulary of 500 ids."""
    s = _zipf(500, 5, 0.9, 0)
    h = stats.entropy(s)
    assert 5.0 < h < 5.5 and 0.33 < h - context_free_loss(s, 5) < 0.43


def test_context_free_loss_matches_the_maskers_own_draws():
    """pretrain/data.py's Masker on 400,000 tokens drawn from s: the best context-free predictor's loss is the
    plug-in entropy of the answers given what is shown ([MASK] or a token), with Miller–Madow's correction of its
    downward bias ((cells − 1) / 2n a row: 0.012 nats here), within sampling error."""
    vocab, specials = 40, 5
    s = _zipf(vocab, specials, 1.1, 5)
    rng = np.random.default_rng(1)
    ids = torch.from_numpy(rng.choice(vocab, size=(2000, 200), p=s))
    inputs, labels = Masker(vocab, specials, 0.15)(ids, torch.Generator().manual_seed(0))
    chosen = labels != IGNORE
    table = np.zeros((vocab, vocab))
    np.add.at(table, (inputs[chosen].numpy(), labels[chosen].numpy()), 1)
    n = table.sum()
    plug_in = sum(row.sum() / n * (stats.entropy(row) + (np.count_nonzero(row) - 1) / (2 * row.sum()))
                  for row in table if row.sum())
    empirical = selected_distribution(table.sum(axis=0))
    # the sampling error of 60,000 selected positions: about 0.006 nats
    assert plug_in == pytest.approx(context_free_loss(empirical, specials), abs=0.01)
    assert stats.entropy(empirical) - plug_in > 0.15  # the copy of a shown token is worth this much
