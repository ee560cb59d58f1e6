"""Tables of the `lms2023` design from results.db: rows HL / HL balanced / distilled, columns per language
group (low, high, all) — MLM MRR and Eq. 3 per language set (the paper's Table 2), Eq. 3 per language (Table 5
for German), POS/NER probes in-language and zero-shot (Table 3), then Appendix C's monolingual distillation by
corpus size (Figure 3). Under each of our rows, "<row> (paper)" holds the paper's number for that cell
(papers/lms2023/published.yaml), '—' where it prints none; Eq. 3 is in MRR points (× 100) as the paper prints it."""
from __future__ import annotations

from collections import defaultdict

import numpy as np

from mbertlab.report.plots import bar_plot, line_png
from mbertlab.report.render import Plot, Report
from mbertlab.report.tables import Cell, Table
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.papers.lms2023.design import VARIANTS, MonolingualSweep, sweep_label
from mbertlab.studies.published import load_published
from mbertlab.studies.rows import StudyRows
from mbertlab.studies.spec import StudySpec
from mbertlab.transfer.task_table import get_task

GROUPS = ("low", "high", "all")
# The paper's labels: its model columns (Tables 2 and 5 write "HL Balanced", Table 3 "HL balanced") and group rows.
PAPER_MODEL = {"HL": "HL", "HL balanced": "HL Balanced", "distilled": "Ours"}
PAPER_PROBE_MODEL = {"HL": "HL", "HL balanced": "HL balanced", "distilled": "Ours"}
PAPER_GROUP = {"low": "Low-Res.", "high": "High-Res.", "all": "All"}  # Table 2
PAPER_PROBE_GROUP = {"low": "Low-Res", "high": "High-Res", "all": "All"}  # Table 3
# The paper's probe metrics (Table 3, footnote 6): NER as macro-F1 over tag classes per token, not entity F1.
PROBE_METRIC = {"upos": ("accuracy", "accuracy"), "ner": ("token_macro_f1", "token macro-F1")}
POINTS = 100.0  # Eq. 3 shown in MRR points, as the paper's Tables 2 and 5


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
        plots.append(_eq3_plot(lset, balance))
        for task in s.tasks:
            probes = {job: rs for job, rs in rows.by_job.items()
                      if job.kind == "transfer" and job.tag("set") == lset.name
                      and job.config.task == task and job.config.mode == "probe"}
            tables.append(_probe_table(lset, groups, task, probes, VARIANTS, s.probe_from == "all"))
    if s.appendix_c is not None:
        sweep = rows.select("balance", appendix="C")
        tables.append(_sweep_table(s.appendix_c, sweep))
        plots.append(_sweep_plot(s.appendix_c, sweep))
    notes = [f"Mean ± sample std over seeds {s.seeds}; a group's value per seed is the mean over its languages. "
             "MRR: dev MLM mean reciprocal rank of the gold token, every model and teacher scored on the same "
             "masked dev batches of the full-data shards. Eq. 3: D(M, L) = mean over L of MRR(M) − MRR(teacher "
             "of the language), in MRR points (× 100) as the paper's Table 2; 0 means the multilingual model matches "
             "the monolingual teachers.",
             "Probes: a linear layer on the frozen last layer; in-language = trained and tested on the language "
             "(test split); zero-shot = trained on one language, tested on another"
             + (", every source-target pair of the set, as the paper's Table 3." if s.probe_from == "all" else
                " (here from the set's source language only; the paper's zero-shot numbers average every "
                "source-target pair of the set).")
             + " NER: token-level macro-F1 over the tag classes, the paper's metric (its footnote 6)."]
    return Report(f"Study {spec.name} ({spec.scale})", spec.description, tables, plots, notes)


class _Cell(Cell):
    def mean_std(self) -> tuple[float, float]:
        """Mean and std as displayed (times `scale`)."""
        return (self.mean * self.scale, self.std * self.scale) if self.values else (float("nan"), 0.0)


