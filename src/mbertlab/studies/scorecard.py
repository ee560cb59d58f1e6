"""Reproduction scorecard: a paper's claims as predicates over results.db rows.

A spec lists `findings:`; each has an id, the paper's sentence it tests (`quote`, with its `section`) — or
`own: true` for an observation of ours, listed apart and never counted — and a typed predicate over
*selections* of rows (filters on ResultRow columns; any other key matches `extra`, where the report
also puts the job's tags). Kinds: greater (a > b + margin), within (|a − b| ≤ tol or k·std), increasing /
decreasing over a factor's levels, delta_within (|Δa − Δb| ≤ tol), above / below (a mean, or the mean at
every level of a factor, is above / below a constant); `untested` lists a claim the study cannot test, with
why. The seeds decide (studies/significance.py): holds,
does not hold, or inconclusive when their spread cannot separate the effect. A finding whose rows are missing
is *not run*, never a silent pass.
"""
from __future__ import annotations

import math
from itertools import pairwise
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from mbertlab.config import Config, format_validation_error
from mbertlab.errors import ConfigError
from mbertlab.report.tables import Table
from mbertlab.store.results import COLUMNS, ResultRow
from mbertlab.studies.significance import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    STATES,
    combine,
    combined,
    equivalent,
    exceeds,
    too_few,
    welch,
)

Selection = dict[str, Any]
SEL_HELP = "Row filters: ResultRow columns (metric, model, task, mode, train_lang, test_lang, split, study, " \
           "seed) or any tag in `extra`; a list means 'any of'."


class _Finding(Config):
    id: str = Field(description="Short identifier, e.g. 'fake-script'.")
    quote: str = Field("", description="The paper's own sentence that states the claim, verbatim.")
    section: str = Field("", description="Where the paper says it, e.g. 'Abstract', '§4.2', 'Conclusion'.")
    claim: str = Field("", description="Optionally, our short restatement of what is tested.")
    ref: str = Field("", description="The table or figure behind it, e.g. 'Table 1'.")
    own: bool = Field(False, description="Our own observation, not the paper's claim: listed apart, never "
                      "counted as reproduction.")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="Significance level of the test that decides it.")
    where: Selection = Field(default_factory=dict, description="Filters shared by every selection. " + SEL_HELP)

    @model_validator(mode="after")
    def _paper_claims_are_quoted(self):
        if not self.own and not (self.quote.strip() and self.section.strip()):
            raise ValueError("a paper's claim needs its 'quote' (the paper's sentence) and 'section'; "
                             "mark our own observations 'own: true'")
        if self.own and not (self.claim.strip() or self.quote.strip()):
            raise ValueError("an own observation needs a 'claim'")
        return self


class _Tolerance(Config):
    tol: float | None = Field(None, ge=0, description="Absolute tolerance, in the metric's units (0.03 = 3 points).")
    k: float | None = Field(None, gt=0, description="Tolerance as k times the seeds' pooled standard deviation.")

    @model_validator(mode="after")
    def _one_tolerance(self):
        if (self.tol is None) == (self.k is None):
            raise ValueError("give exactly one of 'tol' (absolute) and 'k' (times the seeds' std)")
        return self


class Greater(_Finding):
    kind: Literal["greater"]
    a: Selection = Field(description="Rows whose mean should be larger. " + SEL_HELP)
    b: Selection = Field(description="Rows whose mean should be smaller. " + SEL_HELP)
    margin: float = Field(0.0, description="mean(a) − mean(b) must exceed this.")


class Within(_Finding, _Tolerance):
    kind: Literal["within"]
    a: Selection
    b: Selection


class Monotone(_Finding):
    kind: Literal["increasing", "decreasing"]
    by: str = Field(description="The factor, a column or tag, e.g. 'permutation'.")
    levels: list[Any] = Field(min_length=2, description="Its values in order, e.g. [0, 0.25, 0.5, 1].")
    select: Selection = Field(default_factory=dict, description="Filters for every level. " + SEL_HELP)
    margin: float = Field(0.0, description="Each step must move by more than this.")


