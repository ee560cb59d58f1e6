"""wd2020's own stage kinds, registered through its `Design.stage_kinds` (the engine knows only the kinds every
design shares): WikiSize and task-data sizes, the vocabulary curve, the regressions of Table 2 and the
fine-tuning of each kept pretraining checkpoint (Fig. 5). Store stages keep their names, so hashes hold."""
from __future__ import annotations

from pathlib import Path

from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import RunContext, StageKind


def build_sizes(config, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.corpus.stats import sizes_into

    corpus, data = inputs
    return ctx.store.build("wd2020_sizes", config, lambda out: sizes_into(config, corpus, data, Path(out), ctx.results,
                                                                          ctx.study), inputs)


def build_vocab_curve(config, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.analysis.vocab import vocab_curve_into

    text = inputs[1].path if len(inputs) > 1 else None  # the shards' text, for the Raw vocabulary
    return ctx.store.build("vocab_curve", config, lambda out: vocab_curve_into(
        config, inputs[0], Path(out), ctx.results, ctx.study, text), inputs)


def build_regress(config, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.analysis.regress import regress_into

    sizes, transfers = inputs[0], [t.path for t in inputs[1:]]
    return ctx.store.build("wd2020_regress", config, lambda out: regress_into(
        config, sizes.path, transfers, Path(out), ctx.results, ctx.study), inputs)


def build_checkpoint_transfer(config, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.transfer.checkpoint import run_checkpoint_transfer

    pretrain, data = inputs
    return run_checkpoint_transfer(config, ctx.store, ctx.results, pretrain, data, ctx.study)


# kind: (store stage, builder, rough relative cost for the study ETA, whether it runs a model)
STAGE_KINDS = {
    "vocab_curve": StageKind("vocab_curve", build_vocab_curve, 0.05),
    "wd2020_sizes": StageKind("wd2020_sizes", build_sizes, 0.05),
    "wd2020_regress": StageKind("wd2020_regress", build_regress, 0.05),
    "wd2020_checkpoint": StageKind("ckpt_transfer", build_checkpoint_transfer, 1.5, gpu=True),
}
