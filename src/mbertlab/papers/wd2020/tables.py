"""Tables and figures of the `wd2020` design in the layout of Wu & Dredze 2020, from results.db only:
in-language scores by WikiSize group (mono / bilingual / mBERT), per language, Table 2 (regression),
Table 4 (variants), Fig. 3 (vocabulary coverage) and Fig. 4 (dev score per checkpoint). Rows labelled
"(paper)" hold the paper's own numbers (published.yaml) under ours."""
from __future__ import annotations

import math
from collections import defaultdict

import numpy as np

from mbertlab.report.render import Plot, Report
from mbertlab.report.tables import Cell, Table
from mbertlab.store.results import ResultRow
from mbertlab.studies.published import load_published
from mbertlab.studies.rows import StudyRows, values
from mbertlab.studies.spec import StudySpec
from mbertlab.transfer.task_table import get_task


def _metric(task: str) -> str:
    """The paper's metric: NER F1 after its repair of invalid I- starts (§3)."""
    return get_task(task).reported(repair=True)

ENCODER_NAMES = {"monolingual": "Monolingual BERT", "bilingual": "Bilingual BERT", "multilingual": "mBERT",
                 "baseline": "Baseline (word2vec + BiLSTM)"}
# The paper's Table 4 languages and its column of each task; Table 2's names of our regression factors.
PAPER_LANGUAGES = ("lv", "af", "mn", "yo")
PAPER_TASK_COLUMN = {"ner": "NER", "upos": "POS", "parse": "LAS"}
PAPER_FACTORS = {"log2:train_sentences": "Training Size", "wikisize": "WikiSize", "log2:train_vocab": "Training Vocab"}
PAPER_PAIRS = {"lv": "lt", "af": "nl"}


def wd2020_report(spec: StudySpec, store, results) -> Report:
    from mbertlab.studies.runner import study_jobs

    s = spec.settings
    data = StudyRows.load(study_jobs(spec), store, results)
    sizes = _sizes(data)
    tables = [_sizes_table(s, sizes)]
    tables += [_group_table(s, data, sizes, task) for task in s.tasks]
    tables.append(_language_table(s, data, sizes))
    if s.regression:
        tables.append(_regression_table(s, data))
    tables.append(_variants_table(s, data))
    plots = []
    if s.vocab_curves:
        tables += [_vocab_above_table(data), _vocab_table(data)]
        plots += [_vocab_above_plot(s, data), _vocab_plot(s, data)]
    if s.curve:
        table, plot = _checkpoint_table(s, data)
        tables += [table, _best_checkpoint_table(s, data)]
        plots.append(plot)
    notes = [f"Mean ± sample std over seeds {s.seeds} (and over the group's languages where a cell pools "
             "several). WikiSize = log2 of the language's pretraining text in MB, measured by the study's corpus "
             "stage; scores are in-language test scores (fine-tuned and tested on the same language) in %.",
             "Rows labelled '(paper)' are Wu & Dredze 2020's own numbers (src/mbertlab/papers/wd2020/"
             "published.yaml), on real languages (lv, af, mn, yo; Google's mBERT); the study's languages are its "
             "own, so compare directions, not values. Figures 1–4 of the paper give no numbers in the text."]
    return Report(f"Study {spec.name} ({spec.scale})", spec.description, tables, plots, notes)


def _sizes(data: StudyRows) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for _, r in data.tagged("wd2020_sizes"):
        out[r.test_lang][f"{r.metric}:{r.task}" if r.task else r.metric] = r.value
    return out


def group_of(wikisize: float | None, bins: list[float], resource: str) -> str:
    """The WikiSize group label of a language (its resource role when no bins are given)."""
    if not bins:
        return resource
    if wikisize is None:
        return "unknown"
    edges = sorted(bins)
    if wikisize <= edges[0]:
        return f"≤ {edges[0]:g}"
    for lo, hi in zip(edges, edges[1:]):
        if wikisize <= hi:
            return f"({lo:g}, {hi:g}]"
    return f"> {edges[-1]:g}"


def _groups(s, sizes) -> dict[str, list]:
    groups: dict[str, list] = defaultdict(list)
    for lang in sorted(s.languages, key=lambda l: sizes.get(l.name, {}).get("wikisize", math.inf)):
        groups[group_of(sizes.get(lang.name, {}).get("wikisize"), s.wikisize_bins, lang.resource)].append(lang)
    return groups


def mixed_groups(s, sizes) -> list[str]:
    """The WikiSize groups that hold languages of different resource roles: bins set for one scale's text sizes
    (the lab's) put every language of another scale in one group, and the group table then compares nothing."""
    return [g for g, langs in _groups(s, sizes).items() if len({l.resource for l in langs}) > 1]


