"""The checks that test one score against another (learned, transfers, rises, headroom: studies/preconditions.py),
and their test: the seeds' spread, and the test set's own sampling error.

The claims are decided by the seeds' spread alone (analysis/significance.py). A check that asks whether a model
is above a control at all must also see that the test set is a sample: at 300 test pairs an accuracy of 0.6 has
a binomial standard error of 2.8 points, larger than a fixed 2-point margin, and every seed is scored on the same
pairs, so the seeds' spread does not show it. With `n_test`, each mean's variance gets p(1 − p) / n_test added
(independent errors of the two sides: conservative where both are scored on the same items).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import pairwise

from scipy import stats

from mbertlab.store.results import SELECTED_RUN_KEYS, ResultRow
from mbertlab.studies.selection import Selection, label, merged, pick, seed_means
from mbertlab.analysis.significance import FAILS, HOLDS, INCONCLUSIVE, Outcome, too_few, welch


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool | None  # None: the check could not be evaluated (its rows or artifacts are missing)
    text: str

    def __str__(self) -> str:
        mark = "passed" if self.passed else "failed" if self.passed is False else "not evaluated"
        return f"{self.name} {mark}: {self.text}"


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


def _alike(control: list[ResultRow], row: ResultRow, overridden: Selection) -> list[ResultRow]:
    """The control's rows that carry the model row's own value of each tag on which they differ among
    themselves (lms2023's a100 is in both sets: its probe is compared with its own set's control). Not a tag:
    what the check overrides, what a row records of its own selected run (the step a run chose), and the seed (a
    stage's `seed` tag): the seeds are the samples the test compares, never a group of one."""
    keys = {k for c in control for k in c.extra} - set(overridden) - SELECTED_RUN_KEYS - {"seed"}
    for key in sorted(k for k in keys if k in row.extra and not k.startswith("row ")):
        if len({str(c.extra.get(key)) for c in control}) > 1:
            control = [c for c in control if str(c.extra.get(key)) == str(row.extra[key])] or control
    return control


def _control_rows(control: list[ResultRow], row: ResultRow, overridden: Selection) -> list[ResultRow]:
    """The control's rows a model's row is compared with: of the same train and test language where the control
    has them (a majority label is one run; a random-init control, one a seed), else all of them; among those,
    the rows of the model row's own tags (`_alike`)."""
    same = [c for c in control if (c.train_lang, c.test_lang) == (row.train_lang, row.test_lang)]
    return _alike(same or control, row, overridden)


def _groups(model: list[ResultRow], control: list[ResultRow], overridden: Selection) -> list[tuple[list, list]]:
    """The model's rows grouped by the control rows they are compared with (a language, a set), each with
    them: every group is tested apart."""
    groups: dict[tuple[int, ...], tuple[list, list]] = {}
    for r in model:
        found = _control_rows(control, r, overridden)
        groups.setdefault(tuple(map(id, found)), ([], found))[0].append(r)
    return list(groups.values())


def _is_control(side: Selection, controls: list[Selection]) -> bool:
    """A side that selects one of the check's controls (K et al.'s "better than random" compares a model with
    its random-init control): the control is the baseline, not a model that had to learn."""
    return any(f and all(side.get(k) == v for k, v in f.items()) for f in map(merged, controls))


def gap_checks(name: str, check, controls: list[Selection], sides: list[Selection],
               rows: list[ResultRow]) -> CheckResult:
    """Every side's model score (`select`) above each control by `margin`, by `gap_test` in each group of
    `_groups`; the text names the group nearest to failing (the largest p)."""
    worst: tuple[float, float, str] | None = None  # (p, −(gap − margin), words): the largest p, then the least gap
    for side in sides:
        own = merged(side, check.select)
        if _is_control(own, controls):
            continue
        for against in controls:
            model, control = pick(rows, own), pick(rows, merged(own, against))
            if not model or not control:
                return CheckResult(name, None, f"no rows for {'the control ' * bool(model)}"
                                               f"{label(merged(own, against) if model else own)}")
            for values, found in _groups(model, control, against):
                # a control's rows of one seed are one value (k2020's majority label is one run, repeated by each
                # condition that scores its source test file: its equal rows were once read as seeds)
                a, b = tuple(r.value for r in values), tuple(seed_means(found).values())
                out = gap_test(a, b, check.margin, check.alpha, check.n_test)
                if out.p_hold is None:
                    return CheckResult(name, None, f"{label(own)}: {out.how}")
                ma, mb = sum(a) / len(a), sum(b) / len(b)
                words = (f"{label(own)}{_languages(values)}: {ma:.4g} vs {label(against)} {mb:.4g} "
                         f"({ma - mb:+.4g}, needs > {check.margin:.4g}; {out.how})")
                key = (out.p_hold, check.margin - (ma - mb), words)
                worst = key if worst is None else max(worst, key, key=lambda w: w[:2])
    if worst is None:
        return CheckResult(name, None, "every side is a control: no model to check")
    passed = worst[0] < check.alpha
    return CheckResult(name, passed, ("weakest: " if passed else "") + worst[2])


def _languages(rows: list[ResultRow]) -> str:
    langs = sorted({f"{r.train_lang}→{r.test_lang}" if r.train_lang else r.test_lang for r in rows} - {""})
    return f" ({', '.join(langs)})" if langs else ""


def rises(name: str, check, sides: list[Selection], rows: list[ResultRow]) -> CheckResult:
    """Every step of `levels` up by `margin`, for each side's selection; the text names the weakest step."""
    worst: tuple[float, str] | None = None
    for side in sides:
        found = [tuple(r.value for r in pick(rows, merged(side, check.select, {check.by: level})))
                 for level in check.levels]
        if not all(found):
            return CheckResult(name, None, f"no rows for a level of {check.by} in {label(merged(side, check.select))}")
        for (low, a), (high, b) in pairwise(zip(check.levels, found)):
            gain = sum(b) / len(b) - sum(a) / len(a)
            out = gap_test(b, a, check.margin, check.alpha)
            p = out.p_hold if out.p_hold is not None else (0.0 if gain > check.margin else 1.0)
            how = out.how if out.p_hold is not None else f"by the means ({out.how})"
            words = f"{check.by} {low} → {high}: {gain:+.4g} (needs > {check.margin:g}; {how})"
            worst = max(worst or (p, words), (p, words), key=lambda w: w[0])
    return CheckResult(name, worst[0] < check.alpha, ("weakest step: " if worst[0] < check.alpha else "") + worst[1])


def headroom(name: str, check, sides: list[Selection], rows: list[ResultRow]) -> CheckResult:
    """Uninformative when every side's mean is within `distance` of the ceiling, or every one of chance."""
    means = []
    for side in sides:
        picked = pick(rows, merged(side, check.select))
        if not picked:
            return CheckResult(name, None, f"no rows for {label(merged(side, check.select))}")
        means.append(sum(r.value for r in picked) / len(picked))
    at_top = all(check.ceiling - m <= check.distance for m in means)
    at_chance = all(m - check.chance <= check.distance for m in means)
    where = " at the ceiling" if at_top else " at chance" if at_chance else ""
    return CheckResult(name, not (at_top or at_chance),
                       f"means {', '.join(f'{m:.4g}' for m in means)}{where or ': room to move'} (ceiling "
                       f"{check.ceiling:g}, chance {check.chance:.4g}, ± {check.distance:g})")