class DeltaWithin(_Finding, _Tolerance):
    kind: Literal["delta_within"]
    a1: Selection
    a2: Selection
    b1: Selection
    b2: Selection


class Above(_Finding):
    kind: Literal["above", "below"]
    select: Selection = Field(default_factory=dict, description="The rows compared with `value`. " + SEL_HELP)
    value: float = Field(description="Their mean must exceed this (above; e.g. 0 for 'r > 0') or stay under "
                         "it (below; e.g. 0.05 for 'p < 0.05').")
    by: str | None = Field(None, description="Optionally a factor (column or tag, e.g. 'layer'): then the mean "
                           "at every level must pass ('at every layer').")
    levels: list[Any] | None = Field(None, min_length=1, description="The levels of `by` (default: every "
                                     "level found in the rows).")
    test: Literal["welch", "direct"] = Field("welch", description="welch: a one-sample t-test over the seeds; "
                                             "direct: the mean itself decides, for numbers that are already a "
                                             "statistic over languages (a correlation, a p-value).")

    @model_validator(mode="after")
    def _levels_need_by(self):
        if self.levels is not None and self.by is None:
            raise ValueError("'levels' needs 'by'")
        return self


class Untested(_Finding):
    kind: Literal["untested"]
    why: str = Field(min_length=1, description="Why the study cannot test this claim (what it would need).")


Finding = Annotated[Greater | Within | Monotone | DeltaWithin | Above | Untested, Field(discriminator="kind")]
_FINDINGS = TypeAdapter(list[Finding])


def parse_findings(data: Any, source: str) -> list[Finding]:
    """Validate a spec's `findings:` list; every problem is one line of the ConfigError."""
    try:
        findings = _FINDINGS.validate_python(data or [])
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, f"{source}: findings")) from None
    seen = [f.id for f in findings]
    dupes = sorted({i for i in seen if seen.count(i) > 1})
    if dupes:
        raise ConfigError(f"{source}: findings: duplicate id(s) {', '.join(dupes)}")
    return findings


@dataclass(frozen=True)
class Side:
    label: str
    values: tuple[float, ...]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def mean(self) -> float:
        return sum(self.values) / self.n if self.values else math.nan

    @property
    def std(self) -> float:
        """Sample standard deviation (n − 1); 0 for one value."""
        if self.n < 2:
            return 0.0
        m = self.mean
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / (self.n - 1))


@dataclass(frozen=True)
class Verdict:
    id: str
    claim: str  # the paper's sentence (quote), or our restatement for an own observation
    kind: str
    state: str  # HOLDS, FAILS, INCONCLUSIVE or NOT_RUN
    sides: tuple[Side, ...]
    effect: float | None  # the difference the predicate tests (see `test`)
    cohen_d: float | None  # of the two sides compared, when each has n >= 2
    test: str  # the comparison made, with its numbers, and the test that decided it
    ref: str = ""  # section, and table or figure
    own: bool = False


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, (list, tuple)):
        return any(_matches(value, w) for w in wanted)
    return value == wanted or str(value) == str(wanted)


def select(rows: list[ResultRow], selection: Selection) -> tuple[float, ...]:
    """Values of the rows matching every filter (columns first, then `extra`)."""
    out = []
    for row in rows:
        ok = all(_matches(getattr(row, k) if k in COLUMNS else row.extra.get(k), v) for k, v in selection.items())
        if ok:
            out.append(row.value)
    return tuple(out)


def pooled_std(a: Side, b: Side) -> float:
    if a.n + b.n <= 2:
        return 0.0
    return math.sqrt(((a.n - 1) * a.std ** 2 + (b.n - 1) * b.std ** 2) / (a.n + b.n - 2))


def cohen_d(a: Side, b: Side) -> float | None:
    """(mean a − mean b) / pooled std; None below two values a side or with no spread at all."""
    s = pooled_std(a, b)
    if a.n < 2 or b.n < 2 or s == 0:
        return None
    return (a.mean - b.mean) / s


