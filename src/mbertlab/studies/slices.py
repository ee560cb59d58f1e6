"""Slices: a study cut into self-contained chains that each fit one short GPU slot, built on different
machines and merged (studies/exchange.py). A slice is one seed, or, with a spec's `slices: {tag: condition,
groups: {name: [values]}}`, one group at one seed. A job goes to the slice of the seed and group it depends on;
one that depends on no seed (data, a majority label) to its group's first slice (inputs travel with every slice
that reads them: the copies share a hash); one that reads several slices is built after the merge."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from mbertlab.config import Config, parse_config
from mbertlab.errors import ConfigError
from mbertlab.studies.jobs import Job, topological
from mbertlab.studies.spec import StudySpec

SLOT_MINUTES = 9.0  # one run on one H100 within a 10-minute command, with a minute to start and export


class SliceSettings(Config):
    tag: str = Field("condition", description="The job tag that groups name values of.")
    groups: dict[str, list[str]] = Field(default_factory=dict, description="Group name -> tag values; each "
                                         "group is built one seed at a time. None: one slice per seed.")


@dataclass
class Slice:
    name: str
    jobs: list[Job] = field(default_factory=list)  # its own jobs and their inputs, inputs first


@dataclass
class Slicing:
    slices: list[Slice]
    after_merge: list[Job]  # jobs that read several slices' artifacts

    def get(self, name: str) -> Slice:
        for s in self.slices:
            if s.name == name:
                return s
        raise ConfigError(f"--slice {name!r}: no such slice (slices: {', '.join(s.name for s in self.slices)})")


def slice_settings(spec: StudySpec) -> SliceSettings:
    from mbertlab.studies.runner import spec_section

    return parse_config(SliceSettings, spec_section(spec, "slices") or {}, f"{spec.source}: key 'slices'")


def study_slicing(spec: StudySpec) -> Slicing:
    from mbertlab.studies.runner import study_jobs

    return slicing(study_jobs(spec), slice_settings(spec), spec.source)


def slicing(jobs: list[Job], settings: SliceSettings, where: str) -> Slicing:
    """Each job (in topological order) to the one slice it depends on, or to after_merge."""
    group_of = {value: name for name, values in settings.groups.items() for value in values}
    depends: dict[Job, frozenset] = {}
    for job in jobs:
        own = _own_slice(job, settings, group_of, where)
        depends[job] = frozenset({own} if own else set()).union(*(depends.get(i, frozenset()) for i in job.inputs))
    seeds = sorted({s for ids in depends.values() for _, s in ids}, key=_seed_order)
    names = [(g, s) for g in (list(settings.groups) or [None]) for s in seeds]
    own: dict[tuple, list[Job]] = {n: [] for n in names}
    after = []
    for job in jobs:
        ids = depends[job]
        if len(ids) > 1:
            after.append(job)
        elif ids:
            own[next(iter(ids))].append(job)
        else:  # depends on no seed: the first seed's slice of its group builds it (inputs travel anyway)
            group = group_of.get(job.tag(settings.tag)) if settings.groups else None
            first = next((n for n in names if n[0] == group), names[0] if names else None)
            if first is not None:
                own[first].append(job)
    slices = [Slice(_name(g, s), topological(own[(g, s)])) for g, s in names if own[(g, s)]]
    return Slicing(slices, after)


def _own_slice(job: Job, settings: SliceSettings, group_of: dict[str, str], where: str) -> tuple | None:
    seed = job.tag("seed") or None
    if seed is None:
        return None
    if not settings.groups:
        return (None, seed)
    value = job.tag(settings.tag)
    if value not in group_of:
        raise ConfigError(f"{where}: key 'slices.groups': {settings.tag} {value!r} ({job.label}) is in no group")
    return (group_of[value], seed)


def _seed_order(seed: str) -> Any:
    return (0, int(seed)) if seed.isdigit() else (1, seed)


def _name(group: str | None, seed: str) -> str:
    return f"{group}-seed{seed}" if group else f"seed{seed}"
