"""A check's test of one score above another: the seeds' spread, and the test set's own sampling error.

The claims are decided by the seeds' spread alone (studies/significance.py). A check that asks whether a model
is above a control at all must also see that the test set is a sample: at 300 test pairs an accuracy of 0.6 has
a binomial standard error of 2.8 points, larger than a fixed 2-point margin, and every seed is scored on the same
pairs, so the seeds' spread does not show it. With `n_test`, each mean's variance gets p(1 − p) / n_test added
(independent errors of the two sides: conservative where both are scored on the same items).
"""
from __future__ import annotations

import math
from scipy import stats

from mbertlab.studies.significance import FAILS, HOLDS, INCONCLUSIVE, Outcome, too_few, welch


def _binomial(values: tuple[float, ...], n_test: int | None) -> float:
    """The test set's sampling variance of a mean score in [0, 1] (0 without a test-set size)."""
    if not n_test:
        return 0.0
    p = min(max(sum(values) / len(values), 0.0), 1.0)
    return p * (1 - p) / n_test


def gap_test(a: tuple[float, ...], b: tuple[float, ...], margin: float, alpha: float,
             n_test: int | None = None) -> Outcome:
    """Is mean(a) − mean(b) > margin? A one-sided Welch test over the seeds (b of one value: a constant, as the
    majority label), with the test set's binomial variance added to each side's when `n_test` is given (then
    its degrees of freedom are the seeds', or a normal test when the seeds do not spread). Its `how` gives the
    p of the claim "above" (small: above)."""
    short = too_few(a) if len(b) == 1 else too_few(a, b)
    if short:
        return Outcome(INCONCLUSIVE, short)
    diff = sum(a) / len(a) - sum(b) / len(b)
    se, df = welch(a, b if len(b) > 1 else ())
    se = math.sqrt(se ** 2 + _binomial(a, n_test) + _binomial(b, n_test))
    if se == 0:
        p_up = 0.0 if diff > margin else 1.0
        return Outcome(HOLDS if p_up < alpha else FAILS, f"no spread: {diff:+.4g} vs {margin:.4g}", p_up, 1 - p_up)
    t = (diff - margin) / se
    p_up = float(stats.t.sf(t, df))
    items = f" and {n_test} test items" if n_test else ""
    return Outcome(HOLDS if p_up < alpha else FAILS if p_up > 1 - alpha else INCONCLUSIVE,
                   f"one-sided α={alpha:g} over the seeds{items}: t={t:.3g}, df={df:.3g}, p={p_up:.3g}",
                   p_up, float(stats.t.cdf(t, df)))
