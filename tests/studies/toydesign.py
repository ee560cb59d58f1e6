"""A toy study design with cheap stages, to test the runner apart from real training.

Each build appends a line to `<log_dir>/builds.log`, so tests can count builds across processes.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path

from mbertlab.config import Config
from mbertlab.report.render import Report
from mbertlab.report.tables import Cell, Table
from mbertlab.store.artifacts import final_path
from mbertlab.store.results import ResultRow
from mbertlab.studies.designs import Design
from mbertlab.studies.rows import StudyRows
from mbertlab.studies.jobs import Job, StageKind


class ToySettings(Config):
    cells: list[str]
    seeds: list[int] = [0]
    sleep: float = 0.0
    log_dir: str
    spell: str | None = None  # a word map (corpus/manipulations.py) the make stage respells its cell with


class MakeConfig(Config):
    cell: str
    log_dir: str
    sleep: float
    spell: str | None = None


class ScoreConfig(Config):
    cell: str
    seed: int
    log_dir: str
    sleep: float


def _log(log_dir: str, text: str, name: str = "builds.log") -> None:
    with open(Path(log_dir) / name, "a", encoding="utf-8") as f:
        f.write(text + "\n")


def build_make(config: MakeConfig, inputs, ctx):
    def builder(out: Path) -> None:
        time.sleep(config.sleep)
        (out / "value.json").write_text(json.dumps({"value": len(config.cell)}))
        from mbertlab.corpus.manipulations import WORD_MAPS

        _log(config.log_dir, f"make {WORD_MAPS.get(config.spell)(config.cell) if config.spell else config.cell}")

    _log(config.log_dir, f"rank {os.environ.get('RANK', '-')} of {os.environ.get('WORLD_SIZE', '-')}", "ranks.log")
    return ctx.store.build("toy_make", config, builder, inputs)


def build_score(config: ScoreConfig, inputs, ctx):
    made = json.loads((inputs[0].path / "value.json").read_text())["value"]

    def builder(out: Path) -> None:
        time.sleep(config.sleep)
        row = ResultRow(metric="accuracy", value=made / 10 + config.seed / 100, study=ctx.study,
                        task="toy", test_lang=config.cell, seed=config.seed, artifact=str(final_path(out)))
        ctx.results.add([row], replace_artifact=row.artifact)
        _log(config.log_dir, f"score {config.cell} {config.seed}")

    return ctx.store.build("toy_score", config, builder, inputs)




def plan(spec) -> list[Job]:
    s: ToySettings = spec.settings
    jobs = []
    for cell in s.cells:
        make = Job("toy_make", MakeConfig(cell=cell, log_dir=s.log_dir, sleep=s.sleep, spell=s.spell),
                   label=f"make {cell}")
        jobs += [Job("toy_score", ScoreConfig(cell=cell, seed=seed, log_dir=s.log_dir, sleep=s.sleep), (make,),
                     label=f"score {cell} {seed}", tags=(("cell", cell),)) for seed in s.seeds]
    return jobs


def report(spec, store, results) -> Report:
    s: ToySettings = spec.settings
    from mbertlab.studies.runner import study_jobs

    rows = StudyRows.load(study_jobs(spec), store, results)
    body = []
    for cell in s.cells:
        vals = [r.value for _, r in rows.tagged(cell=cell)]
        body.append([cell, Cell(vals, 100.0, 1)])
    return Report("toy", "toy study", [Table("toy scores", ["cell", "accuracy"], body)])


# toy_make stands in for pretraining (a GPU kind whose builder every torchrun rank may call: the store's lock
# makes one rank build it and the others reuse it); toy_score for a CPU-only stage
toy = Design(ToySettings, plan, report, stage_kinds={
    "toy_make": StageKind("toy_make", build_make, gpu=True, ranks=True),
    "toy_score": StageKind("toy_score", build_score)})
