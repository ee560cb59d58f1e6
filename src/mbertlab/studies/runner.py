"""Run a study: expand its spec into jobs, build what is missing, keep going after a kill.

Every job goes through the artifact store, so a rerun reuses what is complete and resumes what
was interrupted (pretraining continues from its last checkpoint). With `jobs > 1`, independent
jobs run in parallel worker processes that split the CPU cores; file locks keep builds unique.
"""
from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import sys
import time
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mbertlab.config import deep_merge
from mbertlab.progress import StageLines, progress
from mbertlab.runtime import cpu_count
from mbertlab.store.artifacts import Artifact, ArtifactStore, environment_info
from mbertlab.store.results import ResultsDB
from mbertlab.studies.designs import USER_MODULES
from mbertlab.studies.jobs import Job, RunContext, StageKind, distinct_labels, place_jobs, topological
from mbertlab.studies.kinds import job_hash, stage_kind
from mbertlab.studies.spec import StudySpec, read_spec_data, scale_block

log = logging.getLogger("mbertlab")


@dataclass
class JobStatus:
    job: Job
    stage: str
    hash: str
    state: str  # "done", "partial" (interrupted build), "missing"


def default_jobs() -> int:
    """Parallel workers: tiny models use a core far better one process per core than two threads each."""
    return max(1, cpu_count())


def spec_section(spec: StudySpec, key: str) -> Any:
    """A spec key read by the study machinery rather than the design (`findings`, `resources`), at the
    spec's scale. `--set` overrides do not reach it: these keys describe the paper and the cluster."""
    data = read_spec_data(Path(spec.source))
    return deep_merge(data, scale_block(data.get("scales") or {}, spec.scale, spec.source)).get(key)


def placed_plan(spec: StudySpec) -> list[Job]:
    """The design's plan with the spec's device and precision in every job: plan order, one entry per cell
    (a job several cells share appears once per cell, with that cell's tags), as report tables read it."""
    from mbertlab.studies.designs import get_design

    return place_jobs(get_design(spec.design).plan(spec), spec.device, spec.precision)


def study_jobs(spec: StudySpec) -> list[Job]:
    """Every job to build, each once, after its inputs, each under its own label."""
    return distinct_labels(topological(placed_plan(spec)))


def study_status(spec: StudySpec, store: ArtifactStore, jobs: list[Job] | None = None) -> list[JobStatus]:
    """Each job of the study (or of `jobs`, a slice of it) with its hash and state in the store."""
    memo: dict[Job, str] = {}
    out = []
    for job in study_jobs(spec) if jobs is None else jobs:
        stage = stage_kind(job.kind).stage
        hash_ = job_hash(job, store, memo)
        if store.find(stage, hash_) is not None:
            state = "done"
        elif (store.workdir / stage / f".partial-{hash_}").exists():
            state = "partial"
        else:
            state = "missing"
        out.append(JobStatus(job, stage, hash_, state))
    return out


