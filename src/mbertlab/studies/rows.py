"""A study's result rows, found through the jobs that made them, so a table can pick rows by a job's kind
and tags (condition, control, task ...) and reduce them to one cell."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Iterator

from mbertlab.report.tables import Cell
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.studies.jobs import Job
from mbertlab.studies.kinds import job_hash, stage_kind

ROW_FIELDS = frozenset(f.name for f in fields(ResultRow))


def rows_by_job(jobs: list[Job], store: ArtifactStore, results: ResultsDB) -> dict[Job, list[ResultRow]]:
    """Each job's rows, found by the artifact directory the job resolves to (stage/hash)."""
    memo: dict[Job, str] = {}
    keys = {(stage_kind(job.kind).stage, job_hash(job, store, memo)): job for job in jobs}
    out: dict[Job, list[ResultRow]] = defaultdict(list)
    for row in results.query():
        path = Path(row.artifact)
        job = keys.get((path.parent.name, path.name))
        if job is not None:
            out[job].append(row)
    return out


@dataclass
class StudyRows:
    """`jobs` in the design's plan order: a job several cells share appears once per cell, with that cell's
    tags, so selecting by tags finds its rows for every cell."""

    jobs: list[Job]
    by_job: dict[Job, list[ResultRow]]

    @classmethod
    def load(cls, jobs: list[Job], store: ArtifactStore, results: ResultsDB) -> StudyRows:
        return cls(list(jobs), rows_by_job(jobs, store, results))

    def tagged(self, kind: str | None = None, **tags: str) -> Iterator[tuple[Job, ResultRow]]:
        for job in self.jobs:
            if (kind is None or job.kind == kind) and all(job.tag(k) == v for k, v in tags.items()):
                yield from ((job, row) for row in self.by_job.get(job, []))

    def select(self, kind: str, **tags: str) -> list[ResultRow]:
        return [row for _, row in self.tagged(kind, **tags)]


def matches(row: ResultRow, **where: Any) -> bool:
    """Every key equals the row's column of that name, or else its `extra` entry."""
    return all((getattr(row, k) if k in ROW_FIELDS else row.extra.get(k)) == v for k, v in where.items())


def values(rows: list[ResultRow], metric: str, **where: Any) -> list[float]:
    return [r.value for r in rows if r.metric == metric and matches(r, **where)]


def cell(rows: list[ResultRow], metric: str, scale: float = 100.0, digits: int = 1, **where: Any) -> Cell:
    """Mean ± std over the matching rows (one per seed), shown `value * scale` to `digits` places."""
    return Cell(values(rows, metric, **where), scale=scale, digits=digits)


def lang_cell(rows: list[ResultRow], metric: str, lang: str, scale: float = 100.0, digits: int = 1,
              split: str = "test", **where: Any) -> Cell:
    """One language's score on one split (the test set unless told)."""
    return cell(rows, metric, scale, digits, test_lang=lang, split=split, **where)
