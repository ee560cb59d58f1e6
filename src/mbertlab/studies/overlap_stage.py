"""Stage kinds for Wu & Dredze 2019 §5.4: subword overlap between the source and each target under an
encoder's own tokenizer (`overlap`, analysis/overlap.py), and its Pearson correlation with zero-shot scores
(`correlate`, analysis/correlate.py)."""
from __future__ import annotations

from pathlib import Path

from mbertlab.analysis.correlate import CorrelateConfig, correlate_into
from mbertlab.analysis.overlap import OverlapConfig, overlap_into
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import Job, RunContext


# ---- jobs -------------------------------------------------------------------------------------

def overlap_job(encoder: Job, text: Job, source: str, targets: list[str], sentences: int, text_files: str,
                tags=()) -> Job:
    config = OverlapConfig(source=source, targets=targets, sentences=sentences, text_files=text_files)
    return Job("overlap", config, (encoder, text), label=f"overlap {source} -> {'+'.join(targets)}", tags=tuple(tags))


def correlate_job(overlap: Job, transfers: list[Job], seed: int, tags=()) -> Job:
    """Transfers are fine-tuned on the overlap's source and score its targets; one per task."""
    from mbertlab.transfer.config import MAIN_METRIC

    tasks = [t.config.task for t in transfers]
    if len(set(tasks)) != len(tasks):
        raise ConfigError(f"correlate: one transfer job per task, got tasks {tasks}")
    config = CorrelateConfig(metrics={t: MAIN_METRIC[t] for t in tasks}, seed=seed)
    return Job("correlate", config, (overlap, *transfers), label=f"correlate overlap seed {seed}", tags=tuple(tags))


# ---- builders ---------------------------------------------------------------------------------

def _build_overlap(config: OverlapConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    encoder, text = inputs
    return ctx.store.build("overlap", config, lambda out: overlap_into(
        config, encoder, text.path, Path(out), ctx.results, ctx.study), inputs)


def _build_correlate(config: CorrelateConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    overlap, transfers = inputs[0], [t.path for t in inputs[1:]]
    return ctx.store.build("correlate", config, lambda out: correlate_into(
        config, overlap.path, transfers, Path(out), ctx.results, ctx.study), inputs)
