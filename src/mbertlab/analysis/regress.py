"""OLS of a score on chosen factors (Wu & Dredze 2020 Table 2): univariate and multivariate fits with
coefficient, p-value and 95% CI, and the likelihood-ratio test between nested models."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
from scipy import stats

from mbertlab.errors import ConfigError


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


def regression_rows(fits: list[OLSFit], full: OLSFit, study: str = "") -> list:
    """ResultRows: coef:<factor> per fit (mode univariate / multivariate), r2, and lr_test of each
    univariate model against the full one."""
    from mbertlab.store.results import ResultRow

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
            test = lr_test(fit, full)
            rows.append(ResultRow(metric="lr_test", value=test.statistic, study=study, task="regress",
                                  mode="lr", extra={"restricted": fit.factors, "full": full.factors,
                                                    "p_value": test.p_value, "df": test.df_diff}))
    return rows
