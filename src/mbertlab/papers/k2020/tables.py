"""Tables of the `k2020` design, in the layout of K et al. 2020, from results.db: one table per task
over every condition, then the spec's factor tables (a factor's levels as rows; source score, target score
and Δ per task), each with the paper's rows under ours where the spec names them (published.yaml), and XNLI
with premise and hypothesis in different languages beside the paper's Table 11."""
from __future__ import annotations

import math

import numpy as np

from mbertlab.report.plots import bar_plot
from mbertlab.report.render import Report
from mbertlab.report.tables import Table, delta
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.papers.k2020.design import (condition_languages, has_retrieval, mixed_lang, setting_value,
                                          source_of, tested_language)
from mbertlab.studies.published import Published, load_published
from mbertlab.studies.rows import StudyRows, cell, lang_cell
from mbertlab.studies.spec import StudySpec
from mbertlab.transfer.task_table import get_task



def headline(task: str) -> str:
    """A task's score as the tables name it, e.g. 'NER entity F1'."""
    return f"{get_task(task).title} {get_task(task).metric_title}"



def conditions_report(spec: StudySpec, store: ArtifactStore, results: ResultsDB) -> Report:
    s = spec.settings
    # the planned jobs, not the de-duplicated DAG: a job two conditions share (the majority tag of one
    # target) is looked up once per condition, with that condition's tags
    from mbertlab.studies.runner import placed_plan

    rows = StudyRows.load(placed_plan(spec), store, results)  # placed: a pinned precision is in the hashes
    published = load_published(spec.design)
    tables, plots = [], []
    for task in all_tasks(s):
        conditions = [c for c in s.conditions if task in condition_tasks(s, c)]
        table, series = _task_table(s, task, conditions, rows)
        paper = [_paper_target(s, published, c.name, task) for c in conditions]
        if any(v == v for v, _ in paper):  # NaN (no paper row) draws no bar
            series["paper (mean of its targets)"] = paper
        tables.append(table)
        plots.append(bar_plot(f"{headline(task)}: zero-shot from {sources(s, conditions)}", f"{task}-zero-shot",
                              [c.name for c in conditions], series, headline(task)))
    if any(has_retrieval(s, c) for c in s.conditions):
        tables.append(_retrieval_table(s, rows))
    tables += [_factor_table(s, table, rows, published) for table in s.tables]
    mixed = [c for c in s.conditions if c.mixed_pairs]
    if mixed:
        tables.append(_mixed_pairs_table(s, mixed, rows, published))
    own = "".join(f"; {c.name}: {c.seeds}" for c in s.conditions if c.seeds)
    notes = [f"Mean ± sample std over seeds {s.seeds}{own}; Δ = source − target per seed. "
             "'random init' fine-tunes an encoder with the same shape and fresh weights; 'majority' "
             "tags every token with the most frequent source-training tag."]
    return Report(f"Study {spec.name} ({spec.scale})", spec.description, tables, plots, notes)



def sources(s, conditions) -> str:
    """The source languages of `conditions`, e.g. 'en' or 'en / fake_en'."""
    return " / ".join(dict.fromkeys(source_of(s, c) for c in conditions))


def source_header(s, conditions) -> str:
    """'source (en)' where the conditions share a source; 'source' where the rows name theirs."""
    return f"source ({sources(s, conditions)})" if len({source_of(s, c) for c in conditions}) == 1 else "source"


def condition_tasks(s, cond) -> list[str]:
    return s.tasks if cond.tasks is None else cond.tasks


def all_tasks(s, conditions=None) -> list[str]:
    """The tasks of the spec and of its conditions (or of the given ones), in order of appearance."""
    if conditions is None:
        return list(dict.fromkeys([*s.tasks, *(t for c in s.conditions for t in condition_tasks(s, c))]))
    return list(dict.fromkeys(t for c in conditions for t in condition_tasks(s, c)))