def _sizes_table(s, sizes) -> Table:
    columns = ["language", "role", "paired with", "sentences", "MB", "WikiSize"] + \
              [f"{get_task(t).title} train sentences" for t in s.tasks]
    body = []
    for lang in s.languages:
        z = sizes.get(lang.name, {})
        fmt = lambda k, d=0: f"{z[k]:.{d}f}" if k in z else "—"  # noqa: E731
        body.append([lang.name, lang.resource, lang.related or "", fmt("sentences"), fmt("mb", 3),
                     fmt("wikisize", 2)] + [fmt(f"train_sentences:{t}") for t in s.tasks])
    paper = load_published("wd2020")
    for lang in PAPER_LANGUAGES:
        sentences = paper.number("Table 3", "# Sentences (M)", lang)
        body.append([f"{lang} (paper)", "low", PAPER_PAIRS.get(lang, ""),
                     f"{sentences.value:g}M" if sentences else "—", "—", paper.cell("Table 3", "WikiSize", lang)]
                    + ["—" for _ in s.tasks])
    return Table("Languages: pretraining text and WikiSize (log2 MB), as measured (Table 3: the paper's four "
                 "low-resource languages, WikiSize of their Wikipedia dump)", columns, body)


def _cell(values: list[float]) -> Cell:
    return Cell(values, scale=100.0, digits=1)


def _scores(data: StudyRows, metric: str, **tags: str) -> list[float]:
    """The in-language test scores of the transfer jobs with these tags."""
    return values(data.select("transfer", **tags), metric, split="test")


def _encoders(s) -> tuple[str, ...]:
    """The table columns' encoders: the three BERTs, and the non-BERT baseline where the study runs it."""
    return ("monolingual", "bilingual", "multilingual") + (("baseline",) if s.baseline is not None else ())


def _group_table(s, data: StudyRows, sizes, task: str) -> Table:
    metric, name = _metric(task), get_task(task).title
    base = s.variants[0].name
    columns = ["WikiSize", "languages"] + [ENCODER_NAMES[e] for e in _encoders(s)]
    body = []
    for group, langs in _groups(s, sizes).items():
        cells = []
        for enc in _encoders(s):
            vals = [v for l in langs
                    for v in _scores(data, metric, encoder=enc, variant=base, lang=l.name, task=task)]
            cells.append(_cell(vals))
        body.append([group, ", ".join(l.name for l in langs)] + cells)
    mixed = mixed_groups(s, sizes)
    note = (f"wikisize_bins {s.wikisize_bins} put languages of different resource roles in one group "
            f"({'; '.join(mixed)}): the groups do not separate high from low resource. Set the edges between the "
            "measured WikiSizes of the languages table." if mixed else "")
    return Table(f"{name}: in-language {metric} by WikiSize group (base encoders; mirrors Fig. 1, whose values the "
                 "paper only plots)", columns, body, note)


def _language_table(s, data: StudyRows, sizes) -> Table:
    base = s.variants[0].name
    encs = _encoders(s)
    columns = ["language", "role", "WikiSize"]
    columns += [f"{get_task(t).title}: {ENCODER_NAMES[e]}" for t in s.tasks for e in encs]
    body = []
    for lang in sorted(s.languages, key=lambda l: -sizes.get(l.name, {}).get("wikisize", -math.inf)):
        z = sizes.get(lang.name, {})
        body.append([lang.name, lang.resource, f"{z['wikisize']:.2f}" if "wikisize" in z else "—"] +
                    [_cell(_scores(data, _metric(t), encoder=e, variant=base, lang=lang.name, task=t))
                     for t in s.tasks for e in encs])
    return Table("In-language test scores per language (base encoders; mirrors Fig. 2, whose values the paper "
                 "only plots)", columns, body)


