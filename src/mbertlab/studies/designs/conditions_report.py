"""Tables of the `conditions` design, in the layout of K et al. 2020 Tables 1–3, from results.db."""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from mbertlab.report.render import Report, bar_plot
from mbertlab.report.tables import Cell, Table, delta
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.studies.jobs import STAGE_KINDS, Job, job_hash
from mbertlab.studies.spec import StudySpec

HEADLINE = {"upos": ("accuracy", "UPOS accuracy"), "ner": ("f1", "NER entity F1"),
            "parse": ("las_nopunct", "LAS (no punctuation)"), "xnli": ("accuracy", "XNLI accuracy"),
            "mldoc": ("accuracy", "MLDoc accuracy")}
TEST_SPLIT = "test"


def rows_by_job(jobs: list[Job], store: ArtifactStore, results: ResultsDB) -> dict[Job, list[ResultRow]]:
    """Each job's rows, found by the artifact directory the job resolves to (stage/hash)."""
    memo: dict[Job, str] = {}
    keys = {}
    for job in jobs:
        keys[(STAGE_KINDS.get(job.kind).stage, job_hash(job, store, memo))] = job
    out: dict[Job, list[ResultRow]] = defaultdict(list)
    for row in results.query():
        path = Path(row.artifact)
        job = keys.get((path.parent.name, path.name))
        if job is not None:
            out[job].append(row)
    return out


def _cell(rows: list[ResultRow], metric: str, lang: str, scale: float = 100.0) -> Cell:
    vals = [r.value for r in rows if r.metric == metric and r.test_lang == lang and r.split == TEST_SPLIT]
    return Cell(vals, scale=scale, digits=1)


def conditions_report(spec: StudySpec, store: ArtifactStore, results: ResultsDB) -> Report:
    from mbertlab.studies.runner import study_jobs

    s = spec.settings
    jobs = study_jobs(spec)
    rows = rows_by_job(jobs, store, results)
    tables, plots = [], []
    for task in s.tasks:
        table, series = _task_table(s, task, jobs, rows)
        tables.append(table)
        plots.append(bar_plot(f"{HEADLINE[task][1]}: zero-shot from {s.source}", f"{task}-zero-shot",
                              [c.name for c in s.conditions], series, HEADLINE[task][1]))
    if s.retrieval:
        tables.append(_retrieval_table(s, jobs, rows))
    notes = [f"Mean ± sample std over seeds {s.seeds}; Δ = source − target per seed. "
             "'random init' fine-tunes an encoder with the same shape and fresh weights; 'majority' "
             "tags every token with the most frequent source-training tag."]
    return Report(f"Study {spec.name} ({spec.scale})", spec.description, tables, plots, notes)


def _select(jobs, rows, kind: str, **tags: str) -> list[ResultRow]:
    out = []
    for job in jobs:
        if job.kind == kind and all(job.tag(k) == v for k, v in tags.items()):
            out += rows.get(job, [])
    return out


def _task_table(s, task: str, jobs, rows) -> tuple[Table, dict]:
    metric, title = HEADLINE[task]
    columns = ["condition", "target", f"source ({s.source})", "zero-shot target", "Δ",
               "random init: target", "majority: target"]
    body, series = [], {"pretrained": [], "random init": [], "majority": []}
    for cond in s.conditions:
        trained = _select(jobs, rows, "transfer", condition=cond.name, control="pretrained", task=task)
        random_ = _select(jobs, rows, "transfer", condition=cond.name, control="random_init", task=task)
        majority = _select(jobs, rows, "transfer", condition=cond.name, control="majority", task=task)
        src, tgt = _cell(trained, metric, s.source), _cell(trained, metric, cond.target)
        rnd, maj = _cell(random_, metric, cond.target), _cell(majority, metric, cond.target)
        body.append([cond.name, cond.target, src, tgt, delta(src, tgt), rnd, maj])
        for name, cell in (("pretrained", tgt), ("random init", rnd), ("majority", maj)):
            series[name].append((cell.mean * 100 if cell.values else 0.0, cell.std * 100))
    return Table(f"{title} (%): fine-tuned on {s.source}, tested zero-shot", columns, body), series


def _retrieval_table(s, jobs, rows) -> Table:
    columns = ["condition", "target", "MRR (pretrained)", "MRR (random init)", "P@1 (pretrained)"]
    body = []
    for cond in s.conditions:
        trained = _select(jobs, rows, "retrieval", condition=cond.name, control="pretrained")
        random_ = _select(jobs, rows, "retrieval", condition=cond.name, control="random_init")
        body.append([cond.name, cond.target, Cell([r.value for r in trained if r.metric == "mrr"], 1.0, 3),
                     Cell([r.value for r in random_ if r.metric == "mrr"], 1.0, 3),
                     Cell([r.value for r in trained if r.metric == "p@1"], 100.0, 1)])
    return Table(f"Word retrieval {s.source} → target with contextual vectors and the gold lexicon", columns, body,
                 note="Mean reciprocal rank of the gold translation among all target words of the lexicon.")