def _task_table(s, task: str, conditions, rows) -> tuple[Table, dict]:
    metric, title = get_task(task).metric, headline(task)
    columns = ["condition", "target", source_header(s, conditions), "zero-shot target", "Δ",
               "random init: target", "majority: target"]
    body, series = [], {"pretrained": [], "random init": [], "majority": []}
    for cond in conditions:
        trained = rows.select("transfer", condition=cond.name, control="pretrained", task=task)
        random_ = rows.select("transfer", condition=cond.name, control="random_init", task=task)
        majority = rows.select("transfer", condition=cond.name, control="majority", task=task)
        target = tested_language(cond)
        src, tgt = lang_cell(trained, metric, source_of(s, cond)), lang_cell(trained, metric, target)
        rnd, maj = lang_cell(random_, metric, target), lang_cell(majority, metric, target)
        body.append([cond.name, target, src, tgt, delta(src, tgt), rnd, maj])
        for name, shown in (("pretrained", tgt), ("random init", rnd), ("majority", maj)):
            series[name].append((shown.mean * 100 if shown.values else 0.0, shown.std * 100))
    return Table(f"{title} (%): fine-tuned on {sources(s, conditions)}, tested zero-shot", columns, body), series


def _paper_target(s, published: Published | None, condition: str, task: str) -> tuple[float, float]:
    """Mean and std of the paper's target scores for a condition, for the plots: the rows that the first
    factor table naming paper rows under it gives (its es / hi / ru); NaN where the paper has none."""
    key = f"{task}.target"
    for table in s.tables:
        if published is None or table.paper is None or key not in table.paper.columns:
            continue
        for row in table.rows:
            numbers = [published.number(table.paper.table, label, table.paper.columns[key]) for label in row.paper]
            values = [n.value for n in numbers if n is not None and n.value is not None]
            if row.condition == condition and values:
                mean = sum(values) / len(values)
                var = sum((v - mean) ** 2 for v in values) / (len(values) - 1) if len(values) > 1 else 0.0
                return mean, math.sqrt(var)
    return math.nan, 0.0


def _retrieval_table(s, rows) -> Table:
    columns = ["condition", "target", "MRR (pretrained)", "MRR (random init)", "P@1 (pretrained)"]
    body = []
    for cond in [c for c in s.conditions if has_retrieval(s, c)]:
        trained = rows.select("retrieval", condition=cond.name, control="pretrained")
        random_ = rows.select("retrieval", condition=cond.name, control="random_init")
        body.append([cond.name, cond.target, cell(trained, "mrr", 1.0, 3), cell(random_, "mrr", 1.0, 3),
                     cell(trained, "p@1")])
    return Table(f"Word retrieval {s.source} → target with contextual vectors and the gold lexicon", columns, body,
                 note="Mean reciprocal rank of the gold translation among all target words of the lexicon.")


def _factor_table(s, spec_table, rows, published: Published | None) -> Table:
    """K et al.'s layout: one row per level of the factor; per task the source score, the target score, Δ;
    under a row, the paper's rows it stands for (labelled '<level> (paper)')."""
    conditions = {c.name: c for c in s.conditions}
    listed = [conditions[r.condition] for r in spec_table.rows]
    tasks = all_tasks(s, listed)
    # the cells per task: (column key in paper.columns, header suffix, language or None for Δ)
    if spec_table.per_language:
        langs = condition_languages(s, conditions[spec_table.rows[0].condition], tested=True)
        parts = [(lang, lang, lang) for lang in langs]
    else:
        parts = [("source", source_header(s, listed), "source"), ("target", "target", "target"), ("delta", "Δ", None)]
    columns = [spec_table.factor, "condition", "target"]
    for task in tasks:
        columns += [f"{get_task(task).title} {header}" for _, header, _ in parts]
    body, points = [], []
    for row in spec_table.rows:
        cond = conditions[row.condition]
        level = row.level if row.level is not None else setting_value(s, cond, spec_table.key)
        line: list = [level, cond.name, tested_language(cond)]
        for task in tasks:
            trained = rows.select("transfer", condition=cond.name, control="pretrained", task=task)
            named = {"source": source_of(s, cond), "target": tested_language(cond)}
            cells = [lang_cell(trained, get_task(task).metric, named.get(lang, lang))
                     for _, _, lang in parts if lang is not None]
            line += cells if spec_table.per_language else [*cells, delta(*cells)]
            if task == spec_table.correlate and len(cells[0].values) == len(cells[1].values):
                points += zip(cells[0].values, delta(*cells).values)
        body.append(line)
        body += _paper_lines(spec_table, row, level, tasks, [key for key, _, _ in parts], published)
    metrics = ", ".join(headline(t) for t in tasks)
    paper = spec_table.paper
    mirrors = f" Rows '(paper)': the paper's {paper.table} (its row in the condition column)." if paper else ""
    scores = "every language but the source tested zero-shot" if spec_table.per_language else \
        "target tested zero-shot; Δ = source − target per seed"
    correlation = _correlation_note(spec_table, points, published) if spec_table.correlate else ""
    return Table(spec_table.title, columns, body, note=f"Scores in % ({metrics}); fine-tuned on "
                 f"{sources(s, listed)}, {scores}.{mirrors}{correlation}")