def _regression_table(s, data: StudyRows) -> Table:
    columns = ["task", "factor", "coef (univariate)", "p (univariate)", "R² (univariate)", "coef (multivariate)",
               "p (multivariate)", "R² (multivariate)", "n"]
    body = []
    for task in s.tasks:
        rows = [r for _, r in data.tagged("wd2020_regress", task=task)]
        if not rows:
            continue
        for factor in s.regression.factors:
            uni, multi = _fit_row(rows, f"coef:{factor}", factor), _fit_row(rows, f"coef:{factor}")
            r2u, r2m = _fit_row(rows, "r2", factor), _fit_row(rows, "r2") if multi else None
            body.append([get_task(task).title, factor, _num(uni), _num(uni, "p_value"), _num(r2u), _num(multi),
                         _num(multi, "p_value"), _num(r2m), str(uni.extra["nobs"]) if uni else "—"])
            if task == "ner" and factor in PAPER_FACTORS:
                body.append(_paper_fit_row(PAPER_FACTORS[factor], factor))
        for nested in s.regression.nested:
            test = next((r for r in rows if r.metric == "lr_test" and r.extra.get("full") == nested.full
                         and r.extra.get("restricted") == nested.restricted), None)
            added = " + ".join(f for f in nested.full if f not in nested.restricted)
            body.append([get_task(task).title, f"LR test: + {added} over {' + '.join(nested.restricted)}",
                         _num(test), _num(test, "p_value"), "", "", "", "", str(test.extra["df"]) + " df" if test
                         else "—"])
    return Table(f"Table 2: OLS of in-language {s.regression.encoder} scores (0–1) on resource factors", columns,
                 body,
                 note="Univariate: one fit per factor; multivariate: "
                 f"{' + '.join(s.regression.multivariate or s.regression.factors)} together (the paper leaves "
                 "training vocabulary out: it adds nothing to training size by a likelihood-ratio test, whose "
                 "statistic and p our 'LR test' rows give). Factors are rows written by the sizes stage (WikiSize "
                 "from the corpus statistics, task training sentences and their word types counted in the task "
                 "files), scores are the transfer rows of every language and seed. '(paper)' rows: the paper's "
                 "Table 2 (NER F1 of mBERT on 99 languages; coefficient [95% CI], p as printed).")


def _paper_fit_row(name: str, factor: str) -> list[str]:
    """The paper's Table 2 numbers of one factor, in the columns of ours (it gives no R² or n)."""
    paper = load_published("wd2020")

    def coef(fit: str) -> str:
        row = f"{fit}: {name}"
        if paper.number("Table 2", row, "Coefficient") is None:
            return "—"
        lo, hi = paper.cell("Table 2", row, "CI low"), paper.cell("Table 2", row, "CI high")
        return f"{paper.cell('Table 2', row, 'Coefficient')} [{lo}, {hi}]"

    def p(fit: str) -> str:
        n = paper.number("Table 2", f"{fit}: {name}", "p-value")
        return "—" if n is None else ("<" if n.unit == "p (upper bound)" else "") + n.text()

    return ["NER (paper)", factor, coef("Univariate"), p("Univariate"), "—",
            coef("Multivariate"), p("Multivariate"), "—", "—"]


def _fit_row(rows: list[ResultRow], metric: str, factor: str | None = None) -> ResultRow | None:
    """The univariate fit's row of `factor`, or the multivariate fit's row when no factor is given."""
    for r in rows:
        if r.metric == metric and (r.mode == "univariate" and r.extra.get("factors") == [factor]
                                   if factor else r.mode == "multivariate"):
            return r
    return None


def _num(row: ResultRow | None, key: str = "value") -> str:
    return "—" if row is None else f"{(row.value if key == 'value' else row.extra[key]):.3g}"


def table4_columns(s) -> list[tuple[str, str, str, str]]:
    """(task, metric, our column, the paper's column suffix) of Table 4: each task's reported metric, and UAS
    beside LAS for parsing, as the paper prints both."""
    columns = [(t, _metric(t), get_task(t).title, PAPER_TASK_COLUMN[t]) for t in s.tasks]
    if "parse" in s.tasks:
        columns.insert([c[0] for c in columns].index("parse") + 1, ("parse", "uas_nopunct", "Parsing (UAS)", "UAS"))
    return columns


def _variants_table(s, data: StudyRows) -> Table:
    low = [l.name for l in s.languages if l.resource == "low"]
    table4 = table4_columns(s)
    columns = ["model", "variant"] + [title for _, _, title, _ in table4]
    body = [_paper_variant_row(s, "Baseline", "Baseline", "")]
    body += [["mBERT", s.variants[0].name] +
             [_cell([v for l in low for v in _scores(data, m, encoder="multilingual", lang=l, task=t)])
              for t, m, _, _ in table4], _paper_variant_row(s, "mBERT", "mBERT", s.variants[0].name)]
    for enc in ("monolingual", "bilingual"):
        for variant in s.variants:
            if variant is not s.variants[0] and enc not in variant.encoders:
                continue
            body.append([ENCODER_NAMES[enc], variant.name] +
                        [_cell([v for l in low for v in _scores(data, m, encoder=enc, variant=variant.name,
                                                                lang=l, task=t)])
                         for t, m, _, _ in table4])
            paper_row = f"{ENCODER_NAMES[enc]} {variant.name}"
            if paper_row in load_published("wd2020").rows("Table 4"):
                body.append(_paper_variant_row(s, paper_row, ENCODER_NAMES[enc], variant.name))
    return Table(f"Table 4: low-resource languages ({', '.join(low)}), in-language test scores by model variant",
                 columns, body, note="Variants change the model shape, the tokenizer's vocabulary or the "
                 "pretraining sequence length, scaled from the paper's base / small / vocab 10k / seq 128. "
                 "'(paper)' rows: the paper's Table 4 per language (Parsing: LAS, then UAS; bilingual: lv + lt, "
                 "af + nl; the Baseline row is the paper's; ours is in the group tables).")


