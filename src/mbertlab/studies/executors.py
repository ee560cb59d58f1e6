"""Where a study's stages run: this machine (the runner), or a SLURM cluster through submitit.

SLURM: every stage not yet in the store is submitted, one job array per wave (depth in the DAG) and
resource profile, each array `afterok` on the jobs its stages read. A ledger of submitted job ids lets
a rerun skip stages still queued or running, and resubmit only what failed plus what depends on it
(stale dependants left pending by SLURM are cancelled first). `submitit-local` runs the same tasks as
local subprocesses, wave after wave, to try a resources setup without a cluster.
"""
from __future__ import annotations

import json
import logging
import os
import pickle
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import Field

from mbertlab.config import Config, deep_merge, parse_config
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import Job, RunContext
from mbertlab.studies.kinds import job_hash, known_stage_kinds, stage_kind
from mbertlab.studies.runner import (
    JobStatus,
    build_job,
    default_jobs,
    run_study,
    spec_section,
    study_status,
)
from mbertlab.studies.spec import StudySpec

log = logging.getLogger("mbertlab")
EXECUTORS = ("local", "slurm", "submitit-local")
ACTIVE_STATES = {"PENDING", "RUNNING", "CONFIGURING", "COMPLETING", "REQUEUED", "RESIZING", "SUSPENDED"}


class Resources(Config):
    """What one stage's SLURM job asks for."""

    gpus: int = Field(0, ge=0, description="GPUs on the node; a stage with more than one runs under torchrun.")
    nodes: int = Field(1, ge=1, description="Nodes: with more than one, a stage that splits over ranks runs one "
                       "SLURM task per GPU (`gpus` per node, one GPU each), started by srun instead of torchrun.")
    cpus: int = Field(1, ge=1, description="CPU cores (also the stage's thread count).")
    time_min: int = Field(60, ge=1, description="Wall-clock limit in minutes.")
    mem_gb: float | None = Field(None, gt=0, description="Memory; the cluster's default when absent.")
    partition: str | None = Field(None, description="SLURM partition.")
    sbatch: dict[str, str] = Field(default_factory=dict, description="Further sbatch flags, e.g. {account: x}.")


def parse_resources(data: Any, source: str) -> dict[str, Resources]:
    """`resources: {default: {...}, <stage kind>: {...}}`; a kind's entry overrides `default` key by key.

    GPUs go only to kinds that run a model (`resources_for` trims what `default` gives); a kind's own entry
    asking for more GPUs than its jobs can use is an error rather than an idle reservation."""
    data = data or {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: key 'resources': expected a mapping of stage kind to resources")
    unknown = sorted(k for k in data if k != "default" and k not in known_stage_kinds())
    if unknown:
        raise ConfigError(f"{source}: key 'resources': unknown stage kind(s) {', '.join(unknown)} "
                          f"(known: default, {', '.join(known_stage_kinds())})")
    base = data.get("default") or {}
    table = {"default": parse_config(Resources, base, f"{source}: resources.default")}
    for kind, over in data.items():
        if kind != "default":
            table[kind] = parse_config(Resources, deep_merge(base, over or {}), f"{source}: resources.{kind}")
            if "gpus" in (over or {}):
                _check_gpus(kind, table[kind].gpus, source)
            if table[kind].nodes > 1 and not (stage_kind(kind).ranks and table[kind].gpus):
                raise ConfigError(f"{source}: key 'resources.{kind}.nodes': {table[kind].nodes} asked, but only a "
                                  "stage that splits over ranks, with gpus, runs on several nodes")
    return table


def _check_gpus(kind: str, gpus: int, source: str) -> None:
    most = stage_kind(kind).max_gpus
    if most is None or gpus <= most:
        return
    split = ", ".join(k for k in known_stage_kinds() if stage_kind(k).ranks)
    why = "it runs no model" if most == 0 else f"only {split} split over torchrun ranks"
    raise ConfigError(f"{source}: key 'resources.{kind}.gpus': {gpus} asked, but a {kind!r} job uses at most "
                      f"{most} ({why})")


def resources_for(kind: str, table: dict[str, Resources]) -> Resources:
    """The kind's own entry, else `default`; with no more GPUs than the kind's jobs can use (none for a stage
    that runs no model, so corpus and tokenizer jobs wait for CPU nodes only)."""
    res = table.get(kind, table["default"])
    most = stage_kind(kind).max_gpus
    res = res if most is None or res.gpus <= most else res.model_copy(update={"gpus": most})
    return res if res.nodes == 1 or (stage_kind(kind).ranks and res.gpus) else res.model_copy(update={"nodes": 1})


def torchrun_command(payload: Path, gpus: int) -> list[str]:
    """One process per GPU on this node (torchrun's module form, so no PATH lookup)."""
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={gpus}",
            "-m", "mbertlab.studies.executors", str(payload)]