def _eq3_plot(lset, balance):
    """Eq. 3 per group and model, with the paper's Table 2 bars beside ours where it has them."""
    series = {v: [_eq3(balance, v, g).mean_std() for g in GROUPS] for v in VARIANTS}
    paper = load_published("lms2023")
    for v in VARIANTS:
        numbers = [paper.number("Table 2", f"{lset.paper}, {PAPER_GROUP[g]}", PAPER_MODEL[v]) for g in GROUPS]
        if all(n is not None for n in numbers):
            series[f"{v} (paper)"] = [(n.value, 0.0) for n in numbers]
    return bar_plot(f"Eq. 3 balance D(M, L), {lset.name}", f"eq3-{lset.name.replace(' ', '-')}", list(GROUPS),
                    series, "MRR(model) − MRR(teacher), points")


def _per_seed_mean(values: dict[tuple[int, str], float], langs: list[str], scale: float, digits: int) -> _Cell:
    """A cell of per-seed means over `langs` (seeds missing a language are left out)."""
    seeds = sorted({seed for seed, _ in values})
    out = [float(np.mean([values[(seed, l)] for l in langs])) for seed in seeds
           if langs and all((seed, l) in values for l in langs)]
    return _Cell(out, scale=scale, digits=digits)


def _eq3(balance, variant: str, group: str) -> _Cell:
    vals = [r.value for r in sorted(balance, key=lambda r: r.seed or 0) if r.metric == "eq3" and r.model == variant
            and r.extra.get("level") == "group" and r.test_lang == group]
    return _Cell(vals, scale=POINTS, digits=1)


def _mrr(balance, variant: str) -> dict[tuple[int, str], float]:
    return {(r.seed or 0, r.test_lang): r.value for r in balance if r.metric == "mlm_mrr" and r.model == variant}


def _mrr_table(lset, groups, balance, variants) -> Table:
    columns = ["model"] + [f"MRR {g}" for g in GROUPS] + [f"Eq. 3 {g}" for g in GROUPS]
    body = [["monolingual teachers"] + [_per_seed_mean(_mrr(balance, "teacher"), groups[g], 1, 3) for g in GROUPS]
            + ["0 (by definition)"] * 3]
    paper = load_published("lms2023")
    for v in variants:
        body.append([v] + [_per_seed_mean(_mrr(balance, v), groups[g], 1, 3) for g in GROUPS]
                    + [_eq3(balance, v, g) for g in GROUPS])
        body.append([f"{v} (paper)"] + ["—"] * len(GROUPS)
                    + [paper.cell("Table 2", f"{lset.paper}, {PAPER_GROUP[g]}", PAPER_MODEL[v]) for g in GROUPS])
    note = "; ".join(f"{g}: {', '.join(groups[g])}" for g in ("low", "high"))
    return Table(f"MLM MRR and Eq. 3 balance, {lset.name}", columns, body,
                 note=f"Mirrors the paper's Table 2 (Eq. 3 in MRR points; its MRR per group is only plotted, Figure "
                      f"1). Groups — {note}.")


def _language_table(lset, balance, variants) -> Table:
    columns = ["model"] + [f"{l.name} ({l.share}" + (f"; {l.paper})" if l.paper else ")") for l in lset.languages]
    body = [["teacher MRR"] + [_per_seed_mean(_mrr(balance, "teacher"), [l.name], 1, 3) for l in lset.languages]]
    paper = load_published("lms2023")
    for v in variants:
        eq3 = {(r.seed or 0, r.test_lang): r.value for r in balance if r.metric == "eq3" and r.model == v
               and r.extra.get("level") == "language"}
        body.append([f"{v}: Eq. 3"] + [_per_seed_mean(eq3, [l.name], POINTS, 1) for l in lset.languages])
        body.append([f"{v}: Eq. 3 (paper)"] + [paper.cell("Table 5", PAPER_MODEL[v], f"{lset.paper} script")
                                               if l.paper == "de" else "—" for l in lset.languages])
    return Table(f"Eq. 3 per language (MRR − teacher's MRR, points), {lset.name}", columns, body,
                 note="Column headers give each language's share of the full data (their Table 1 proportions) and "
                      "the paper's language it stands for. The paper prints Eq. 3 per language for German only "
                      "(Table 5); the others are only plotted (Figure 5).")