def _paper_variant_row(s, row: str, model: str, variant: str) -> list[str]:
    """The paper's Table 4 row in our columns: each task's score per paper language that has one."""
    paper = load_published("wd2020")
    cells = []
    for _, _, _, column in table4_columns(s):
        found = [(lang, paper.number("Table 4", row, f"{lang} {column}")) for lang in PAPER_LANGUAGES]
        cells.append(" · ".join(f"{lang} {n.value:.2f}" for lang, n in found if n is not None and n.value is not None)
                     or "—")  # Table 4 prints two decimals
    return [f"{model} (paper)", variant] + cells


ABOVE_COLUMNS = (0, 1, 10, 100, 1000)  # thresholds shown in the table (the plot has every recorded one)


def _vocab_above(data: StudyRows) -> dict[tuple, dict[int, float]]:
    """{(vocabulary label, variant, language): {threshold: share}} from the vocab_curve stages' rows."""
    out: dict[tuple, dict[int, float]] = defaultdict(dict)
    for job, r in data.tagged("vocab_curve"):
        if r.metric == "vocab_above":
            langs = "+".join(r.extra.get("languages", []))
            name = "Raw (space-separated words)" if r.extra["vocabulary"] == "raw" else \
                f"{ENCODER_NAMES.get(job.tag('encoder'), job.tag('encoder'))}: {langs}"
            out[(name, job.tag("variant"), r.test_lang)][int(r.extra["threshold"])] = r.value
    return out


def _vocab_above_table(data: StudyRows) -> Table:
    columns = ["vocabulary", "variant", "language"] + [f"count > {t}" for t in ABOVE_COLUMNS]
    body = [[name, variant, lang] + [f"{100 * shares[t]:.1f}" if t in shares else "—" for t in ABOVE_COLUMNS]
            for (name, variant, lang), shares in sorted(_vocab_above(data).items())]
    title = "Fig. 3: % of each vocabulary whose count in the language's training text exceeds a threshold"
    return Table(title, columns, body, note="The paper's statistic: for each vocabulary (the tokenizer of each "
                 "encoder, and 'Raw', the language's own space-separated word types), the share of its items seen "
                 "more than t times in the language's training text. A language that a shared vocabulary serves "
                 "poorly uses few of its items. The paper gives the curves only in the figure.")


def _vocab_above_plot(s, data: StudyRows) -> Plot:
    from mbertlab.report.plots import line_png

    base = s.variants[0].name
    lines = {f"{lang}: {name}": sorted((t, 100 * v) for t, v in shares.items() if t > 0)
             for (name, variant, lang), shares in sorted(_vocab_above(data).items()) if variant == base}
    return Plot("Fig. 3: vocabulary above a count threshold", line_png(
        "Share of the vocabulary above a count", lines, "count threshold in the language's training text",
        "% of the vocabulary", logx=True), "fig3-vocab-above")


def _vocab_table(data: StudyRows) -> Table:
    columns = ["tokenizer (encoder: languages)", "variant", "language", "vocabulary", "items used",
               "items for 50%", "items for 90%", "items for 95%"]
    by_key: dict[tuple, dict[str, float]] = defaultdict(dict)
    for job, r in data.tagged("vocab_curve"):
        if r.metric != "coverage":
            langs = "+".join(r.extra.get("languages", []))
            by_key[(job.tag("encoder"), job.tag("variant"), langs, r.test_lang)][r.metric] = r.value
    body = []
    for (enc, variant, langs, lang), m in sorted(by_key.items()):
        body.append([f"{ENCODER_NAMES.get(enc, enc)}: {langs}", variant, lang] +
                    [f"{m[k]:.0f}" if k in m else "—" for k in ("vocab_size", "types_used", "types_for_50",
                                                               "types_for_90", "types_for_95")])
    return Table("Vocabulary items that cover each language's tokens (ours, beside Fig. 3)", columns, body,
                 note="Items ranked by frequency within the language's training tokens; 'items for 90%' = how many "
                 "of the most frequent items cover 90% of its tokens.")