def _label(selection: Selection) -> str:
    return ", ".join(f"{k}={v}" for k, v in selection.items()) or "all rows"


def _sides(finding: _Finding, rows: list[ResultRow], selections: list[Selection]) -> tuple[Side, ...]:
    return tuple(Side(_label(s), select(rows, {**finding.where, **s})) for s in selections)


def _tolerance(f: _Tolerance, a: Side, b: Side) -> tuple[float, str]:
    if f.tol is not None:
        return f.tol, f"{f.tol:.4g}"
    s = pooled_std(a, b)
    return f.k * s, f"{f.k:g}·std = {f.k * s:.4g}"


def _verdict(finding: _Finding, sides, state, effect, d, test) -> Verdict:
    ref = "; ".join(x for x in (finding.section, finding.ref) if x)
    claim = finding.quote if finding.quote and not finding.own else finding.claim or finding.quote
    return Verdict(finding.id, claim, finding.kind, state, sides, effect, d, test, ref, finding.own)


def _levels(finding: Above, rows: list[ResultRow]) -> list[Any]:
    """The levels of `finding.by` among the rows the finding selects, in a stable order."""
    if finding.levels is not None:
        return finding.levels
    found = []
    for row in rows:
        if select([row], {**finding.where, **finding.select}):
            level = getattr(row, finding.by) if finding.by in COLUMNS else row.extra.get(finding.by)
            if level is not None and level not in found:
                found.append(level)
    return sorted(found, key=lambda v: (isinstance(v, str), v)) or [None]


def _evaluate(finding: Finding, rows: list[ResultRow]) -> Verdict:
    if isinstance(finding, Untested):
        return _verdict(finding, (), NOT_RUN, None, None, f"not tested: {finding.why}")
    if isinstance(finding, Above):
        sels = ([finding.select] if finding.by is None
                else [{**finding.select, finding.by: level} for level in _levels(finding, rows)])
    elif isinstance(finding, Monotone):
        sels = [{**finding.select, finding.by: level} for level in finding.levels]
    elif isinstance(finding, DeltaWithin):
        sels = [finding.a1, finding.a2, finding.b1, finding.b2]
    else:
        sels = [finding.a, finding.b]
    sides = _sides(finding, rows, sels)
    empty = [s.label for s in sides if s.n == 0]
    if empty:
        return _verdict(finding, sides, NOT_RUN, None, None, "no rows for " + "; ".join(empty))
    if isinstance(finding, Above):
        return _above(finding, sides)
    if isinstance(finding, Greater):
        a, b = sides
        diff = a.mean - b.mean
        state, how = _exceeds(finding, a.values, b.values, diff, finding.margin)
        test = f"a − b = {diff:+.4g} > {finding.margin:.4g}; {how}"
        return _verdict(finding, sides, state, diff, cohen_d(a, b), test)
    if isinstance(finding, Within):
        a, b = sides
        return _within(finding, sides, a.mean - b.mean, (a, b), "a − b")
    if isinstance(finding, DeltaWithin):
        a1, a2, b1, b2 = sides
        da, db = a1.mean - a2.mean, b1.mean - b2.mean
        return _within(finding, sides, da - db, sides, f"Δa − Δb = ({da:+.4g}) − ({db:+.4g})")
    return _monotone(finding, sides)


def _exceeds(finding: _Finding, a: tuple[float, ...], b: tuple[float, ...], diff: float,
             margin: float) -> tuple[str, str]:
    """Is mean(a) − mean(b) (or mean(a) alone, b empty) above `margin`, beyond the seeds' spread?"""
    short = too_few(a, b) if b else too_few(a)
    if short:
        return INCONCLUSIVE, short
    return exceeds(diff, *welch(a, b), margin, finding.alpha)