def _probe_table(lset, groups, task: str, probes, variants, all_sources: bool) -> Table:
    metric, metric_title = PROBE_METRIC[task]
    inlang: dict[str, dict] = defaultdict(dict)
    zero_pairs: dict[str, dict] = defaultdict(lambda: defaultdict(list))
    for job, rs in probes.items():
        v = job.tag("variant")
        for r in rs:
            if r.metric != metric or r.split != "test" or r.test_lang not in groups["all"]:
                continue
            key = (r.seed or 0, r.test_lang)
            if r.train_lang == r.test_lang:
                inlang[v][key] = r.value
            else:
                zero_pairs[v][key].append(r.value)
    # A target's zero-shot score is its mean over the sources probed (one, or every other language of the set).
    zero = {v: {key: float(np.mean(values)) for key, values in pairs.items()} for v, pairs in zero_pairs.items()}
    columns = ["model"] + [f"in-language {g}" for g in GROUPS] + [f"zero-shot {g}" for g in GROUPS]
    body = []
    paper, table = load_published("lms2023"), "Table 3a" if task == "upos" else "Table 3b"
    for v in variants:
        cells = [_per_seed_mean(inlang[v], [l for l in groups[g] if _any(inlang[v], l)], 100, 1)
                 for g in GROUPS]
        targets = zero.get(v, {})
        cells += [_per_seed_mean(targets, [l for l in groups[g] if _any(targets, l)], 100, 1) for g in GROUPS]
        body.append([v] + cells)
        body.append([f"{v} (paper)"] + [paper.cell(table, f"{lset.paper}, {PAPER_PROBE_GROUP[g]}",
                                                   f"{PAPER_PROBE_MODEL[v]} {how}") for how in ("I-L", "Z-S")
                                        for g in GROUPS])
    sources = "every language" if all_sources else lset.source
    title = f"{get_task(task).title} probe {metric_title}, {lset.name} (zero-shot from {sources})"
    return Table(title, columns, body,
                 note=f"Mirrors the paper's {table}. In-language columns average the languages that were probed "
                      "in-language; a zero-shot cell averages each target's mean over its sources.")


def _any(values: dict, lang: str) -> bool:
    return any(l == lang for _, l in values)


def _sweep_cell(sweep: MonolingualSweep, balance, label: str) -> _Cell:
    return _Cell([r.value for r in sorted(balance, key=lambda r: r.seed or 0) if r.metric == "mlm_mrr"
                  and r.model == label and r.test_lang == sweep.language], digits=3)


def _sweep_table(sweep: MonolingualSweep, balance) -> Table:
    """Appendix C: MRR of the swept language's models by corpus size, hard labels and each teacher's students."""
    columns = ["size (share)", "HL"] + [f"distilled from {t}" for t in sweep.teachers]
    body = [[str(size), _sweep_cell(sweep, balance, sweep_label(size))]
            + [_sweep_cell(sweep, balance, sweep_label(size, t)) if size <= t else "—" for t in sweep.teachers]
            for size in sweep.shares]
    return Table(f"Monolingual distillation by corpus size, {sweep.language} (Appendix C)", columns, body,
                 note="Mirrors the paper's Figure 3 (only plotted there): dev MLM MRR of hard-label models trained on "
                      "each size and of students distilled from the models of the teacher sizes on the same or a "
                      "smaller prefix of the teacher's data.")


def _sweep_plot(sweep: MonolingualSweep, balance):
    lines = {"HL": [(size, _sweep_cell(sweep, balance, sweep_label(size)).mean) for size in sweep.shares]}
    for t in sweep.teachers:
        lines[f"distilled from {t}"] = [(size, _sweep_cell(sweep, balance, sweep_label(size, t)).mean)
                                        for size in sweep.shares if size <= t]
    title = f"MRR by corpus size, {sweep.language} (Appendix C)"
    return Plot(title, line_png(title, lines, "training sentences (share points)", "dev MLM MRR"),
                f"appendix-c-{sweep.language}")