def _vocab_plot(s, data: StudyRows) -> Plot:
    from mbertlab.report.plots import coverage_png

    base = s.variants[0].name
    curves: dict[str, list[tuple[int, float]]] = {}
    for enc in ("multilingual", "monolingual"):
        points: dict[str, list[tuple[int, float]]] = defaultdict(list)
        for job, r in data.tagged("vocab_curve", encoder=enc, variant=base):
            if r.metric == "coverage":
                points[r.test_lang].append((int(r.extra["rank"]), r.value))
        for lang, pts in sorted(points.items()):
            curves[f"{lang} ({ENCODER_NAMES[enc]})"] = sorted(pts)
    return Plot("Token coverage by vocabulary rank (ours, beside Fig. 3)",
                coverage_png("Token coverage by vocabulary rank", curves), "fig3-vocab")


def _dev_or_test(scores: list[tuple[str, float]]) -> list[float]:
    """The dev scores of a checkpoint's fine-tunings, or test where the task data has no dev file."""
    return [v for sp, v in scores if sp == "dev"] or [v for sp, v in scores if sp == "test"]


def _checkpoint_series(s, data: StudyRows) -> dict[tuple[str, str], dict[int, list[tuple[str, float]]]]:
    """{(encoder, language): {step: [(split, score)]}} of the fine-tuned checkpoints (Fig. 4's stages)."""
    metric = _metric(s.curve.task)
    series: dict[tuple[str, str], dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for job, r in data.tagged("wd2020_checkpoint"):
        if r.metric == metric and r.test_lang == job.tag("lang"):
            series[(job.tag("encoder"), job.tag("lang"))][int(job.tag("step"))].append((r.split, r.value))
    return series


def _best_checkpoint_table(s, data: StudyRows) -> Table:
    """The paper's selection (§3.3: "the best out of five checkpoints with a task-specific dev set") beside the
    final checkpoint the other tables use, where Fig. 4's stages fine-tuned every checkpoint."""
    name = get_task(s.curve.task).title
    body = []
    for (enc, lang), per in sorted(_checkpoint_series(s, data).items()):
        dev = {st: [v for sp, v in scores if sp == "dev"] for st, scores in per.items()}
        test = {st: [v for sp, v in scores if sp == "test"] for st, scores in per.items()}
        if not all(dev.values()) or not all(test.values()):
            continue  # no dev file to select on, or no test score: nothing to compare
        best, final = max(dev, key=lambda st: float(np.mean(dev[st]))), max(per)
        gain = 100 * (float(np.mean(test[best])) - float(np.mean(test[final])))
        body.append([ENCODER_NAMES[enc], lang, f"{best} of {len(per)}", _cell(test[best]), _cell(test[final]),
                     f"{gain:+.1f}"])
    return Table(f"{name} test score of the dev-selected checkpoint (the paper's protocol) vs the final one (first "
                 "seed, base encoders)", ["encoder", "language", "selected step", "test, selected", "test, final",
                                          "selected − final"], body,
                 note="The checkpoints Fig. 4 fine-tunes; the other tables use the final checkpoint of every seed.")


def _checkpoint_table(s, data: StudyRows) -> tuple[Table, Plot]:
    from mbertlab.report.plots import line_png

    metric, name = _metric(s.curve.task), get_task(s.curve.task).title
    series = _checkpoint_series(s, data)
    steps = sorted({st for per in series.values() for st in per})
    columns = ["encoder", "language"] + [f"step {st}" for st in steps]
    body, lines = [], {}
    for (enc, lang), per in sorted(series.items()):
        body.append([ENCODER_NAMES[enc], lang] + [_cell(_dev_or_test(per.get(st, []))) for st in steps])
        lines[f"{lang} ({ENCODER_NAMES[enc]})"] = [(st, 100 * float(np.mean(_dev_or_test(per[st]))))
                                                   for st in steps if _dev_or_test(per.get(st, []))]
    table = Table(f"Fig. 4: dev {name} ({metric}) of low-resource languages after fine-tuning each saved "
                  "pretraining checkpoint (first seed, base encoders)", columns, body,
                  note="Dev split where the task data has one, else test. The paper's Fig. 4 (dev score by "
                  "pretraining epoch of lv, af, mn) gives no numbers in the text.")
    plot = line_png(f"{name} by pretraining step", lines, "pretraining step", f"dev {metric} (%)")
    return table, Plot(f"Fig. 4: {name} by pretraining step", plot, "fig4-checkpoints")
