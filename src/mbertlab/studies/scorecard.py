"""Reproduction scorecard: a paper's findings as predicates over results.db rows.

A spec lists `findings:`; each has an id, the paper's wording (`claim`) and a typed predicate over
*selections* of rows (filters on ResultRow columns; any other key matches `extra`, where the report
also puts the job's tags). Kinds: greater (a > b + margin), within (|a − b| ≤ tol or k·std), increasing /
decreasing over a factor's levels, delta_within (|Δa − Δb| ≤ tol), above / below (a mean, or the mean at
every level of a factor, is above / below a constant). A finding whose rows are missing is *not run*, never a
silent pass.
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

HOLDS, FAILS, NOT_RUN = "holds", "does not hold", "not run"
Selection = dict[str, Any]
SEL_HELP = "Row filters: ResultRow columns (metric, model, task, mode, train_lang, test_lang, split, study, " \
           "seed) or any tag in `extra`; a list means 'any of'."


class _Finding(Config):
    id: str = Field(description="Short identifier, e.g. 'fake-script'.")
    claim: str = Field(description="The paper's wording of the finding.")
    ref: str = Field("", description="Where the paper states it, e.g. 'Table 1'.")
    where: Selection = Field(default_factory=dict, description="Filters shared by every selection. " + SEL_HELP)


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

    @model_validator(mode="after")
    def _levels_need_by(self):
        if self.levels is not None and self.by is None:
            raise ValueError("'levels' needs 'by'")
        return self


Finding = Annotated[Greater | Within | Monotone | DeltaWithin | Above, Field(discriminator="kind")]
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
    claim: str
    kind: str
    state: str  # HOLDS, FAILS or NOT_RUN
    sides: tuple[Side, ...]
    effect: float | None  # the difference the predicate tests (see `test`)
    cohen_d: float | None  # of the two sides compared, when each has n >= 2
    test: str  # the inequality checked, with its numbers
    ref: str = ""


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


def _tolerance(f: _Tolerance, a: Side, b: Side) -> tuple[float | None, str]:
    if f.tol is not None:
        return f.tol, f"{f.tol:.4g}"
    s = pooled_std(a, b)
    if a.n < 2 and b.n < 2:
        return None, f"{f.k:g}·std"
    return f.k * s, f"{f.k:g}·std = {f.k * s:.4g}"


def _verdict(finding: _Finding, sides, state, effect, d, test) -> Verdict:
    return Verdict(finding.id, finding.claim, finding.kind, state, sides, effect, d, test, finding.ref)


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
        sign = 1 if finding.kind == "above" else -1
        worst = min(sides, key=lambda side: sign * side.mean)
        margin = sign * (worst.mean - finding.value)
        where = f" ({'lowest' if sign > 0 else 'highest'}: {worst.label})" if len(sides) > 1 else ""
        return _verdict(finding, sides, HOLDS if margin > 0 else FAILS, worst.mean - finding.value, None,
                        f"mean = {worst.mean:.4g} {'>' if sign > 0 else '<'} {finding.value:.4g}{where}")
    if isinstance(finding, Greater):
        a, b = sides
        diff = a.mean - b.mean
        return _verdict(finding, sides, HOLDS if diff > finding.margin else FAILS, diff, cohen_d(a, b),
                        f"a − b = {diff:+.4g} > {finding.margin:.4g}")
    if isinstance(finding, Within):
        a, b = sides
        return _within(finding, sides, a.mean - b.mean, a, b, "a − b")
    if isinstance(finding, DeltaWithin):
        a1, a2, b1, b2 = sides
        da, db = a1.mean - a2.mean, b1.mean - b2.mean
        return _within(finding, sides, da - db, a1, b1, f"Δa − Δb = ({da:+.4g}) − ({db:+.4g})")
    return _monotone(finding, sides)


def _within(finding, sides, diff: float, a: Side, b: Side, what: str) -> Verdict:
    tol, text = _tolerance(finding, a, b)
    if tol is None:
        return _verdict(finding, sides, NOT_RUN, diff, None, f"the seeds' spread needs n ≥ 2 ({what} = {diff:+.4g})")
    state = HOLDS if abs(diff) <= tol else FAILS
    return _verdict(finding, sides, state, diff, cohen_d(a, b), f"|{what}| = {abs(diff):.4g} ≤ {text}")


def _monotone(finding: Monotone, sides: tuple[Side, ...]) -> Verdict:
    sign = 1 if finding.kind == "increasing" else -1
    steps = [sign * (b.mean - a.mean) for a, b in pairwise(sides)]
    state = HOLDS if all(s > finding.margin for s in steps) else FAILS
    arrow = " < " if sign > 0 else " > "
    test = arrow.join(f"{s.mean:.4g}" for s in sides) + f" (each step > {finding.margin:.4g})"
    return _verdict(finding, sides, state, sides[-1].mean - sides[0].mean, cohen_d(sides[-1], sides[0]), test)


def evaluate_findings(findings: list[Finding], rows: list[ResultRow]) -> list[Verdict]:
    return [_evaluate(f, rows) for f in findings]


def _num(x: float | None) -> str:
    return "—" if x is None or math.isnan(x) else f"{x:+.4g}" if x < 0 or x > 0 else "0"


def scorecard_table(verdicts: list[Verdict]) -> Table:
    """One row per finding: verdict, the numbers behind it (mean ± std (n) per selection), effect size."""
    body = []
    for v in verdicts:
        numbers = "; ".join(f"{s.label}: " + (f"{s.mean:.4g} ± {s.std:.2g} (n={s.n})" if s.n else "no rows")
                            for s in v.sides)
        claim = f"{v.claim} ({v.ref})" if v.ref else v.claim
        body.append([v.id, claim, v.state, v.test, numbers, _num(v.effect), _num(v.cohen_d)])
    counts = {s: sum(v.state == s for v in verdicts) for s in (HOLDS, FAILS, NOT_RUN)}
    note = ", ".join(f"{n} {s}" for s, n in counts.items())
    return Table("Reproduction scorecard", ["finding", "paper's claim", "verdict", "test", "numbers",
                                            "effect", "Cohen's d"], body, note=note)
