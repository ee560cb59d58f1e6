"""OLS of a score on chosen factors (Wu & Dredze 2020 Table 2): univariate and multivariate fits with
coefficient, p-value and 95% CI, and the likelihood-ratio test between nested models.

Two doors: `mbertlab analyze regress` over results.db rows, and the `wd2020_regress` stage
(`regress_into`), which regresses in-language task scores of transfer artifacts on the factor rows of a
`wd2020_sizes` artifact (WikiSize, training sentences per task). Both read their numbers back from
results.db, so every number in a fit was recorded by an earlier stage. Besides `regression_rows`
(coef:<factor>, r2, lr_test) the stage writes `p_value:<factor>` rows and one `alpha` row, so a finding
can say "p < α" with the scorecard's `greater` predicate.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np
from pydantic import Field, model_validator
from scipy import stats

from mbertlab.config import Config
from mbertlab.errors import ConfigError, DataError
from mbertlab.store.artifacts import final_path
from mbertlab.store.results import ResultRow, ResultsDB


class NestedTest(Config):
    """A likelihood-ratio test: does adding factors to the restricted model improve it?"""
    restricted: list[str] = Field(min_length=1)
    full: list[str] = Field(min_length=2)

    @model_validator(mode="after")
    def _nested(self):
        if not set(self.restricted) < set(self.full):
            raise ValueError(f"restricted {self.restricted} must be a proper subset of full {self.full}")
        return self


def check_fit_factors(factors: list[str], multivariate: list[str] | None, nested: list[NestedTest]) -> None:
    """The multivariate fit's and every nested test's factors must be among `factors` (a ValueError, so a
    config validator reports it under its key)."""
    unknown = sorted({*(multivariate or []), *(f for t in nested for f in t.full)} - set(factors))
    if unknown:
        raise ValueError(f"factors {unknown} of the multivariate fit or a nested test are not among {factors}")


class RegressConfig(Config):
    task: str
    metric: str = Field(description="The score regressed, e.g. f1 for NER.")
    factors: list[str] = Field(min_length=1, description="Factor rows' metrics; 'log2:NAME' takes log2.")
    multivariate: list[str] | None = Field(None, description="The factors of the multivariate fit (default: all); "
                                           "Wu & Dredze 2020 leave training vocabulary out of theirs.")
    nested: list[NestedTest] = Field(default_factory=list, description="Likelihood-ratio tests besides each "
                                     "univariate model against the multivariate one.")
    split: str = "test"
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level written beside the p-values.")

    @model_validator(mode="after")
    def _known_factors(self):
        check_fit_factors(self.factors, self.multivariate, self.nested)
        return self


@dataclass
class Coefficient:
    name: str
    coef: float
    p_value: float
    ci_low: float
    ci_high: float


@dataclass
class OLSFit:
    score: str
    factors: list[str]
    coefficients: list[Coefficient]  # intercept first (name "const")
    r2: float
    llf: float
    nobs: int
    df_model: int


@dataclass
class LRTest:
    statistic: float
    p_value: float
    df_diff: int


def _matrix(rows: Sequence[dict[str, Any]], score: str, factors: list[str]) -> tuple[np.ndarray, np.ndarray]:
    for key in [score, *factors]:
        missing = [i for i, r in enumerate(rows) if r.get(key) is None]
        if missing:
            raise ConfigError(f"row {missing[0]} has no value for {key!r}")
    y = np.array([float(r[score]) for r in rows])
    x = np.array([[1.0] + [float(r[f]) for f in factors] for r in rows])
    if len(rows) <= len(factors) + 1:
        raise ConfigError(f"{len(rows)} rows cannot fit {len(factors)} factors plus an intercept")
    return y, x


def fit_ols(rows: Sequence[dict[str, Any]], score: str, factors: list[str]) -> OLSFit:
    import statsmodels.api as sm

    y, x = _matrix(rows, score, factors)
    res = sm.OLS(y, x).fit()
    ci = res.conf_int(0.05)
    names = ["const", *factors]
    coefs = [Coefficient(n, float(res.params[i]), float(res.pvalues[i]), float(ci[i][0]), float(ci[i][1]))
             for i, n in enumerate(names)]
    return OLSFit(score, list(factors), coefs, float(res.rsquared), float(res.llf), int(res.nobs),
                  int(res.df_model))


def univariate(rows: Sequence[dict[str, Any]], score: str, factors: list[str]) -> list[OLSFit]:
    """One fit per factor, as the univariate columns of Wu & Dredze 2020 Table 2."""
    return [fit_ols(rows, score, [f]) for f in factors]


def lr_test(restricted: OLSFit, full: OLSFit) -> LRTest:
    """Likelihood-ratio test of a nested (restricted) model against the full one."""
    if not set(restricted.factors) < set(full.factors) or restricted.nobs != full.nobs:
        raise ConfigError(f"model {restricted.factors} is not nested in {full.factors}")
    stat = -2 * (restricted.llf - full.llf)
    df = full.df_model - restricted.df_model
    return LRTest(float(stat), float(stats.chi2.sf(stat, df)), df)


def _factor_value(name: str, row, lookup: dict[tuple[str, str], float]) -> float | None:
    """A factor from the row's extra, else from a row of that metric for the same test language;
    `log2:NAME` takes log2 of NAME."""
    base = name.removeprefix("log2:")
    value = row.extra.get(base, lookup.get((base, row.test_lang)))
    if value is None or base == name:
        return value
    if float(value) <= 0:
        raise ConfigError(f"{name}: log2 of non-positive value {value} (test_lang {row.test_lang!r})")
    return float(np.log2(float(value)))


def table_from_results(score_rows: list, factor_rows: list, score: str, factors: list[str]) -> list[dict[str, Any]]:
    """One dict per score row with its score and factors (factors recorded by earlier stages, not typed)."""
    lookup: dict[tuple[str, str], float] = {}
    for r in factor_rows:
        key = (r.metric, r.test_lang)
        if key in lookup and lookup[key] != r.value:
            raise ConfigError(f"two different values of {r.metric!r} for language {r.test_lang!r}")
        lookup[key] = r.value
    return [{score: r.value, **{f: _factor_value(f, r, lookup) for f in factors}} for r in score_rows]


def lr_rows(restricted: OLSFit, full: OLSFit, study: str = "") -> list:
    """The likelihood-ratio statistic (lr_test) and its p-value (lr_p_value) of `restricted` inside `full`."""
    test = lr_test(restricted, full)
    extra = {"restricted": restricted.factors, "full": full.factors, "p_value": test.p_value, "df": test.df_diff,
             "added": "+".join(f for f in full.factors if f not in restricted.factors)}
    return [ResultRow(metric="lr_test", value=test.statistic, study=study, task="regress", mode="lr", extra=extra),
            ResultRow(metric="lr_p_value", value=test.p_value, study=study, task="regress", mode="lr", extra=extra)]


def regression_rows(fits: list[OLSFit], full: OLSFit, study: str = "") -> list:
    """ResultRows: coef:<factor> per fit (mode univariate / multivariate), r2, and lr_test of each
    univariate model against the full one."""
    rows = []
    for fit in [*fits, full]:
        mode = "multivariate" if fit is full else "univariate"
        info = {"score": fit.score, "factors": fit.factors, "r2": fit.r2, "llf": fit.llf, "nobs": fit.nobs}
        rows += [ResultRow(metric=f"coef:{c.name}", value=c.coef, study=study, task="regress", mode=mode,
                           extra={**info, "p_value": c.p_value, "ci_low": c.ci_low, "ci_high": c.ci_high})
                 for c in fit.coefficients]
        rows.append(ResultRow(metric="r2", value=fit.r2, study=study, task="regress", mode=mode, extra=info))
    for fit in fits:
        if set(fit.factors) < set(full.factors):
            rows += lr_rows(fit, full, study)
    return rows


def regress_into(config: RegressConfig, sizes_dir: Path, transfer_dirs: list[Path], out: Path, results: ResultsDB,
                 study: str = "") -> None:
    """The stage's fits: in-language scores of the transfer artifacts on the sizes artifact's factor rows;
    table.json (the regressed points) and the rows."""
    found = results.query(artifact=[str(p) for p in transfer_dirs], metric=config.metric, split=config.split,
                          task=config.task)
    scores = [r for r in found if r.train_lang == r.test_lang]  # in-language: tested where it was trained
    if not scores:
        raise DataError(results.path, None, f"regression of {config.task} {config.metric}: no in-language rows")
    factor_rows = [r for r in results.query(artifact=str(sizes_dir)) if r.task in ("", config.task)]
    table = table_from_results(scores, factor_rows, config.metric, config.factors)
    fits = univariate(table, config.metric, config.factors)
    full = fit_ols(table, config.metric, config.multivariate or config.factors)
    where = str(final_path(out))
    common = {"study": study, "task": config.task, "artifact": where, "config_hash": final_path(out).name,
              "split": config.split}
    nested = [r for t in config.nested for r in lr_rows(fit_ols(table, config.metric, t.restricted),
                                                         fit_ols(table, config.metric, t.full))]
    rows = [replace(r, **common, extra={**r.extra, "regress": True}) for r in regression_rows(fits, full) + nested]
    for fit in [*fits, full]:
        mode = "multivariate" if fit is full else "univariate"
        rows += [ResultRow(metric=f"p_value:{c.name}", value=c.p_value, mode=mode, extra={"factors": fit.factors},
                           **common) for c in fit.coefficients if c.name != "const"]
    rows.append(ResultRow(metric="alpha", value=config.alpha, mode="threshold", **common))
    (out / "table.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    results.add(rows, replace_artifact=where)
