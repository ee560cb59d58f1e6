from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from mbertlab.analysis.regress import fit_ols, lr_test, univariate
from mbertlab.errors import ConfigError


def _rows(n=200, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=n), rng.normal(size=n)
    y = 1.5 + 2.0 * a - 0.7 * b + rng.normal(scale=0.3, size=n)
    return [{"a": float(ai), "b": float(bi), "y": float(yi)} for ai, bi, yi in zip(a, b, y)], a, b, y


def test_recovers_known_coefficients_within_ci():
    rows, *_ = _rows()
    fit = fit_ols(rows, "y", ["a", "b"])
    for c, true in zip(fit.coefficients, [1.5, 2.0, -0.7]):
        assert c.ci_low <= true <= c.ci_high
        assert c.p_value < 1e-6
    assert fit.r2 > 0.9 and fit.nobs == 200


def test_lr_test_equals_statsmodels():
    rows, a, b, y = _rows(60, seed=3)
    full = fit_ols(rows, "y", ["a", "b"])
    small = univariate(rows, "y", ["a", "b"])[0]
    ref_full = sm.OLS(y, sm.add_constant(np.column_stack([a, b]))).fit()
    ref_small = sm.OLS(y, sm.add_constant(a)).fit()
    stat, p, df = ref_full.compare_lr_test(ref_small)
    got = lr_test(small, full)
    assert got.statistic == pytest.approx(stat) and got.p_value == pytest.approx(p) and got.df_diff == df
    assert full.llf == pytest.approx(ref_full.llf) and small.r2 == pytest.approx(ref_small.rsquared)


def test_not_nested_and_missing_values_raise():
    rows, *_ = _rows(20)
    with pytest.raises(ConfigError):
        lr_test(fit_ols(rows, "y", ["a"]), fit_ols(rows, "y", ["b"]))
    with pytest.raises(ConfigError):
        fit_ols(rows + [{"a": 1.0, "y": 2.0}], "y", ["a", "b"])


def test_table_from_results_takes_factors_from_extra_and_language_rows():
    from mbertlab.analysis.regress import table_from_results
    from mbertlab.store.results import ResultRow

    scores = [ResultRow("f1", 0.5, test_lang="de", extra={"train_size": 1024}),
              ResultRow("f1", 0.7, test_lang="fr", extra={"train_size": 8})]
    wiki = [ResultRow("wiki_size", 3.0, test_lang="de"), ResultRow("wiki_size", 4.0, test_lang="fr")]
    got = table_from_results(scores, wiki, "f1", ["log2:train_size", "wiki_size"])
    assert got == [{"f1": 0.5, "log2:train_size": 10.0, "wiki_size": 3.0},
                   {"f1": 0.7, "log2:train_size": 3.0, "wiki_size": 4.0}]
    with pytest.raises(ConfigError):
        table_from_results(scores, wiki + [ResultRow("wiki_size", 5.0, test_lang="de")], "f1", ["wiki_size"])


def test_nested_tests_equal_statsmodels_and_name_known_factors():
    from mbertlab.analysis.regress import RegressConfig, lr_rows

    rows, a, b, y = _rows(60, seed=5)
    stat, p, df = sm.OLS(y, sm.add_constant(np.column_stack([a, b]))).fit().compare_lr_test(
        sm.OLS(y, sm.add_constant(a)).fit())
    got = {r.metric: r for r in lr_rows(fit_ols(rows, "y", ["a"]), fit_ols(rows, "y", ["a", "b"]))}
    assert got["lr_test"].value == pytest.approx(stat) and got["lr_p_value"].value == pytest.approx(p)
    assert got["lr_p_value"].extra["added"] == "b" and got["lr_test"].extra["df"] == df
    config = RegressConfig(task="ner", metric="f1", factors=["a", "b", "c"], multivariate=["a", "b"],
                           nested=[{"restricted": ["a"], "full": ["a", "c"]}])
    assert config.nested[0].full == ["a", "c"]
    with pytest.raises(ValueError, match="not among"):
        RegressConfig(task="ner", metric="f1", factors=["a"], nested=[{"restricted": ["a"], "full": ["a", "z"]}])
    with pytest.raises(ValueError, match="proper subset"):
        RegressConfig(task="ner", metric="f1", factors=["a", "b", "c"],
                      nested=[{"restricted": ["b"], "full": ["a", "c"]}])
    # left at their defaults they stay out of the hash, so older regression artifacts keep theirs
    assert RegressConfig(task="ner", metric="f1", factors=["a"]).model_dump() == \
        {"task": "ner", "metric": "f1", "factors": ["a"], "split": "test", "alpha": 0.05}
