"""Run a study: expand its spec into jobs, build what is missing, keep going after a kill.

Every job goes through the artifact store, so a rerun reuses what is complete and resumes what
was interrupted (pretraining continues from its last checkpoint).
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from mbertlab.progress import progress
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.studies.jobs import STAGE_KINDS, Job, RunContext, job_hash, topological
from mbertlab.studies.spec import StudySpec

log = logging.getLogger("mbertlab")


@dataclass
class JobStatus:
    job: Job
    stage: str
    hash: str
    state: str  # "done", "partial" (interrupted build), "missing"


def study_jobs(spec: StudySpec) -> list[Job]:
    from mbertlab.studies.designs import DESIGNS

    return topological(DESIGNS.get(spec.design).plan(spec))


def study_status(spec: StudySpec, store: ArtifactStore) -> list[JobStatus]:
    memo: dict[Job, str] = {}
    out = []
    for job in study_jobs(spec):
        stage = STAGE_KINDS.get(job.kind).stage
        hash_ = job_hash(job, store, memo)
        if store.find(stage, hash_) is not None:
            state = "done"
        elif (store.workdir / stage / f".partial-{hash_}").exists():
            state = "partial"
        else:
            state = "missing"
        out.append(JobStatus(job, stage, hash_, state))
    return out


def run_study(spec: StudySpec, ctx: RunContext) -> dict[Job, Artifact]:
    """Build every job of the study in dependency order; returns the artifact of each job."""
    statuses = study_status(spec, ctx.store)
    todo_weight = sum(STAGE_KINDS.get(s.job.kind).weight for s in statuses if s.state != "done")
    built: dict[Job, Artifact] = {}
    started = time.time()
    with progress() as bar:
        task = bar.add_task(f"study {spec.name}", total=max(todo_weight, 1e-9))
        for status in statuses:
            job = status.job
            kind = STAGE_KINDS.get(job.kind)
            if status.state != "done":
                bar.update(task, description=f"{spec.name}: {job.label or job.kind}")
                log.info("building %s (%s)", job.label or job.kind, status.hash)
            built[job] = kind.build(job.config, [built[i] for i in job.inputs], ctx)
            if status.state != "done":
                bar.advance(task, kind.weight)
    log.info("study %s finished in %.1f s", spec.name, time.time() - started)
    return built