def build_job(job: Job, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return stage_kind(job.kind).build(job.config, inputs, ctx)


def _init_worker(threads: str, modules: tuple[str, ...]) -> None:
    """A worker's share of the cores, the users' design modules imported (what they register on import), and
    it dies with the runner (a killed `study run` must not leave workers waiting forever on a pipe nobody
    writes to)."""
    import importlib

    os.environ["MBERTLAB_THREADS"] = threads
    for module in modules:
        importlib.import_module(module)
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the runner died before the signal was armed
        os._exit(1)


def _worker_build(kind: StageKind, job: Job, inputs: list[Artifact], workdir: str, results_path: str,
                  study: str) -> Artifact:
    """Entry point of a worker process (spawned: a fresh interpreter with its share of the cores)."""
    from mbertlab.runtime import setup_torch

    setup_torch()
    ctx = RunContext(ArtifactStore(workdir), ResultsDB(results_path), study)
    return kind.build(job.config, inputs, ctx)


def run_study(spec: StudySpec, ctx: RunContext, jobs: int = 1, only: list[Job] | None = None,
              slice_name: str | None = None) -> dict[Job, Artifact]:
    """Build every job of the study (or `only` these, the slice `slice_name` with its inputs) in dependency order;
    returns the artifact of each job."""
    statuses = study_status(spec, ctx.store, only)
    missing = [s for s in statuses if s.state != "done"]
    started, cpu, tally = time.time(), _cpu_seconds(), _Tally()
    env = environment_info()  # the commit whose code this run imports: read now, HEAD may move before it ends
    log.info("study %s: %d of %d stages to build", spec.name, len(missing), len(statuses))
    try:
        built = _build(spec, statuses, missing, ctx, jobs, tally)
    finally:  # an interrupted run (Ctrl-C, SIGTERM) is logged too: a run resumed in parts adds its parts
        log_run(spec, ctx, jobs, started, cpu, built=tally.done, total=len(statuses),
                complete=tally.done == len(missing), slice_name=slice_name, env=env)
    log.info("study %s finished in %.1f s", spec.name, time.time() - started)
    return built


@dataclass
class _Tally:
    """The stages this run has finished, read by its log line even when the run is interrupted."""
    done: int = 0


def _build(spec, statuses, missing, ctx, jobs, tally: _Tally) -> dict[Job, Artifact]:
    todo = sum(stage_kind(s.job.kind).weight for s in missing)
    with progress(counts=False) as bar, StageLines(spec.name, len(missing)) as lines:
        # progress is weighted by each stage kind's rough cost, so the ETA is not fooled by cheap stages
        task = bar.add_task(f"{spec.name}: 0/{len(missing)} stages", total=max(todo, 1e-9))

        def begun(status: JobStatus) -> None:
            lines.start(_line_name(status))

        def finished(status: JobStatus) -> None:
            tally.done += 1
            lines.finish(_line_name(status))
            bar.update(task, advance=stage_kind(status.job.kind).weight,
                       description=f"{spec.name}: {tally.done}/{len(missing)} stages ({status.job.label})")

        if jobs <= 1:
            return _run_serial(statuses, ctx, begun, finished)
        return _run_parallel(statuses, ctx, jobs, begun, finished)


def _cpu_seconds() -> float:
    """User + system CPU seconds of this process, of its reaped children, and of its children not yet reaped (an
    interrupted run's workers, read from /proc before they are waited for; nothing there off Linux)."""
    import resource

    reaped = sum(u.ru_utime + u.ru_stime for u in (resource.getrusage(resource.RUSAGE_SELF),
                                                   resource.getrusage(resource.RUSAGE_CHILDREN)))
    return reaped + _unreaped_children_cpu()


def _unreaped_children_cpu() -> float:
    """CPU seconds (with their own reaped children's) of this process's children still listed in /proc: alive,
    or dead and not yet waited for."""
    total = 0.0
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):  # gone meanwhile, or not Linux's layout
            continue
        if int(fields[1]) == os.getpid():  # fields after the name: state, ppid, ..., utime at index 11
            total += sum(int(f) for f in fields[11:15]) / ticks
    return total