@dataclass(frozen=True)
class StageTask:
    """What a submitted job runs: build one stage whose inputs are already in the store."""

    job: Job
    workdir: str
    results: str
    study: str
    gpus: int = 0
    threads: int = 1
    design: str = ""  # loaded in the job's process, for a user design's own stage kinds
    nodes: int = 1  # more than one: srun started every rank as a SLURM task (the process group from its env)

    def __call__(self) -> str:
        os.environ["MBERTLAB_THREADS"] = str(self.threads)
        self.load_design()
        if self.gpus > 1 and self.nodes == 1:
            name = job_hash(self.job, ArtifactStore(self.workdir))
            payload = Path(self.workdir) / "slurm" / "payloads" / f"{name}.pkl"
            payload.parent.mkdir(parents=True, exist_ok=True)
            payload.write_bytes(pickle.dumps(self))
            subprocess.run(torchrun_command(payload, self.gpus), check=True)
            return str(payload)
        return str(self.build().path)

    def load_design(self) -> None:
        """A user design's stage kinds are known only once its module is imported in this process."""
        from mbertlab.studies.designs import get_design

        if self.design:
            get_design(self.design)

    def build(self) -> Artifact:
        from mbertlab.runtime import setup_torch

        self.load_design()
        setup_torch()
        store = ArtifactStore(self.workdir)
        inputs = []
        for dep in self.job.inputs:
            found = store.find(stage_kind(dep.kind).stage, job_hash(dep, store))
            if found is None:  # afterok should make this impossible; never build an input twice
                raise RuntimeError(f"{self.job.label}: input {dep.label} is not in the store")
            inputs.append(found)
        return build_job(self.job, inputs, RunContext(store, ResultsDB(self.results), self.study))


def run_task(task: StageTask) -> str:
    return task()


def waves(statuses: list[JobStatus]) -> list[list[JobStatus]]:
    """Statuses grouped by depth in the DAG (longest chain of inputs), in topological order."""
    depth: dict[Job, int] = {}
    for st in statuses:  # topological: inputs come first
        depth[st.job] = 1 + max((depth.get(i, 0) for i in st.job.inputs), default=-1)
    out: dict[int, list[JobStatus]] = defaultdict(list)
    for st in statuses:
        out[depth[st.job]].append(st)
    return [out[d] for d in sorted(out)]


@dataclass
class Plan:
    submit: list[JobStatus]  # missing stages to submit, topological order
    active: dict[Job, str]  # stages queued or running from an earlier submission: job id
    cancel: list[str]  # queued ids that can never run (an input failed): cancelled, then resubmitted


def plan_submission(statuses: list[JobStatus], ledger: dict[str, str], queue: dict[str, str]) -> Plan:
    """Which stages to (re)submit: missing ones, unless an earlier job for them is alive and can still run."""
    done = {st.job for st in statuses if st.state == "done"}
    plan = Plan([], {}, [])
    for st in statuses:
        if st.job in done:
            continue
        old = ledger.get(f"{st.stage}/{st.hash}")
        if old is not None and queue.get(old) in ACTIVE_STATES and \
                all(i in done or i in plan.active for i in st.job.inputs):
            plan.active[st.job] = old
            continue
        if old is not None and old in queue:
            plan.cancel.append(old)
        plan.submit.append(st)
    return plan


def slurm_queue() -> dict[str, str]:
    """This user's SLURM jobs (array tasks one by one): id -> state."""
    out = subprocess.run(["squeue", "--me", "-r", "-h", "-o", "%i %T"], check=True, capture_output=True, text=True)
    return dict(line.split()[:2] for line in out.stdout.splitlines() if len(line.split()) >= 2)


