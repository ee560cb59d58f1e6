"""Tables of the `lms2023` design from results.db: rows HL / HL balanced / distilled, columns per language
group (low, high, all) — MLM MRR and Eq. 3 per language set, then POS/NER probes in-language and zero-shot."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from mbertlab.report.plots import bar_plot
from mbertlab.report.render import Report
from mbertlab.report.tables import Cell, Table
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.papers.lms2023.design import VARIANTS
from mbertlab.studies.rows import StudyRows
from mbertlab.studies.spec import StudySpec
from mbertlab.transfer.tasks import get_task

GROUPS = ("low", "high", "all")


def lms2023_report(spec: StudySpec, store: ArtifactStore, results: ResultsDB) -> Report:
    from mbertlab.studies.runner import study_jobs

    s = spec.settings
    rows = StudyRows.load(study_jobs(spec), store, results)
    tables, plots = [], []
    for lset in s.sets:
        groups = {**lset.groups(), "all": [l.name for l in lset.languages]}
        balance = rows.select("balance", set=lset.name)
        tables.append(_mrr_table(lset, groups, balance, VARIANTS))
        tables.append(_language_table(lset, balance, VARIANTS))
        plots.append(bar_plot(f"Eq. 3 balance D(M, L), {lset.name}", f"eq3-{lset.name.replace(' ', '-')}",
                              list(GROUPS), {v: [_eq3(balance, v, g).mean_std() for g in GROUPS] for v in VARIANTS},
                              "MRR(model) − MRR(teacher)"))
        for task in s.tasks:
            probes = {job: rs for job, rs in rows.by_job.items()
                      if job.kind == "transfer" and job.tag("set") == lset.name
                      and job.config.task == task}
            tables.append(_probe_table(lset, groups, task, probes, VARIANTS))
    notes = [f"Mean ± sample std over seeds {s.seeds}; a group's value per seed is the mean over its languages. "
             "MRR: dev MLM mean reciprocal rank of the gold token, every model and teacher scored on the same "
             "masked dev batches of the full-data shards. Eq. 3: D(M, L) = mean over L of MRR(M) − MRR(teacher "
             "of the language); 0 means the multilingual model matches the monolingual teachers.",
             "Probes: a linear layer on the frozen last layer; in-language = trained and tested on the language "
             "(test split); zero-shot = trained on the set's source language, tested on the others (the source "
             "is left out of the zero-shot columns)."]
    return Report(f"Study {spec.name} ({spec.scale})", spec.description, tables, plots, notes)


class _Cell(Cell):
    def mean_std(self) -> tuple[float, float]:
        return (self.mean, self.std) if self.values else (float("nan"), 0.0)


def _per_seed_mean(values: dict[tuple[int, str], float], langs: list[str], scale: float, digits: int) -> _Cell:
    """A cell of per-seed means over `langs` (seeds missing a language are left out)."""
    seeds = sorted({seed for seed, _ in values})
    out = [float(np.mean([values[(seed, l)] for l in langs])) for seed in seeds
           if langs and all((seed, l) in values for l in langs)]
    return _Cell(out, scale=scale, digits=digits)


def _eq3(balance, variant: str, group: str) -> _Cell:
    vals = [r.value for r in sorted(balance, key=lambda r: r.seed or 0) if r.metric == "eq3" and r.model == variant
            and r.extra.get("level") == "group" and r.test_lang == group]
    return _Cell(vals, digits=3)


def _mrr(balance, variant: str) -> dict[tuple[int, str], float]:
    return {(r.seed or 0, r.test_lang): r.value for r in balance if r.metric == "mlm_mrr" and r.model == variant}


def _mrr_table(lset, groups, balance, variants) -> Table:
    columns = ["model"] + [f"MRR {g}" for g in GROUPS] + [f"Eq. 3 {g}" for g in GROUPS]
    body = [["monolingual teachers"] + [_per_seed_mean(_mrr(balance, "teacher"), groups[g], 1, 3) for g in GROUPS]
            + ["0 (by definition)"] * 3]
    for v in variants:
        body.append([v] + [_per_seed_mean(_mrr(balance, v), groups[g], 1, 3) for g in GROUPS]
                    + [_eq3(balance, v, g) for g in GROUPS])
    note = "; ".join(f"{g}: {', '.join(groups[g])}" for g in ("low", "high"))
    return Table(f"MLM MRR and Eq. 3 balance, {lset.name}", columns, body, note=f"Groups — {note}.")


def _language_table(lset, balance, variants) -> Table:
    columns = ["model"] + [f"{l.name} ({l.share})" for l in lset.languages]
    body = [["teacher MRR"] + [_per_seed_mean(_mrr(balance, "teacher"), [l.name], 1, 3) for l in lset.languages]]
    for v in variants:
        eq3 = {(r.seed or 0, r.test_lang): r.value for r in balance if r.metric == "eq3" and r.model == v
               and r.extra.get("level") == "language"}
        body.append([f"{v}: Eq. 3"] + [_per_seed_mean(eq3, [l.name], 1, 3) for l in lset.languages])
    return Table(f"Eq. 3 per language (MRR − teacher's MRR), {lset.name}", columns, body,
                 note="Column headers give each language's share of the full data (their Table 1 proportions).")


def _probe_table(lset, groups, task: str, probes, variants) -> Table:
    metric = get_task(task).metric
    inlang: dict[str, dict] = defaultdict(dict)
    zero: dict[str, dict] = defaultdict(dict)
    for job, rs in probes.items():
        v, kind = job.tag("variant"), job.tag("probe")
        for r in rs:
            if r.metric != metric or r.split != "test" or r.test_lang not in groups["all"]:
                continue
            key = (r.seed or 0, r.test_lang)
            if kind == "in-language" or r.test_lang == lset.source:
                inlang[v][key] = r.value
            else:
                zero[v][key] = r.value
    columns = ["model"] + [f"in-language {g}" for g in GROUPS] + [f"zero-shot {g}" for g in GROUPS]
    body = []
    for v in variants:
        cells = [_per_seed_mean(inlang[v], [l for l in groups[g] if _any(inlang[v], l)], 100, 1)
                 for g in GROUPS]
        cells += [_per_seed_mean(zero[v], [l for l in groups[g] if l != lset.source], 100, 1) for g in GROUPS]
        body.append([v] + cells)
    kind = get_task(task)
    return Table(f"{kind.title} probe {kind.metric_title}, {lset.name} (zero-shot from {lset.source})", columns, body,
                 note="In-language columns average the languages that were probed in-language (spec key in_language).")


def _any(values: dict, lang: str) -> bool:
    return any(l == lang for _, l in values)