def log_run(spec: StudySpec, ctx: RunContext, jobs: int, started: float, cpu: float, built: int, total: int,
            complete: bool, slice_name: str | None = None, env: dict | None = None) -> None:
    """One line per `study run`, finished or interrupted, in <workdir>/runs.jsonl: what a committed run record
    (papers/records.py) reports as the run's time, machine (its GPU where the spec's device is one), precision and
    slice; a run resumed in parts, or run in slices, is several lines (`results export` carries a slice's lines).
    An interrupted part's CPU counts its workers too, read before they are reaped (`_cpu_seconds`). `env`: the
    host and commit as the run started (`environment_info`), default now."""
    import json

    from mbertlab.runtime import bf16_supported, processor_name, resolve_device, resolve_precision

    env, device = env or environment_info(), resolve_device(spec.device)
    line = {"study": spec.name, "scale": spec.scale, "started": started, "wall_s": round(time.time() - started, 1),
            "cpu_s": round(_cpu_seconds() - cpu, 1), "jobs": jobs, "stages_built": built, "stages": total,
            "complete": complete, "slice": slice_name,
            "precision": resolve_precision(spec.precision, device), "processor": processor_name(),
            "cpu_bf16": bf16_supported(), "cores": cpu_count(), "host": env["host"], "commit": env["git_commit"]}
    if device.type == "cuda":
        import torch

        line["gpu"] = torch.cuda.get_device_name(device)
    with (ctx.store.workdir / "runs.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line, sort_keys=True) + "\n")


def run_log(workdir: Path, spec: StudySpec, slice_name: str | None = None) -> list[dict]:
    """The workdir's `study run` lines (`log_run`) of this study and scale that built stages, oldest first; with
    `slice_name`, only that slice's."""
    import json

    path = workdir / "runs.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line] \
        if path.is_file() else []
    return [line for line in lines if line.get("study") == spec.name and line.get("scale") == spec.scale
            and line.get("stages_built") and (slice_name is None or line.get("slice") == slice_name)]


def add_run_log(workdir: Path, lines: list[dict]) -> int:
    """Append `study run` lines made elsewhere (a merged slice's) to the workdir's runs.jsonl, each once; how many
    were new."""
    import json

    path = workdir / "runs.jsonl"
    have = {(line.get("host"), line.get("started")) for line in
            (json.loads(t) for t in (path.read_text(encoding="utf-8").splitlines() if path.is_file() else []) if t)}
    new = [line for line in lines if (line.get("host"), line.get("started")) not in have]
    with path.open("a", encoding="utf-8") as fh:
        fh.writelines(json.dumps(line, sort_keys=True) + "\n" for line in new)
    return len(new)


def _line_name(status: JobStatus) -> str:
    """A stage as a progress line names it: kind, hash (its folder under the workdir) and label."""
    return f"{status.job.kind} {status.hash} ({status.job.label})"


def _run_serial(statuses, ctx, begun, finished) -> dict[Job, Artifact]:
    built: dict[Job, Artifact] = {}
    for status in statuses:
        if status.state != "done":
            begun(status)
        built[status.job] = build_job(status.job, [built[i] for i in status.job.inputs], ctx)
        if status.state != "done":
            finished(status)
    return built


def critical_path(statuses: list[JobStatus]) -> dict[Job, float]:
    """Each job's rough cost (its kind's weight; nothing when done) plus the costliest chain of jobs that wait on
    it. Started in this order, a seed's pretraining does not queue behind the cheap fine-tunings of the seeds
    before it, which could fill the workers later while it runs (a wd2019 lab run started its third 18-minute
    pretraining after 90 fine-tunings)."""
    readers: dict[Job, list[Job]] = {}
    for status in statuses:
        for job in status.job.inputs:
            readers.setdefault(job, []).append(status.job)
    cost: dict[Job, float] = {}
    for status in reversed(statuses):  # a job's readers come after it
        own = 0.0 if status.state == "done" else stage_kind(status.job.kind).weight
        cost[status.job] = own + max((cost[r] for r in readers.get(status.job, ())), default=0.0)
    return cost


def _run_parallel(statuses, ctx, jobs, begun, finished) -> dict[Job, Artifact]:
    """Submit each job once all its inputs are built and a worker is free (so a submitted job is a running one),
    the longest remaining chain first; cheap 'done' jobs resolve in this process."""
    built: dict[Job, Artifact] = {}
    cost = critical_path(statuses)
    pending = sorted(statuses, key=lambda s: -cost[s.job])  # stable: ties keep the study's order
    running: dict[Future, JobStatus] = {}
    spawn = multiprocessing.get_context("spawn")
    threads = str(max(1, cpu_count() // jobs))
    with ProcessPoolExecutor(max_workers=jobs, mp_context=spawn, initializer=_init_worker,
                             initargs=(threads, tuple(USER_MODULES))) as pool:
        try:
            _schedule(pool, pending, running, built, ctx, jobs, begun, finished)
        except BaseException:  # Ctrl-C, SIGTERM: stop the stages being built (a resumed run rebuilds them)
            for worker in multiprocessing.active_children():  # the pool's workers, not its resource tracker
                worker.terminate()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    return built


def _schedule(pool, pending, running, built, ctx, jobs, begun, finished) -> None:
    """The parallel run's loop: submit each ready job while a worker is free, collect what finishes."""
    while pending or running:
        for status in [s for s in pending if all(i in built for i in s.job.inputs)]:
            if status.state != "done" and len(running) >= jobs:
                continue
            pending.remove(status)
            inputs = [built[i] for i in status.job.inputs]
            if status.state == "done":
                built[status.job] = build_job(status.job, inputs, ctx)
                continue
            begun(status)
            fut = pool.submit(_worker_build, stage_kind(status.job.kind), status.job, inputs,
                              str(ctx.store.workdir), str(ctx.results.path), ctx.study)
            running[fut] = status
        if not running:
            continue
        done, _ = wait(running, return_when=FIRST_COMPLETED)
        for fut in done:
            status = running.pop(fut)
            built[status.job] = fut.result()
            finished(status)
