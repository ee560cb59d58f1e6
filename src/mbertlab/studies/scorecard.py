"""Reproduction scorecard: a paper's claims (studies/findings.py) decided from results.db rows.

Each finding's checks (studies/preconditions.py) are evaluated first: a failing one makes it *uninformative*.
The seeds then decide (analysis/significance.py): holds, does not hold, or inconclusive when their spread cannot
separate the effect; a finding whose rows are missing is *not run*, never a silent pass. The p-values of a
study's tested claims (the paper's, not our own observations) are corrected for their number by Holm–Bonferroni:
a claim holds or fails only when its adjusted p is below its α. An inconclusive one says how many seeds a side
would decide the observed effect with power 0.8, from the observed spread, at the level Holm holds it to.
"""
from __future__ import annotations

import math
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

from mbertlab.analysis.artifact_facts import ArtifactFacts
from mbertlab.report.tables import Table
from mbertlab.store.results import ResultRow
from mbertlab.studies.preconditions import evaluate_checks
from mbertlab.studies.findings import (
    Above,
    DeltaWithin,
    Finding,
    Greater,
    Monotone,
    Untested,
    Within,
    _Finding,
    _Tolerance,
    parse_findings,
)
from mbertlab.studies.selection import deltas, field, label, merged, pick, seed_means
from mbertlab.studies.verdict import Side, Verdict, cohen_d, pooled_std
from mbertlab.analysis.significance import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    STATES,
    UNINFORMATIVE,
    Outcome,
    combine_outcomes,
    combined,
    equivalent,
    exceeds,
    holm,
    holm_levels,
    seeds_for,
    slope_sign,
    too_few,
    welch,
)

__all__ = ["FAILS", "HOLDS", "INCONCLUSIVE", "NOT_RUN", "UNINFORMATIVE", "Verdict", "evaluate_findings",
           "parse_findings", "scorecard_tables", "verdict_counts"]


PAIRED_COLUMNS = ("task", "test_lang", "split")  # a paired model's rows also match on these, unless a side fixes one


def _side(finding: _Finding, rows: list[ResultRow], selection: dict, suffix: str, apart: set[str]) -> Side:
    """The rows of one side; with each value, what pairs it with the other sides' (its seeds: the row's and its
    job's tag, and the columns no side sets apart: the same task, language and split)."""
    full = merged(finding.where, selection)
    if finding.delta is not None:
        by_model = deltas(rows, full, finding.delta.source, finding.delta.target)  # by (artifact, seed)
        return Side(label(selection) + suffix, tuple(by_model.values()), tuple((seed,) for _, seed in by_model))
    picked = pick(rows, full)
    if finding.unit == "seed":
        means = seed_means(picked)
        return Side(label(selection) + suffix, tuple(means.values()), tuple(means))
    same = [c for c in PAIRED_COLUMNS if c not in apart]
    return Side(label(selection) + suffix, tuple(r.value for r in picked),
                tuple((r.seed, r.extra.get("seed"), *(getattr(r, c) for c in same)) for r in picked))


def _tolerance(f: _Tolerance, a: Side, b: Side) -> tuple[float, str]:
    if f.tol is not None:
        return f.tol, f"{f.tol:.4g}"
    s = pooled_std(a, b)
    return f.k * s, f"{f.k:g}·std = {f.k * s:.4g}"


def _verdict(finding: _Finding, sides, outcome: Outcome | str, effect, d, test, checks=()) -> Verdict:
    ref = "; ".join(x for x in (finding.section, finding.ref) if x)
    claim = finding.quote if finding.quote and not finding.own else finding.claim or finding.quote
    if isinstance(outcome, str):
        outcome = Outcome(outcome, "")
    return Verdict(finding.id, claim, finding.kind, outcome.state, sides, effect, d, test, ref, finding.own,
                   tuple(checks), outcome.p, None, outcome.needed, finding.alpha, outcome.effects)


