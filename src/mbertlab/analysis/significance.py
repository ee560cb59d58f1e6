"""The tests behind a scorecard verdict: a claim holds or fails only when the seeds' spread separates it.

A difference (a > b, a step of a trend, a mean above a constant) is decided by a one-sided Welch t-test at
level α: significant in the claimed direction -> holds; significant the other way -> does not hold;
neither -> inconclusive. An equality (|a − b| ≤ tol) is decided by two one-sided tests (TOST): the
(1 − 2α) interval of the difference inside ±tol -> holds; wholly outside -> does not hold; else
inconclusive. Differences need at least MIN_SEEDS values a side; with no spread at all (every seed equal)
the numbers themselves decide. Each test keeps its p-values, so a study's claims can be corrected for their
number (Holm, `holm`), and an inconclusive one says how many seeds would decide it (`seeds_needed`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from scipy import stats

HOLDS, FAILS, INCONCLUSIVE, NOT_RUN = "holds", "does not hold", "inconclusive", "not run"
UNINFORMATIVE = "uninformative"  # a check the claim needs failed: its numbers say nothing about the claim
STATES = (HOLDS, FAILS, INCONCLUSIVE, UNINFORMATIVE, NOT_RUN)
MIN_SEEDS = 3
POWER = 0.8
MAX_SEEDS = 10_000


@dataclass(frozen=True)
class Outcome:
    """A test's decision, its numbers in words, and its one-sided p-values: of the claim (`p_hold`, the null
    being that it does not hold) and of its opposite (`p_fail`); None where the seeds cannot test."""

    state: str
    how: str
    p_hold: float | None = None
    p_fail: float | None = None
    needed: int | None = None  # seeds a side that would decide it at power POWER (inconclusive ones only)
    effects: tuple[tuple[float, bool], ...] = ()  # the undecided parts' standardized effects (d, two-sample?)

    @property
    def p(self) -> float | None:
        """The p-value of the decision taken (of the nearer one when inconclusive)."""
        if self.state == HOLDS:
            return self.p_hold
        if self.state == FAILS:
            return self.p_fail
        known = [p for p in (self.p_hold, self.p_fail) if p is not None]
        return min(known) if known and self.p_hold is not None else None


def _var_over_n(values: tuple[float, ...]) -> float:
    n = len(values)
    if max(values) == min(values):  # exactly no spread (the mean of equal floats can round away from them)
        return 0.0
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


def exceeds(diff: float, se: float, df: float, margin: float, alpha: float) -> Outcome:
    """Is the difference above `margin`? One-sided Welch test both ways."""
    if se == 0:
        up = diff > margin
        return Outcome(HOLDS if up else FAILS, f"no seed spread: {diff:+.4g} vs margin {margin:.4g}",
                       0.0 if up else 1.0, 1.0 if up else 0.0)
    t = (diff - margin) / se
    p_up, p_down = float(stats.t.sf(t, df)), float(stats.t.cdf(t, df))
    state = HOLDS if p_up < alpha else FAILS if p_down < alpha else INCONCLUSIVE
    return Outcome(state, f"Welch one-sided α={alpha:g}: t={t:.3g}, df={df:.3g}, p={min(p_up, p_down):.3g}",
                   p_up, p_down)


ROUNDING = 1e-12  # a difference of numbers printed to a tenth of a point lands within this of the tolerance


def equivalent(diff: float, se: float, df: float, tol: float, alpha: float) -> Outcome:
    """Is |difference| ≤ tol? TOST: the (1 − 2α) interval inside ±tol holds, wholly outside fails."""
    if se == 0:
        inside = abs(diff) <= tol + ROUNDING
        return Outcome(HOLDS if inside else FAILS, f"no seed spread: [{diff:+.4g}, {diff:+.4g}] vs ±{tol:.4g}",
                       0.0 if inside else 1.0, 1.0 if inside else 0.0)
    half = stats.t.ppf(1 - alpha, df) * se
    low, high = diff - half, diff + half
    state = HOLDS if -tol <= low and high <= tol else FAILS if low > tol or high < -tol else INCONCLUSIVE
    p_hold = max(float(stats.t.sf((diff + tol) / se, df)), float(stats.t.cdf((diff - tol) / se, df)))
    p_fail = min(float(stats.t.sf((diff - tol) / se, df)), float(stats.t.cdf((diff + tol) / se, df)))
    how = f"TOST α={alpha:g}, {100 * (1 - 2 * alpha):g}% interval"
    return Outcome(state, f"{how}: [{low:+.4g}, {high:+.4g}] vs ±{tol:.4g}", p_hold, p_fail)


def combine(states: list[str]) -> str:
    """Every part holds -> holds; any part fails -> does not hold; else inconclusive."""
    if all(s == HOLDS for s in states):
        return HOLDS
    return FAILS if FAILS in states else INCONCLUSIVE


def combine_outcomes(parts: list[Outcome], how: str) -> Outcome:
    """A claim made of parts that must all hold (every step of a trend, every level): it holds when the largest
    part p_hold is below α (an intersection–union test), fails when any part fails (the smallest p_fail)."""
    holds = [o.p_hold for o in parts]
    fails = [o.p_fail for o in parts if o.p_fail is not None]
    undecided = [o for o in parts if o.state != HOLDS] or parts
    needed = [o.needed for o in undecided]
    return Outcome(combine([o.state for o in parts]), how, None if None in holds else max(holds),
                   min(fails) if fails else None, None if None in needed else max(needed),
                   tuple(e for o in undecided for e in o.effects))


def holm(pvalues: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down: the i-th smallest times m − i, kept monotone, at most 1)."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    adjusted, running = [0.0] * len(pvalues), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(pvalues) - rank) * pvalues[i]))
        adjusted[i] = running
    return adjusted


def _power(d: float, n: int, alpha: float, two_sample: bool) -> float:
    df = 2 * n - 2 if two_sample else n - 1
    nc = d * math.sqrt(n / 2 if two_sample else n)
    return float(stats.nct.sf(stats.t.ppf(1 - alpha, df), df, nc))


def seeds_needed(d: float | None, alpha: float, two_sample: bool = True, power: float = POWER) -> int | None:
    """The fewest seeds a side with which a one-sided t-test at `alpha` detects a standardized effect `d`
    (Cohen's d; one-sample: mean / std) with probability `power`; None without an effect or past MAX_SEEDS."""
    if d is None or not math.isfinite(d) or d == 0:
        return None
    d, low, high = abs(d), 2, MAX_SEEDS
    if _power(d, high, alpha, two_sample) < power:
        return None
    while low < high:  # power rises with n: the first n that reaches it
        mid = (low + high) // 2
        low, high = (mid + 1, high) if _power(d, mid, alpha, two_sample) < power else (low, mid)
    return low


def seeds_for(effects: tuple[tuple[float, bool], ...], alpha: float) -> int | None:
    """The seeds a side that decide every undecided part (its standardized effect, two-sample or not) at
    `alpha`; None without parts or when one of them cannot be decided."""
    needed = [seeds_needed(d, alpha, two) for d, two in effects]
    return None if not needed or None in needed else max(needed)


def holm_levels(pvalues: list[float], alpha: float) -> list[float]:
    """The level Holm's step-down holds each p-value to: α / (m − rank), the smallest p at rank 0 (α / m). A
    claim's seeds needed are computed at its level: at α, they would be too few once the claims are corrected."""
    order = sorted(range(len(pvalues)), key=lambda i: pvalues[i])
    levels = [alpha] * len(pvalues)
    for rank, i in enumerate(order):
        levels[i] = alpha / (len(pvalues) - rank)
    return levels


def slope_sign(coef: float, p_two: float, sign: int, alpha: float) -> Outcome:
    """Is a fitted slope's sign `sign` (+1: positive)? Its fit's two-sided p-value halved in the claimed
    direction (the one-sided p of a t-test of the slope): below α holds, the opposite one below α fails."""
    p_hold = p_two / 2 if sign * coef > 0 else 1 - p_two / 2
    p_fail = 1 - p_hold
    state = HOLDS if p_hold < alpha else FAILS if p_fail < alpha else INCONCLUSIVE
    return Outcome(state, f"slope {coef:+.4g}, fit's p = {p_two:.3g} two-sided: one-sided p = {p_hold:.3g}",
                   p_hold, p_fail)