def _above(finding: Above, sides: tuple[Side, ...]) -> Verdict:
    sign = 1 if finding.kind == "above" else -1
    worst = min(sides, key=lambda side: sign * side.mean)
    where = f" ({'lowest' if sign > 0 else 'highest'}: {worst.label})" if len(sides) > 1 else ""
    test = f"mean = {worst.mean:.4g} {'>' if sign > 0 else '<'} {finding.value:.4g}{where}"
    if finding.test == "direct":
        state = HOLDS if sign * (worst.mean - finding.value) > 0 else FAILS
        return _verdict(finding, sides, state, worst.mean - finding.value, None, test + "; direct (no seed test)")
    signed = [tuple(sign * v for v in side.values) for side in sides]
    parts = [_exceeds(finding, vals, (), sign * side.mean, sign * finding.value) for vals, side in zip(signed, sides)]
    hows = "; ".join(f"{side.label}: {how}" for side, (_, how) in zip(sides, parts)) if len(sides) > 1 else parts[0][1]
    return _verdict(finding, sides, combine([st for st, _ in parts]), worst.mean - finding.value, None,
                    f"{test}; {hows}")


def _within(finding, sides: tuple[Side, ...], diff: float, groups: tuple[Side, ...], what: str) -> Verdict:
    tol, text = _tolerance(finding, groups[0], groups[-1] if len(groups) == 2 else groups[2])
    test = f"|{what}| = {abs(diff):.4g} ≤ {text}"
    short = too_few(*(g.values for g in groups))
    if short:
        return _verdict(finding, sides, INCONCLUSIVE, diff, None, f"{test}; {short}")
    se, df = combined([g.values for g in groups])
    state, how = equivalent(diff, se, df, tol, finding.alpha)
    d = cohen_d(groups[0], groups[1]) if len(groups) == 2 else None
    return _verdict(finding, sides, state, diff, d, f"{test}; {how}")


def _monotone(finding: Monotone, sides: tuple[Side, ...]) -> Verdict:
    sign = 1 if finding.kind == "increasing" else -1
    parts = [_exceeds(finding, tuple(sign * v for v in b.values), tuple(sign * v for v in a.values),
                      sign * (b.mean - a.mean), finding.margin) for a, b in pairwise(sides)]
    arrow = " < " if sign > 0 else " > "
    test = arrow.join(f"{s.mean:.4g}" for s in sides) + f" (each step > {finding.margin:.4g}); steps: "
    test += "; ".join(f"{state} ({how})" for state, how in parts)
    return _verdict(finding, sides, combine([st for st, _ in parts]), sides[-1].mean - sides[0].mean,
                    cohen_d(sides[-1], sides[0]), test)


def evaluate_findings(findings: list[Finding], rows: list[ResultRow]) -> list[Verdict]:
    return [_evaluate(f, rows) for f in findings]


def _num(x: float | None) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:+.4g}" if x < 0 or x > 0 else "0"


def verdict_counts(verdicts: list[Verdict]) -> dict[str, int]:
    """How many of the paper's claims (own observations left out) end in each state."""
    return {s: sum(v.state == s and not v.own for v in verdicts) for s in STATES}


def scorecard_tables(verdicts: list[Verdict]) -> list[Table]:
    """The paper's claims, one row each (verdict, the test that decided it, mean ± std (n) per selection,
    effect size), counted in the note; our own observations, if any, in a second table, not counted."""
    def body(vs):
        out = []
        for v in vs:
            numbers = "; ".join(f"{s.label}: " + (f"{s.mean:.4g} ± {s.std:.2g} (n={s.n})" if s.n else "no rows")
                                for s in v.sides)
            claim = f"“{v.claim}” ({v.ref})" if v.ref and not v.own else v.claim
            out.append([v.id, claim, v.state, v.test, numbers, _num(v.effect), _num(v.cohen_d)])
        return out

    header = ["finding", "paper's claim", "verdict", "test", "numbers", "effect", "Cohen's d"]
    note = ", ".join(f"{n} {s}" for s, n in verdict_counts(verdicts).items())
    tables = [Table("Reproduction scorecard", header, body([v for v in verdicts if not v.own]),
                    note=f"{note} (of the paper's claims)")]
    own = [v for v in verdicts if v.own]
    if own:
        tables.append(Table("Our own observations (not the paper's claims; not counted)",
                            ["observation", "what we checked"] + header[2:], body(own)))
    return tables