def _levels(finding: Above | Greater | Within, rows: list[ResultRow]) -> list[Any]:
    """The levels of `finding.by` among the rows the finding selects (a's for greater), in a stable order."""
    if finding.levels is not None:
        return finding.levels
    found = []
    for row in pick(rows, merged(finding.where, finding.select if isinstance(finding, Above) else finding.a)):
        level = field(row, finding.by)
        if level is not None and level not in found:
            found.append(level)
    return sorted(found, key=lambda v: (isinstance(v, str), v)) or [None]


def _selections(finding: Finding, rows: list[ResultRow]) -> list[dict]:
    if isinstance(finding, Above):
        return ([finding.select] if finding.by is None
                else [{**finding.select, finding.by: level} for level in _levels(finding, rows)])
    if isinstance(finding, Monotone):
        return [{**finding.select, finding.by: level} for level in finding.levels]
    if isinstance(finding, DeltaWithin):
        return [finding.a1, finding.a2, finding.b1, finding.b2]
    if isinstance(finding, (Greater, Within)) and finding.by is not None:
        return [{**side, finding.by: level} if i == 0 or finding.by not in side else side
                for level in _levels(finding, rows) for i, side in enumerate((finding.a, finding.b))]
    return [finding.a, finding.b]


def _evaluate(finding: Finding, rows: list[ResultRow], facts: ArtifactFacts) -> Verdict:
    if isinstance(finding, Untested):
        return _verdict(finding, (), NOT_RUN, None, None, f"not tested: {finding.why}")
    sels = _selections(finding, rows)
    what = " (Δ = source − target per model)" if finding.delta else ""
    apart = {key for s in sels for key in s}
    sides = tuple(_side(finding, rows, s, what, apart) for s in sels)
    empty = [s.label for s in sides if s.n == 0]
    if empty:
        return _verdict(finding, sides, NOT_RUN, None, None, "no rows for " + "; ".join(empty))
    checks = evaluate_checks(finding.checks, [merged(finding.where, s) for s in sels], rows, facts)
    failing = [c for c in checks if not c.passed]
    if failing:
        what = ", ".join(f"{c.name} {'failed' if c.passed is False else 'not evaluated'}" for c in failing)
        return _verdict(finding, sides, UNINFORMATIVE, None, None, f"not judged: {what} (see checks)", checks)
    if isinstance(finding, Above):
        verdict = _fit(finding, sides, rows, sels) if finding.test == "fit" else _above(finding, sides)
    elif isinstance(finding, Greater):
        verdict = _greater(finding, sides)
    elif isinstance(finding, Within):
        verdict = _within_levels(finding, sides)
    elif isinstance(finding, DeltaWithin):
        a1, a2, b1, b2 = sides
        da, db = a1.mean - a2.mean, b1.mean - b2.mean
        verdict = _within(finding, sides, da - db, sides, f"Δa − Δb = ({da:+.4g}) − ({db:+.4g})")
    else:
        verdict = _monotone(finding, sides)
    return replace(verdict, checks=tuple(checks))


def _exceeds(finding: _Finding, a: Side, b: Side | None, diff: float, margin: float) -> Outcome:
    """Is mean(a) − mean(b) (or mean(a) alone, b None) above `margin`, beyond the seeds' spread? With the seeds
    a side that would decide it (a two-sample or one-sample t-test on the observed spread). A paired finding
    tests the differences of matched rows (same seed, task, language, split: a one-sample test on them)."""
    if b is not None and finding.paired:
        return _paired(finding, a, b, margin)
    spread = a.std if b is None else pooled_std(a, b)
    effects = (((diff - margin) / spread, b is not None),) if spread > 0 else ()
    needed = seeds_for(effects, finding.alpha)
    short = too_few(a.values) if b is None else too_few(a.values, b.values)
    if short:
        return Outcome(INCONCLUSIVE, short, needed=needed, effects=effects)
    out = exceeds(diff, *welch(a.values, b.values if b else ()), margin, finding.alpha)
    return replace(out, needed=needed, effects=effects)


MATCH = "seed, task, language and split"


def _matched_differences(a: Side, b: Side) -> Side:
    """a − b of the rows matched by seed, task, language and split (rows without a match left out)."""
    mine = dict(zip(b.runs, b.values))
    return Side(f"{a.label} − {b.label}", tuple(v - mine[k] for k, v in zip(a.runs, a.values) if k in mine))


