"""Stage kind `wd2020_regress`: Wu & Dredze 2020 Table 2, OLS of in-language task scores on resource
factors (analysis/regress.py). Inputs: the `wd2020_sizes` artifact, then the transfer artifacts."""
from __future__ import annotations

from pathlib import Path

from mbertlab.analysis.regress import RegressConfig, regress_into
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import RunContext


def _build(config: RegressConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    sizes, transfers = inputs[0], [t.path for t in inputs[1:]]
    return ctx.store.build("wd2020_regress", config, lambda out: regress_into(
        config, sizes.path, transfers, Path(out), ctx.results, ctx.study), inputs)
