"""Sampling and balancing: one function for both offline budgets and the online choice of a batch's
language, so a corpus and a pretraining run agree on what "smoothed" means."""
from __future__ import annotations


def sampling_probs(sizes: dict[str, float], alpha: float) -> dict[str, float]:
    """p_l ∝ n_l^alpha: 1 keeps the data's proportions, 0.7 is mBERT's, 0.5 XLM's, 0 uniform."""
    if not sizes:
        return {}
    weights = {l: float(n) ** alpha if n > 0 else 0.0 for l, n in sizes.items()}
    total = sum(weights.values())
    return {l: w / total for l, w in weights.items()}


def balanced_budget(sizes: dict[str, int]) -> dict[str, int]:
    """Truncate every language to the smallest one (Limisiewicz et al.'s "balanced")."""
    smallest = min(sizes.values())
    return {l: smallest for l in sizes}


def smoothed_budget(sizes: dict[str, int], alpha: float, total: int) -> dict[str, int]:
    """Split a total budget by the smoothed distribution, never asking a language for more than it has."""
    probs = sampling_probs(sizes, alpha)
    return {l: min(sizes[l], round(total * p)) for l, p in probs.items()}
