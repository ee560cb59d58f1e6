"""The tests behind a scorecard verdict: a claim holds or fails only when the seeds' spread separates it.

A difference (a > b, a step of a trend, a mean above a constant) is decided by a one-sided Welch t-test at
level α: significant in the claimed direction -> holds; significant the other way -> does not hold;
neither -> inconclusive. An equality (|a − b| ≤ tol) is decided by two one-sided tests (TOST): the
(1 − 2α) interval of the difference inside ±tol -> holds; wholly outside -> does not hold; else
inconclusive. Differences need at least MIN_SEEDS values a side; with no spread at all (every seed equal)
the numbers themselves decide.
"""
from __future__ import annotations

import math

from scipy import stats

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "holds", "does not hold", "inconclusive", "not run"
STATES = (HOLDS, FAILS, INCONCLUSIVE, NOT_RUN)
MIN_SEEDS = 3


def _var_over_n(values: tuple[float, ...]) -> float:
    n = len(values)
    mean = sum(values) / n
    return sum((v - mean) ** 2 for v in values) / (n - 1) / n


def welch(a: tuple[float, ...], b: tuple[float, ...]) -> tuple[float, float]:
    """Standard error of mean(a) − mean(b) and its Welch–Satterthwaite degrees of freedom (b may be empty:
    then a one-sample error)."""
    return combined([a] + ([b] if b else []))


def combined(groups: list[tuple[float, ...]]) -> tuple[float, float]:
    """Standard error of a ± combination of group means and its Welch–Satterthwaite degrees of freedom."""
    parts = [(_var_over_n(g), len(g) - 1) for g in groups]
    se2 = sum(v for v, _ in parts)
    if se2 == 0:
        return 0.0, math.inf
    df = se2 ** 2 / sum(v ** 2 / d for v, d in parts if v > 0)
    return math.sqrt(se2), df


def too_few(*groups: tuple[float, ...]) -> str | None:
    """Why the seeds cannot decide a difference, or None when every group has MIN_SEEDS values."""
    ns = [len(g) for g in groups]
    return None if min(ns) >= MIN_SEEDS else f"needs ≥ {MIN_SEEDS} seeds a side (n = {', '.join(map(str, ns))})"


def exceeds(diff: float, se: float, df: float, margin: float, alpha: float) -> tuple[str, str]:
    """Is the difference above `margin`? One-sided Welch test both ways."""
    if se == 0:
        return (HOLDS if diff > margin else FAILS), f"no seed spread: {diff:+.4g} vs margin {margin:.4g}"
    t = (diff - margin) / se
    p_up, p_down = stats.t.sf(t, df), stats.t.cdf(t, df)
    state = HOLDS if p_up < alpha else FAILS if p_down < alpha else INCONCLUSIVE
    return state, f"Welch one-sided α={alpha:g}: t={t:.3g}, df={df:.3g}, p={min(p_up, p_down):.3g}"


def equivalent(diff: float, se: float, df: float, tol: float, alpha: float) -> tuple[str, str]:
    """Is |difference| ≤ tol? TOST: the (1 − 2α) interval inside ±tol holds, wholly outside fails."""
    half = 0.0 if se == 0 else stats.t.ppf(1 - alpha, df) * se
    low, high = diff - half, diff + half
    state = HOLDS if -tol <= low and high <= tol else FAILS if low > tol or high < -tol else INCONCLUSIVE
    how = "no seed spread" if se == 0 else f"TOST α={alpha:g}, {100 * (1 - 2 * alpha):g}% interval"
    return state, f"{how}: [{low:+.4g}, {high:+.4g}] vs ±{tol:.4g}"


def combine(states: list[str]) -> str:
    """Every part holds -> holds; any part fails -> does not hold; else inconclusive."""
    if all(s == HOLDS for s in states):
        return HOLDS
    return FAILS if FAILS in states else INCONCLUSIVE