def _difference(finding: _Finding, a: Side, b: Side) -> float:
    """What a greater finding's effect is: the mean of the matched differences when paired."""
    return _matched_differences(a, b).mean if finding.paired else a.mean - b.mean


def _paired(finding: _Finding, a: Side, b: Side, margin: float) -> Outcome:
    twice = [s.label for s in (a, b) if len(set(s.runs)) < len(s.runs)]
    if twice:
        return Outcome(INCONCLUSIVE, f"paired: several rows of one {MATCH} in {'; '.join(twice)} (filter them)")
    diffs = _matched_differences(a, b)
    if diffs.n == 0:
        return Outcome(INCONCLUSIVE, f"paired: no row of one side matches one of the other (same {MATCH})")
    out = _exceeds(finding.model_copy(update={"paired": False}), diffs, None, diffs.mean, margin)
    return replace(out, how=f"paired over {diffs.n} pairs: {out.how}")


def _greater(finding: Greater, sides: tuple[Side, ...]) -> Verdict:
    """a above b (at every level of `by`: each pair of sides in turn)."""
    pairs = list(zip(sides[::2], sides[1::2]))
    parts = [_exceeds(finding, a, b, _difference(finding, a, b), finding.margin) for a, b in pairs]
    a, b = min(pairs, key=lambda ab: _difference(finding, *ab))
    diff = _difference(finding, a, b)
    where = f" (smallest: {a.label})" if len(pairs) > 1 else ""
    hows = "; ".join(f"{a.label}: {o.how}" for (a, _), o in zip(pairs, parts)) if len(pairs) > 1 else parts[0].how
    return _verdict(finding, sides, combine_outcomes(parts, hows), diff, cohen_d(a, b),
                    f"a − b = {diff:+.4g} > {finding.margin:.4g}{where}; {hows}")


def _signed(side: Side, sign: int) -> Side:
    return Side(side.label, tuple(sign * v for v in side.values), side.runs)


def _above(finding: Above, sides: tuple[Side, ...]) -> Verdict:
    sign = 1 if finding.kind == "above" else -1
    worst = min(sides, key=lambda side: sign * side.mean)
    where = f" ({'lowest' if sign > 0 else 'highest'}: {worst.label})" if len(sides) > 1 else ""
    test = f"mean = {worst.mean:.4g} {'>' if sign > 0 else '<'} {finding.value:.4g}{where}"
    if finding.test == "direct":
        state = HOLDS if sign * (worst.mean - finding.value) > 0 else FAILS
        return _verdict(finding, sides, state, worst.mean - finding.value, None, test + "; direct (no seed test)")
    parts = [_exceeds(finding, _signed(side, sign), None, sign * side.mean, sign * finding.value) for side in sides]
    hows = "; ".join(f"{side.label}: {o.how}" for side, o in zip(sides, parts)) if len(sides) > 1 else parts[0].how
    return _verdict(finding, sides, combine_outcomes(parts, hows), worst.mean - finding.value, None,
                    f"{test}; {hows}")


def _fit(finding: Above, sides: tuple[Side, ...], rows: list[ResultRow], sels: list[dict]) -> Verdict:
    """Each selected slope's sign by its fit's own p-value (and, with `before`, the opposite sign of the slope
    that `before` picks: a sign change is both, each significant). Every part must hold (intersection–union)."""
    sign = 1 if finding.kind == "above" else -1
    claimed = [(r, sign, "") for s in sels for r in pick(rows, merged(finding.where, s))]
    earlier = [] if finding.before is None else [(r, -sign, f"{label(finding.before)}: ") for s in sels
                                                   for r in pick(rows, merged(finding.where, s, finding.before))]
    if finding.before is not None and not earlier:
        return _verdict(finding, sides, NOT_RUN, None, None, f"no rows for the slope before: {label(finding.before)}")
    claimed += earlier
    missing = [r.metric for r, _, _ in claimed if r.extra.get("p_value") is None]
    if missing:
        return _verdict(finding, sides, NOT_RUN, None, None, f"no fit p-value on the {missing[0]} rows")
    parts = [slope_sign(r.value, r.extra["p_value"], s, finding.alpha) for r, s, _ in claimed]
    hows = "; ".join(f"{w}{r.metric} {o.how}" for (r, _, w), o in zip(claimed, parts))
    worst = min(sign * r.value for r, s, _ in claimed if s == sign)
    return _verdict(finding, sides, combine_outcomes(parts, hows), sign * worst, None,
                    f"slope {'>' if sign > 0 else '<'} 0{' after a change of sign' if finding.before else ''}; {hows}")


