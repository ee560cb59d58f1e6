"""The scorecard's records: a side of a finding (its selected values) and a claim's verdict, with the effect
sizes both are read with (pooled standard deviation, Cohen's d)."""
from __future__ import annotations

import math
from dataclasses import dataclass

from mbertlab.studies.preconditions import CheckResult


@dataclass(frozen=True)
class Side:
    label: str
    values: tuple[float, ...]
    runs: tuple[tuple, ...] = ()  # what matches each value with the other sides' in a paired finding

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
    state: str  # HOLDS, FAILS, INCONCLUSIVE, UNINFORMATIVE or NOT_RUN
    sides: tuple[Side, ...]
    effect: float | None  # the difference the predicate tests (see `test`)
    cohen_d: float | None  # of the two sides compared, when each has n >= 2
    test: str  # the comparison made, with its numbers, and the test that decided it
    ref: str = ""  # section, and table or figure
    own: bool = False
    checks: tuple[CheckResult, ...] = ()
    p: float | None = None  # the raw p of the decision (None: no test, e.g. too few seeds)
    p_adj: float | None = None  # Holm-adjusted over the study's tested claims
    needed: int | None = None  # seeds a side that would decide it (shown for inconclusive ones)
    alpha: float = 0.05
    effects: tuple[tuple[float, bool], ...] = ()  # standardized effects of its undecided parts (seeds needed)


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
