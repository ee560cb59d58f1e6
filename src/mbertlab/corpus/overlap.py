"""Vocabulary overlap between languages (Wu & Dredze 2019 §5.4) and vocabulary usage curves
(Wu & Dredze 2020 Fig. 3, Table 3)."""
from __future__ import annotations

from collections import Counter
from typing import Iterable


def overlap(source_tokens: Iterable[str], target_tokens: Iterable[str]) -> dict[str, float]:
    """p_type: share of the target's token types that occur in the source; p_token: share of the
    target's token occurrences whose type occurs in the source."""
    source = set(source_tokens)
    target = Counter(target_tokens)
    if not target:
        return {"p_type": 0.0, "p_token": 0.0}
    shared = [t for t in target if t in source]
    return {"p_type": len(shared) / len(target),
            "p_token": sum(target[t] for t in shared) / sum(target.values())}


def vocab_frequency_curve(counts: Counter, vocab: Iterable[str], thresholds: Iterable[int]) -> list[tuple[int, float]]:
    """For each t, the share of the vocabulary whose count in the corpus exceeds t."""
    vocab = list(vocab)
    return [(t, sum(counts.get(v, 0) > t for v in vocab) / len(vocab)) for t in thresholds]


def vocab_coverage(counts: Counter, vocab: Iterable[str]) -> float:
    """Share of the vocabulary that occurs in the corpus at all."""
    return vocab_frequency_curve(counts, vocab, [0])[0][1]