def _within(finding, sides: tuple[Side, ...], diff: float, groups: tuple[Side, ...], what: str) -> Verdict:
    out, test = _equivalence(finding, diff, groups, what)
    d = cohen_d(groups[0], groups[1]) if len(groups) == 2 and out.p_hold is not None else None
    return _verdict(finding, sides, out, diff, d, test)


def _equivalence(finding, diff: float, groups: tuple[Side, ...], what: str) -> tuple[Outcome, str]:
    """|diff| within the tolerance by TOST over the groups' seeds, with the words of the test."""
    tol, text = _tolerance(finding, groups[0], groups[-1] if len(groups) == 2 else groups[2])
    test = f"|{what}| = {abs(diff):.4g} ≤ {text}"
    spread = pooled_std(groups[0], groups[1]) * (1 if len(groups) == 2 else math.sqrt(2))  # Δ of Δs: twice the var
    effects = (((tol - abs(diff)) / spread, True),) if spread > 0 else ()
    needed = seeds_for(effects, finding.alpha)
    short = too_few(*(g.values for g in groups))
    if short:
        return Outcome(INCONCLUSIVE, short, needed=needed, effects=effects), f"{test}; {short}"
    se, df = combined([g.values for g in groups])
    out = replace(equivalent(diff, se, df, tol, finding.alpha), needed=needed, effects=effects)
    return out, f"{test}; {out.how}"


def _within_levels(finding: Within, sides: tuple[Side, ...]) -> Verdict:
    """a within the tolerance of b (at every level of `by`: each pair tested apart, all must hold)."""
    pairs = list(zip(sides[::2], sides[1::2]))
    if len(pairs) == 1:
        a, b = pairs[0]
        return _within(finding, sides, a.mean - b.mean, (a, b), "a − b")
    parts = [_equivalence(finding, a.mean - b.mean, (a, b), f"{a.label} − b") for a, b in pairs]
    a, b = max(pairs, key=lambda ab: abs(ab[0].mean - ab[1].mean))
    hows = "; ".join(text for _, text in parts)
    return _verdict(finding, sides, combine_outcomes([o for o, _ in parts], hows), a.mean - b.mean, None,
                    f"every level (largest: {a.label}): {hows}")


def _monotone(finding: Monotone, sides: tuple[Side, ...]) -> Verdict:
    sign = 1 if finding.kind == "increasing" else -1
    parts = [_exceeds(finding, _signed(b, sign), _signed(a, sign), sign * (b.mean - a.mean), finding.margin)
             for a, b in pairwise(sides)]
    arrow = " < " if sign > 0 else " > "
    test = arrow.join(f"{s.mean:.4g}" for s in sides) + f" (each step > {finding.margin:.4g}); steps: "
    test += "; ".join(f"{o.state} ({o.how})" for o in parts)
    return _verdict(finding, sides, combine_outcomes(parts, test), sides[-1].mean - sides[0].mean,
                    cohen_d(sides[-1], sides[0]), test)


