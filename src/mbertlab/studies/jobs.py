"""Stage jobs: what to build, from which inputs. The runner only composes these; no stage knows studies."""
from __future__ import annotations

import json
from collections import defaultdict
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


def distinct_labels(jobs: list[Job]) -> list[Job]:
    """The jobs (in topological order), each under a label of its own: progress lines, `study status` and a
    SLURM submission's summary name stages by label, and designs label by what a reader needs (liu2020's twelve
    word2vec runs were all 'static word2vec_sg src+same'). Where jobs share a label, what tells them apart is
    added (`_differences`)."""
    groups: dict[str, list[Job]] = defaultdict(list)
    for job in jobs:
        groups[job.label].append(job)
    renamed: dict[Job, str] = {}
    for label, group in groups.items():
        if len(group) > 1:
            renamed.update((job, f"{label} ({extra})") for job, extra in zip(group, _differences(group)))
    placed: dict[Job, Job] = {}
    for job in jobs:  # inputs first (topological order): every reference to a job carries its new label
        inputs = tuple(placed.get(dep, dep) for dep in job.inputs)
        kept = job not in renamed and all(new is old for new, old in zip(inputs, job.inputs))
        placed[job] = job if kept else replace(job, label=renamed.get(job, job.label), inputs=inputs)
    return list(placed.values())


def _differences(group: list[Job]) -> list[str]:
    """Per job, the fewest (at most three) differing tags, config fields, inputs' tags or input labels, chosen
    greedily in that order of preference, that tell the group's jobs apart; a count where they do not."""
    views, order = [], {}
    for job in group:
        tags, config = dict(job.tags), _flat(json.loads(job.config.canonical_json()))
        input_tags = {k: v for dep in job.inputs for k, v in dep.tags}
        input_labels = {f"input {i}": dep.label for i, dep in enumerate(job.inputs)}
        views.append({**input_labels, **input_tags, **config, **tags})
        order.update(dict.fromkeys([*tags, *config, *input_tags, *input_labels]))
    candidates = list(order)
    candidates = [k for k in candidates if len({json.dumps(v.get(k)) for v in views}) > 1]
    chosen: list[str] = []

    def parts(keys: list[str]) -> list[str]:
        return [", ".join(f"{_dotted(k)} {_short(v.get(k, '-'))}" for k in keys) for v in views]

    while candidates and len(chosen) < 3 and len(set(parts(chosen))) < len(group):
        best = max(candidates, key=lambda k: len(set(parts(chosen + [k]))))  # the first of equals
        chosen.append(best)
        candidates.remove(best)
    if chosen and len(set(parts(chosen))) == len(group):
        return parts(chosen)
    return [f"{i + 1} of {len(group)}" for i in range(len(group))]


def _flat(data, prefix: str = "") -> dict:
    """Nested dicts and lists of them as one level of dotted keys (a list of plain values stays one value)."""
    nested = isinstance(data, list) and any(isinstance(item, (dict, list)) for item in data)
    items = data.items() if isinstance(data, dict) else enumerate(data) if nested else None
    if not items:
        return {prefix.rstrip("."): data} if prefix else {}
    out: dict = {}
    for key, value in items:
        out.update(_flat(value, f"{prefix}{key}."))
    return out


def _dotted(key: str) -> str:
    return ".".join(part for part in key.split(".") if not part.isdigit()) or key


def _short(value) -> str:
    if isinstance(value, list):
        text = ",".join(item if isinstance(item, str) else json.dumps(item) for item in value)
    else:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:39] + "…"
