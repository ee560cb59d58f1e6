"""Stage jobs: what to build, from which inputs. The runner only composes these; no stage knows studies."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Callable

from mbertlab.config import Config, fill_auto, on_device
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.store.results import ResultsDB


@dataclass(frozen=True, eq=False)
class Job:
    """One artifact to build: a stage kind, its config and the jobs whose artifacts it reads.

    Two jobs are equal when kind, config and inputs are: a DAG shares a job that several cells need.
    """

    kind: str
    config: Config
    inputs: tuple["Job", ...] = ()
    label: str = field(default="", compare=False)
    tags: tuple[tuple[str, str], ...] = field(default=(), compare=False)  # e.g. (("condition", "fake"),)

    def tag(self, key: str, default: str = "") -> str:
        return dict(self.tags).get(key, default)

    @cached_property
    def key(self) -> tuple:
        return (self.kind, self.config.canonical_json(), tuple(i.key for i in self.inputs))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Job) and self.key == other.key

    def __hash__(self) -> int:
        return hash(self.key)


@dataclass
class RunContext:
    store: ArtifactStore
    results: ResultsDB
    study: str


@dataclass(frozen=True)
class StageKind:
    """How to build one kind of job. `stage` is the artifact-store stage name it builds.

    `gpu`: it runs a model, so a cluster job for it asks for a GPU (the others go to CPU nodes).
    `ranks`: every torchrun rank calls its builder and the builder splits the work, so it may take several GPUs.
    """

    stage: str
    build: Callable[[Config, list[Artifact], RunContext], Artifact]
    weight: float = 1.0  # rough relative cost, for the study ETA
    gpu: bool = False
    ranks: bool = False

    @property
    def max_gpus(self) -> int | None:
        """The most GPUs one job of this kind can use (None: any number, one torchrun rank each)."""
        return None if self.ranks else int(self.gpu)


def place_jobs(jobs: list[Job], device: str, precision: str = "auto") -> list[Job]:
    """The jobs (and their inputs) with the study's `device` and `precision` wherever a stage's own is left at
    auto. Job identity and hashes ignore the device, so the plan is the same on any machine; a pinned precision
    is part of every hash it reaches (bf16 and fp32 give different numbers)."""
    if device == "auto" and precision == "auto":
        return jobs
    placed: dict[Job, tuple[Config, tuple[Job, ...]]] = {}

    def place(job: Job) -> Job:
        """The job placed, keeping its own tags and label (equal jobs of different cells share the rest)."""
        if job not in placed:
            placed[job] = (fill_auto(on_device(job.config, device), "precision", precision),
                           tuple(map(place, job.inputs)))
        config, inputs = placed[job]
        return replace(job, config=config, inputs=inputs)

    return [place(job) for job in jobs]


def topological(jobs: list[Job]) -> list[Job]:
    """All jobs and their inputs, each once, every job after its inputs (stable order)."""
    order: list[Job] = []
    seen: set[Job] = set()

    def visit(job: Job) -> None:
        if job in seen:
            return
        for dep in job.inputs:
            visit(dep)
        seen.add(job)
        order.append(job)

    for job in jobs:
        visit(job)
    return order
