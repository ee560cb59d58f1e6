"""The one table of stage kinds: which builder makes each kind of job, into which store stage.

A design's own kinds (wd2020's, a user's) come through `Design.stage_kinds`; `get_design` passes them to
`add_stage_kinds`. `job_hash` predicts every artifact's directory without building anything.
"""
from __future__ import annotations

import difflib
from pathlib import Path
from typing import Mapping

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.studies import builders
from mbertlab.studies.jobs import Job, StageKind

# kind: (store stage, builder, rough relative cost for the study ETA, whether it runs a model and whether it
# splits over torchrun ranks). `student` does not: its builder would take the store's lock on every rank.
BUILTIN_STAGE_KINDS: dict[str, StageKind] = {
    "generate": StageKind("generate", builders.build_generate, 1),
    "corpus": StageKind("corpus", builders.build_corpus, 1),
    "taskdata": StageKind("taskdata", builders.build_taskdata, 0.5),
    "tokenizer": StageKind("tokenizer", builders.build_tokenizer, 0.2),
    "shards": StageKind("shards", builders.build_shards, 0.2),
    "pretrain": StageKind("pretrain", builders.build_pretrain, 20, gpu=True, ranks=True),
    "transfer": StageKind("transfer", builders.build_transfer, 1.5, gpu=True),
    "retrieval": StageKind("retrieval", builders.build_retrieval, 0.5, gpu=True),
    "langid": StageKind("langid", builders.build_langid, 0.3, gpu=True),
    "budget": StageKind("budget", builders.build_budget, 0.2),
    "student": StageKind("pretrain", builders.build_student, 30, gpu=True),
    "balance": StageKind("balance", builders.build_balance, 1, gpu=True),
    "hf_encoder": StageKind("hf_encoder", builders.build_hf_encoder, 0.01),
    "task_files": StageKind("task_files", builders.build_task_files, 0.01),
    "overlap": StageKind("overlap", builders.build_overlap, 0.2),
    "correlate": StageKind("correlate", builders.build_correlate, 0.05),
    "word_order": StageKind("word_order", builders.build_word_order, 0.05),
    "static": StageKind("static", builders.build_static, 1.0),
    "word_retrieval": StageKind("word_retrieval", builders.build_word_retrieval, 0.5, gpu=True),
}
_USER_STAGE_KINDS: dict[str, StageKind] = {}


def add_stage_kinds(kinds: Mapping[str, StageKind]) -> None:
    """A design's own kinds; a built-in kind cannot be redefined."""
    for name, kind in kinds.items():
        if BUILTIN_STAGE_KINDS.get(name, kind) != kind or _USER_STAGE_KINDS.get(name, kind) != kind:
            raise ConfigError(f"stage kind {name!r} is already defined differently")
        _USER_STAGE_KINDS[name] = kind


def stage_kind(name: str) -> StageKind:
    kind = BUILTIN_STAGE_KINDS.get(name) or _USER_STAGE_KINDS.get(name)
    if kind is None:
        known = [*BUILTIN_STAGE_KINDS, *_USER_STAGE_KINDS]
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown stage kind {name!r}{hint} (known: {', '.join(sorted(known))})")
    return kind


def known_stage_kinds() -> list[str]:
    return sorted([*BUILTIN_STAGE_KINDS, *_USER_STAGE_KINDS])


def job_hash(job: Job, store: ArtifactStore, memo: dict[Job, str] | None = None) -> str:
    """The artifact hash a job will have, computed without building anything."""
    memo = {} if memo is None else memo
    if job not in memo:
        inputs = [Artifact(i.kind, job_hash(i, store, memo), Path()) for i in job.inputs]
        memo[job] = store.hash_for(stage_kind(job.kind).stage, job.config, inputs)
    return memo[job]