def _correlation_note(spec_table, points: list[tuple[float, float]], published: Published | None) -> str:
    """Pearson's r between the source score and Δ over our (row, seed) points and over the paper's rows."""
    from mbertlab.analysis.correlate import pearson_r

    def r(pairs) -> str:
        if len(pairs) < 3:
            return "— (fewer than 3 points)"
        value = pearson_r(*(np.asarray(side, dtype=float) for side in zip(*pairs)))
        return "— (undefined: one side is constant)" if math.isnan(value) else f"{value:+.2f}"

    task, paper = spec_table.correlate, spec_table.paper
    note = f" Pearson's r between the {get_task(task).title} source score and Δ: ours {r(points)} over " \
           f"{len(points)} (row, seed) points"
    keys = (f"{task}.source", f"{task}.delta")
    if paper is None or published is None or not all(k in paper.columns for k in keys):
        return note + "."
    numbers = [[published.number(paper.table, label, paper.columns[k]) for k in keys]
               for row in spec_table.rows for label in row.paper]
    pairs = [(a.value, b.value) for a, b in numbers if all(n is not None and n.value is not None for n in (a, b))]
    return note + f"; the paper's {paper.table} rows under them: {r(pairs)} over {len(pairs)} rows."


def _paper_lines(spec_table, row, level: str, tasks: list[str], parts: list[str],
                 published: Published | None) -> list[list[str]]:
    """The paper's rows under one of ours: its cell per task and part (source, target, Δ or a language;
    '—' where none)."""
    paper = spec_table.paper
    if paper is None or published is None:
        return []
    lines = []
    for label in row.paper:
        line = [f"{level} (paper)", label, "—"]
        for task in tasks:
            line += [published.cell(paper.table, label, paper.columns[key])
                     if (key := f"{task}.{part}") in paper.columns else "—" for part in parts]
        lines.append(line)
    return lines


# K et al.'s Table 11: which of its columns matches (premise, hypothesis) in (source, target); their
# B-BERTs are trained on Fake-English, so our source stands where their Fake-English does
PAPER_MIXED = {("source", "source"): "enfake-enfake", ("target", "target"): "target-target",
               ("source", "target"): "enfake-target", ("target", "source"): "target-enfake"}
PAPER_MIXED_ROWS = ("enfake-es", "enfake-hi", "enfake-ru")


def _mixed_pairs_table(s, conditions, rows, published: Published | None) -> Table:
    """XNLI accuracy with the premise and the hypothesis each in the source or the target language, beside
    the paper's Table 11 (its es / hi / ru targets in one cell)."""
    random_init = any("random_init" in (s.controls if c.controls is None else c.controls) for c in conditions)
    columns = ["condition", "premise", "hypothesis", "XNLI accuracy"] + (["random init"] if random_init else [])
    columns += ["paper: es / hi / ru"] if published is not None else []
    body = []
    for cond in conditions:
        trained = rows.select("transfer", condition=cond.name, control="pretrained", task="xnli")
        random_ = rows.select("transfer", condition=cond.name, control="random_init", task="xnli")
        src, tgt = source_of(s, cond), tested_language(cond)
        for sides in PAPER_MIXED:
            premise, hypothesis = (src if side == "source" else tgt for side in sides)
            lang = premise if premise == hypothesis else mixed_lang(premise, hypothesis)
            line = [cond.name, premise, hypothesis, lang_cell(trained, "accuracy", lang)]
            line += [lang_cell(random_, "accuracy", lang)] if random_init else []
            line += [" / ".join(published.cell("Table 11", r, PAPER_MIXED[sides]) for r in PAPER_MIXED_ROWS)] \
                if published is not None else []
            body.append(line)
    return Table(f"XNLI with premise and hypothesis in different languages (fine-tuned on {sources(s, conditions)} "
                 "pairs)",
                 columns, body, note="The parallel test sets: the same examples, premise from one language's "
                                     "file and hypothesis from the other's. Paper: Table 11 (trained on "
                                     "Fake-English, our source's place; targets es / hi / ru).")