def adjust(verdicts: list[Verdict]) -> list[Verdict]:
    """Holm–Bonferroni over the paper's tested claims (a p-value each; own observations apart): a claim keeps
    'holds' or 'does not hold' only while its adjusted p is below its α. An inconclusive claim's seeds needed are
    those that decide it at the level Holm holds it to (`holm_levels`; α / m without a p-value yet)."""
    tested = [i for i, v in enumerate(verdicts) if not v.own and v.p is not None]
    out = list(verdicts)
    p = [verdicts[i].p for i in tested]
    for i, p_adj, level in zip(tested, holm(p), holm_levels(p, 1.0)):
        v = replace(verdicts[i], p_adj=p_adj)
        if v.state in (HOLDS, FAILS) and p_adj >= v.alpha:
            v = replace(v, state=INCONCLUSIVE, test=f"{v.test}; {v.state} at raw p = {v.p:.3g}, but "
                        f"Holm-adjusted p = {p_adj:.3g} ≥ α = {v.alpha:g} over {len(tested)} claims")
        out[i] = _needed_at(v, v.alpha * level)
    untested = [i for i, v in enumerate(out) if not v.own and v.p is None and v.state == INCONCLUSIVE]
    for i in untested:  # too few seeds for a p: the family it would join, at Holm's strictest level
        out[i] = _needed_at(out[i], out[i].alpha / (len(tested) + len(untested)))
    return out


def _needed_at(v: Verdict, level: float) -> Verdict:
    return replace(v, needed=seeds_for(v.effects, level)) if v.state == INCONCLUSIVE and v.effects else v


def evaluate_findings(findings: list[Finding], rows: list[ResultRow], facts: ArtifactFacts | Path | None = None,
                      correct: bool = True) -> list[Verdict]:
    """Every finding's verdict; Holm-corrected over the study's tested claims unless `correct` is off.
    `facts` reads the artifacts some checks read: a workdir's (the rows' own paths without one), or a recorded
    run's answers (analysis/artifact_facts.py)."""
    facts = facts if isinstance(facts, ArtifactFacts) else ArtifactFacts(facts)
    verdicts = [_evaluate(f, rows, facts) for f in findings]
    return adjust(verdicts) if correct else verdicts


def _num(x: float | None) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:+.4g}" if x < 0 or x > 0 else "0"


def _p(x: float | None) -> str:
    return "—" if x is None else f"{x:.3g}"


def verdict_counts(verdicts: list[Verdict]) -> dict[str, int]:
    """How many of the paper's claims (own observations left out) end in each state."""
    return {s: sum(v.state == s and not v.own for v in verdicts) for s in STATES}


def scorecard_tables(verdicts: list[Verdict]) -> list[Table]:
    """The paper's claims, one row each (verdict, the test that decided it, its checks, raw and Holm-adjusted p,
    seeds a side needed when inconclusive, mean ± std (n) per selection, effect size), counted in the note; our
    own observations, if any, in a second table, not counted."""
    def body(vs):
        out = []
        for v in vs:
            numbers = "; ".join(f"{s.label}: " + (f"{s.mean:.4g} ± {s.std:.2g} (n={s.n})" if s.n else "no rows")
                                for s in v.sides)
            claim = f"“{v.claim}” ({v.ref})" if v.ref and not v.own else v.claim
            checks = "; ".join(map(str, v.checks)) or "—"
            needed = (str(v.needed) if v.needed else "> 10000 or no effect") if v.state == INCONCLUSIVE else "—"
            out.append([v.id, claim, v.state, v.test, checks, _p(v.p), _p(v.p_adj), needed, numbers, _num(v.effect),
                        _num(v.cohen_d)])
        return out

    header = ["finding", "paper's claim", "verdict", "test", "checks", "p", "p (Holm)", "seeds a side needed",
              "numbers", "effect", "Cohen's d"]
    note = ", ".join(f"{n} {s}" for s, n in verdict_counts(verdicts).items())
    tested = sum(v.p_adj is not None for v in verdicts)
    tables = [Table("Reproduction scorecard", header, body([v for v in verdicts if not v.own]),
                    note=f"{note} (of the paper's claims); p (Holm): Holm–Bonferroni over the {tested} claims "
                    "with a test; seeds needed: a side, to decide the observed effect with power 0.8 at the level "
                    "Holm holds the claim to")]
    own = [v for v in verdicts if v.own]
    if own:
        tables.append(Table("Our own observations (not the paper's claims; not counted)",
                            ["observation", "what we checked"] + header[2:], body(own)))
    return tables
