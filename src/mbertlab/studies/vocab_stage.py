"""Stage kind `vocab_curve` (Wu & Dredze 2020 Fig. 3): token coverage by vocabulary rank for every
language of a shards artifact (analysis/vocab.py)."""
from __future__ import annotations

from pathlib import Path

from mbertlab.analysis.vocab import VocabCurveConfig, vocab_curve_into
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import RunContext


def _build(config: VocabCurveConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("vocab_curve", config, lambda out: vocab_curve_into(
        config, inputs[0], Path(out), ctx.results, ctx.study), inputs)