class Ledger:
    """`<workdir>/slurm/<study>-<scale>/submitted.json`: stage/hash -> the SLURM job id last submitted."""

    def __init__(self, folder: Path):
        self.path = folder / "submitted.json"

    def load(self) -> dict[str, str]:
        return json.loads(self.path.read_text()) if self.path.is_file() else {}

    def save(self, ids: dict[str, str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(ids, indent=1, sort_keys=True) + "\n")
        os.replace(tmp, self.path)


@dataclass
class Submission:
    submitted: dict[str, str]  # stage label -> job id
    kept: dict[str, str]  # still queued or running from before
    cancelled: list[str]
    arrays: int

    def summary(self) -> str:
        return (f"{len(self.submitted)} stages submitted in {self.arrays} job arrays, {len(self.kept)} still "
                f"queued or running, {len(self.cancelled)} stale jobs cancelled")


def _params(res: Resources, name: str, deps: list[str], parallelism: int) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "timeout_min": res.time_min, "cpus_per_task": res.cpus,
                              "gpus_per_node": res.gpus or None, "mem_gb": res.mem_gb, "slurm_partition": res.partition,
                              "slurm_dependency": f"afterok:{':'.join(deps)}" if deps else None,
                              "slurm_additional_parameters": dict(res.sbatch) or None}
    if res.nodes > 1:  # one task per GPU on each node, each task seeing its own GPU
        params.update(nodes=res.nodes, tasks_per_node=res.gpus, gpus_per_node=None, slurm_gpus_per_task=1)
    if parallelism:
        params["slurm_array_parallelism"] = parallelism
    return params


def _groups(wave: list[JobStatus], table: dict[str, Resources]) -> list[tuple[Resources, list[JobStatus]]]:
    groups: dict[str, tuple[Resources, list[JobStatus]]] = {}
    for st in wave:
        res = resources_for(st.job.kind, table)
        groups.setdefault(res.canonical_json(), (res, []))[1].append(st)
    return list(groups.values())


def submit_study(spec: StudySpec, ctx: RunContext, cluster: str = "slurm", jobs: int = 0) -> Submission:
    """Submit every missing stage (slurm: with afterok dependencies, returns at once; local: waits)."""
    import submitit

    folder = ctx.store.workdir / "slurm" / f"{spec.name}-{spec.scale}"
    table = parse_resources(spec_section(spec, "resources"), spec.source)
    ledger = Ledger(folder)
    queue = slurm_queue() if cluster == "slurm" else {}
    plan = plan_submission(study_status(spec, ctx.store), ledger.load(), queue)
    if plan.cancel:
        subprocess.run(["scancel", *plan.cancel], check=True)
    ids = dict(plan.active)
    arrays = 0
    for wave in waves(plan.submit):
        for res, group in _groups(wave, table):
            deps = sorted({ids[i] for st in group for i in st.job.inputs if i in ids})
            executor = submitit.AutoExecutor(folder=folder / "logs" / "%j", cluster=cluster)
            executor.update_parameters(**_params(res, f"{spec.name}:{group[0].job.kind}", deps, jobs))
            tasks = [StageTask(st.job, str(ctx.store.workdir), str(ctx.results.path.resolve()), ctx.study,
                               res.gpus, res.cpus, spec.design, res.nodes) for st in group]
            submitted = executor.map_array(run_task, tasks)
            arrays += 1
            ids.update((st.job, job.job_id) for st, job in zip(group, submitted))
            if cluster != "slurm":  # no scheduler to hold dependants back: finish the wave first
                for job in submitted:
                    job.result()
        ledger.save({**ledger.load(), **{f"{st.stage}/{st.hash}": ids[st.job] for st in plan.submit if st.job in ids}})
    return Submission({st.job.label: ids[st.job] for st in plan.submit}, {j.label: i for j, i in plan.active.items()},
                      plan.cancel, arrays)


def execute(spec: StudySpec, ctx: RunContext, executor: str = "local", jobs: int = 0,
            slice_name: str | None = None) -> str:
    """Run or submit the study (or one slice of it, locally); returns a one-line summary for the CLI."""
    if executor not in EXECUTORS:
        raise ConfigError(f"--executor {executor!r}: expected one of {', '.join(EXECUTORS)}")
    if slice_name is not None and executor != "local":
        raise ConfigError(f"--slice {slice_name!r}: a slice runs with the local executor only")
    if executor == "local":
        only = None
        if slice_name is not None:
            from mbertlab.studies.slices import study_slicing

            only = study_slicing(spec).get(slice_name).jobs
        built = run_study(spec, ctx, jobs=jobs or default_jobs(), only=only, slice_name=slice_name)
        return f"{len(built)} stages complete" + (f" (slice {slice_name})" if slice_name else "")
    return submit_study(spec, ctx, "slurm" if executor == "slurm" else "local", jobs).summary()


def _main(payload: str) -> None:
    """Entry point of each torchrun rank: the stage's own code decides what each rank does."""
    task: StageTask = pickle.loads(Path(payload).read_bytes())
    task.build()


if __name__ == "__main__":
    _main(sys.argv[1])
