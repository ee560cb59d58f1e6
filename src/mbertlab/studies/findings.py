"""A paper's claims as typed predicates over selections of results.db rows (the spec's `findings:`).

Each has an id, the paper's sentence it tests (`quote`, with its `section`) — or `own: true` for an
observation of ours, listed apart and never counted — and a predicate over *selections* of rows. Kinds:
greater (a > b + margin), within (|a − b| ≤ tol or k·std), increasing / decreasing over a factor's levels,
delta_within (|Δa − Δb| ≤ tol), above / below (a mean, or the mean at every level of a factor, is above /
below a constant); `untested` lists a claim the study cannot test, with why. With `delta:` a predicate
compares Δ = source − target per trained model instead of the rows' values (K et al.'s "cross-lingual
ability (∆)"). `checks:` are the preconditions the verdict needs (studies/preconditions.py).
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from mbertlab.config import Config, format_validation_error
from mbertlab.errors import ConfigError
from mbertlab.studies.preconditions import Check
from mbertlab.studies.selection import SEL_HELP, Selection


class Delta(Config):
    source: Selection = Field(description="Overrides that pick the source score, e.g. {test_lang: src}.")
    target: Selection = Field(description="Overrides that pick the target score, e.g. {test_lang: tgt_fake}.")


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
    checks: list[Check] = Field(default_factory=list, description="Preconditions evaluated before the claim; "
                                "a failing one makes the verdict uninformative.")
    delta: Delta | None = Field(None, description="Compare Δ = source − target per trained model, not the values.")
    unit: Literal["row", "seed"] = Field("row", description="What one value of a side is: each selected row, or "
                                         "(seed) the mean of a side's rows within each seed, so that rows of one "
                                         "seed's models (languages, pairs, sets) are not tested as if they were "
                                         "independent samples.")
    paired: bool = Field(False, description="greater, increasing, decreasing: match each side's rows by seed, "
                         "task, language and split (those no side sets apart), e.g. two metrics of one run or two "
                         "models on the same language's test set, and test the differences: a paired t-test, "
                         "instead of two independent samples.")

    @model_validator(mode="after")
    def _paper_claims_are_quoted(self):
        if not self.own and not (self.quote.strip() and self.section.strip()):
            raise ValueError("a paper's claim needs its 'quote' (the paper's sentence) and 'section'; "
                             "mark our own observations 'own: true'")
        if self.own and not (self.claim.strip() or self.quote.strip()):
            raise ValueError("an own observation needs a 'claim'")
        if self.paired and getattr(self, "kind", None) not in ("greater", "increasing", "decreasing"):
            raise ValueError("'paired' is for greater, increasing and decreasing findings")
        return self


class _ByLevels(Config):
    @model_validator(mode="after")
    def _levels_need_by(self):
        if getattr(self, "levels", None) is not None and getattr(self, "by", None) is None:
            raise ValueError("'levels' needs 'by'")
        return self


class _Tolerance(Config):
    tol: float | None = Field(None, ge=0, description="Absolute tolerance, in the metric's units (0.03 = 3 points).")
    k: float | None = Field(None, gt=0, description="Tolerance as k times the seeds' pooled standard deviation.")

    @model_validator(mode="after")
    def _one_tolerance(self):
        if (self.tol is None) == (self.k is None):
            raise ValueError("give exactly one of 'tol' (absolute) and 'k' (times the seeds' std)")
        return self


class Greater(_Finding, _ByLevels):
    kind: Literal["greater"]
    a: Selection = Field(description="Rows whose mean should be larger. " + SEL_HELP)
    b: Selection = Field(description="Rows whose mean should be smaller. " + SEL_HELP)
    margin: float = Field(0.0, description="mean(a) − mean(b) must exceed this.")
    by: str | None = Field(None, description="Optionally a factor (column or tag, e.g. 'layer'): then a must "
                           "exceed b at every level ('in all layers').")
    levels: list[Any] | None = Field(None, min_length=1, description="The levels of `by` (default: every level "
                                     "found in a's rows).")


class Within(_Finding, _Tolerance, _ByLevels):
    kind: Literal["within"]
    a: Selection
    b: Selection
    by: str | None = Field(None, description="Optionally a factor: then a at every level within the tolerance "
                           "of b (at the same level, unless b sets the factor itself), each level tested apart, "
                           "e.g. six architectures each 'comparable' to the base, not pooled as if seeds.")
    levels: list[Any] | None = Field(None, min_length=1, description="The levels of `by` (default: every level "
                                     "found in a's rows).")


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


class Above(_Finding, _ByLevels):
    kind: Literal["above", "below"]
    select: Selection = Field(default_factory=dict, description="The rows compared with `value`. " + SEL_HELP)
    value: float = Field(description="Their mean must exceed this (above; e.g. 0 for 'r > 0') or stay under "
                         "it (below; e.g. 0.05 for 'p < 0.05').")
    by: str | None = Field(None, description="Optionally a factor (column or tag, e.g. 'layer'): then the mean "
                           "at every level must pass ('at every layer').")
    levels: list[Any] | None = Field(None, min_length=1, description="The levels of `by` (default: every "
                                     "level found in the rows).")
    test: Literal["welch", "direct", "fit"] = Field("welch", description="welch: a one-sample t-test over the "
                                                    "seeds; direct: the mean itself decides, for numbers that are "
                                                    "already a statistic over languages (a correlation, a p-value); "
                                                    "fit: a fitted slope (value 0) decided by its fit's own two-sided "
                                                    "p-value (the row's `p_value`), halved in the claimed direction.")
    before: Selection | None = Field(None, description="test: fit only: overrides that pick the fit whose slope "
                                     "must have the opposite sign (a sign *change*: both slopes significant, e.g. "
                                     "{mode: univariate}).")

    @model_validator(mode="after")
    def _fit_tests_a_sign(self):
        if self.test == "fit" and self.value != 0:
            raise ValueError("test: fit decides the sign of a slope: its value must be 0")
        if self.before is not None and self.test != "fit":
            raise ValueError("'before' is for test: fit (a sign change)")
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
