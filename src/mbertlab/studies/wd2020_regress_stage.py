"""Stage kind `wd2020_regress`: Wu & Dredze 2020 Table 2 — OLS of in-language task scores on resource
factors, univariate per factor and multivariate, with p-values.

Inputs: the `wd2020_sizes` artifact (factor rows: WikiSize, training sentences per task) and the transfer
artifacts whose in-language test scores are regressed; both are read back from results.db, so every
number in the fit was recorded by an earlier stage. Besides `regression_rows` (coef:<factor>, r2, lr_test)
it writes `p_value:<factor>` rows and one `alpha` row, so a finding can say "p < α" with the scorecard's
`greater` predicate.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow
from mbertlab.studies.jobs import RunContext


class RegressConfig(Config):
    task: str
    metric: str = Field(description="The score regressed, e.g. f1 for NER.")
    factors: list[str] = Field(min_length=1, description="Factor rows' metrics; 'log2:NAME' takes log2.")
    split: str = "test"
    alpha: float = Field(0.05, gt=0, lt=1, description="Significance level written beside the p-values.")


def score_rows(config: RegressConfig, transfers: list[Artifact], ctx: RunContext) -> list[ResultRow]:
    """In-language scores: the task's metric where the test language is the training language."""
    rows = ctx.results.query(artifact=[str(a.path) for a in transfers], metric=config.metric, split=config.split,
                             task=config.task)
    return [r for r in rows if r.train_lang == r.test_lang]


def factor_rows(config: RegressConfig, sizes: Artifact, ctx: RunContext) -> list[ResultRow]:
    """Language-level rows (task '') and this task's rows (training sentences)."""
    return [r for r in ctx.results.query(artifact=str(sizes.path)) if r.task in ("", config.task)]


def regress_into(config: RegressConfig, sizes: Artifact, transfers: list[Artifact], out: Path,
                 ctx: RunContext) -> None:
    from mbertlab.analysis.regress import fit_ols, regression_rows, table_from_results, univariate

    scores = score_rows(config, transfers, ctx)
    if not scores:
        raise DataError(ctx.results.path, None, f"regression of {config.task} {config.metric}: no in-language rows")
    table = table_from_results(scores, factor_rows(config, sizes, ctx), config.metric, config.factors)
    fits, full = univariate(table, config.metric, config.factors), fit_ols(table, config.metric, config.factors)
    where = str(final_path(out))
    common = {"study": ctx.study, "task": config.task, "artifact": where, "config_hash": final_path(out).name,
              "split": config.split}
    rows = [replace(r, **common, extra={**r.extra, "regress": True}) for r in regression_rows(fits, full)]
    for fit in [*fits, full]:
        mode = "multivariate" if fit is full else "univariate"
        rows += [ResultRow(metric=f"p_value:{c.name}", value=c.p_value, mode=mode, extra={"factors": fit.factors},
                           **common) for c in fit.coefficients if c.name != "const"]
    rows.append(ResultRow(metric="alpha", value=config.alpha, mode="threshold", **common))
    (out / "table.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    ctx.results.add(rows, replace_artifact=where)


def _build(config: RegressConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    sizes, transfers = inputs[0], list(inputs[1:])
    return ctx.store.build("wd2020_regress", config,
                           lambda out: regress_into(config, sizes, transfers, Path(out), ctx), inputs)

