"""The training samplers against computations made here: language shares against p_l ∝ n_l^alpha, and the
word-piece permutation inside drawn windows (K et al. 2020 §3.2.2) against the same windows drawn unpermuted."""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from mbertlab.pretrain.data import WindowSampler

SIZES = {"a": 2_000, "b": 20_000, "c": 200_000}  # tokens per language


class Streams:
    """The two things a sampler reads from shards: the languages and each one's token stream."""

    def __init__(self, sizes: dict[str, int]):
        rng = np.random.default_rng(7)
        self.languages = list(sizes)
        self.streams = {l: rng.integers(10, 5000, size=n) for l, n in sizes.items()}

    def tokens(self, lang: str, split: str = "train") -> np.ndarray:
        return self.streams[lang]


def shares_by_hand(alpha: float) -> dict[str, float]:
    weights = {l: n ** alpha for l, n in SIZES.items()}
    return {l: w / sum(weights.values()) for l, w in weights.items()}


@pytest.mark.parametrize("alpha", [0.0, 0.3, 0.7, 1.0])
@pytest.mark.parametrize("within_batch", [False, True])
def test_language_shares_follow_n_to_the_alpha(alpha, within_batch):
    sampler = WindowSampler(Streams(SIZES), "train", 8, alpha, {}, within_batch=within_batch)
    rng = np.random.default_rng(0)
    draws = 20_000
    if within_batch:
        langs = sampler.draw(rng, draws).langs
    else:
        langs = [l for _ in range(draws) for l in sampler.draw(rng, 2).langs[:1]]  # one language per batch
    counts = Counter(langs)
    want = shares_by_hand(alpha)
    for lang, p in want.items():  # 5 binomial standard errors (at most 0.018 here)
        assert counts[lang] / draws == pytest.approx(p, abs=5 * (p * (1 - p) / draws) ** 0.5 + 1e-9), (lang, counts)
    # the tolerance separates the alphas tried: each is far from its neighbours' shares
    for other in (0.0, 0.3, 0.7, 1.0):
        if other != alpha:
            assert max(abs(counts[l] / draws - shares_by_hand(other)[l]) for l in SIZES) > 0.05


@pytest.mark.parametrize("within_batch", [False, True])
@pytest.mark.parametrize("share", [0.5, 1.0])
def test_permuted_windows_are_the_same_windows_with_disjoint_swaps(within_batch, share):
    """Both samplers draw the same starts from equal generators; the permuted language's rows differ from
    the plain ones by share·⌊L/2⌋ disjoint transpositions, the other language's rows not at all."""
    seq_len, rows = 16, 400
    streams = Streams({"a": 5_000, "b": 5_000})
    plain = WindowSampler(streams, "train", seq_len, 0.0, {}, within_batch=within_batch)
    permuted = WindowSampler(streams, "train", seq_len, 0.0, {"b": share}, within_batch=within_batch)
    swaps = int(share * (seq_len // 2))
    seen = Counter()
    for seed in range(4 if within_batch else 40):
        x = plain.draw(np.random.default_rng(seed), rows if within_batch else 10)
        y = permuted.draw(np.random.default_rng(seed), rows if within_batch else 10)
        assert x.langs == y.langs
        for lang, before, after in zip(x.langs, x.input_ids.numpy(), y.input_ids.numpy()):
            seen[lang] += 1
            if lang == "a":
                assert np.array_equal(before, after)
                continue
            moved = np.flatnonzero(before != after)
            assert sorted(before) == sorted(after) and len(moved) <= 2 * swaps
            pairs = {int(i): int(np.flatnonzero((after == before[i]) & (before == after[i]))[0]) for i in moved}
            assert all(pairs[j] == i for i, j in pairs.items())  # every change is one half of a swap
            seen["moved"] += len(moved)
    assert seen["a"] > 50 and seen["b"] > 50
    assert seen["moved"] > 0.9 * 2 * swaps * seen["b"]  # swaps of two equal pieces are the only invisible ones
