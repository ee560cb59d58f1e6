"""Tables of the `wd2019` design from results.db, in the layout of Wu & Dredze 2019: zero-shot scores per
task and language (their Tables 2-6), the transfer strategies (fine-tune all / freeze / feature-based, their
Fig. 1), parsing with and without gold UPOS (Table 6), language ID by layer (Fig. 2), and subword overlap
against zero-shot scores with Pearson's r (Fig. 3). The paper's mBERT numbers (papers/wd2019/published.yaml)
stand in "(paper)" rows under ours: its English column under our source, its Average under our avg, and a
target's own column when the study's languages are real ones the paper has."""
from __future__ import annotations

from mbertlab.analysis.overlap import OVERLAPS
from mbertlab.report.render import Plot, Report
from mbertlab.report.tables import Cell, Table, delta
from mbertlab.papers.wd2019.design import (FEATURE, FINETUNE_ALL, IN_LANGUAGE, encoder_depth, freeze_label,
                                           freeze_levels, study_languages)
from mbertlab.studies.published import load_published
from mbertlab.studies.rows import StudyRows, cell, lang_cell
from mbertlab.studies.spec import StudySpec
from mbertlab.transfer.task_table import get_task

SOURCE_NOTE = "selected on the source dev set (no target data)"
ZERO_SHOT = "Zero-shot cross-lingual transfer: mBERT"
IN_LANGUAGE_ROW = "In language supervised learning: mBERT"  # Tables 2, 4, 5; Table 6 has a column, mBERT(S)
# task -> (the paper's table, its Average column); Table 6 has a row per language and a column per model
PAPER_TABLE = {"mldoc": ("Table 2", "Average"), "xnli": ("Table 3", "Average"), "ner": ("Table 4", "Average (-en,-zh)"),
               "upos": ("Table 5", "Average (-en)"), "parse": ("Table 6", "AVER")}
PAPER_NOTE = ("'(paper)' rows: Wu & Dredze 2019's mBERT on real languages (English source; its Average column, "
              "which includes en for MLDoc, XNLI and parsing, leaves out en for POS and en and zh for NER); "
              "generated targets have no counterpart in the paper (—).")


def paper_cell(task: str, lang: str, source: str, model: str = "mBERT(Z) LAS", in_language: bool = False) -> str:
    """The paper's number for one of our cells: our source is its English, our avg its Average column, a real
    target its own column; '—' where the paper has none. `model`: Table 6's column for parsing (its supervised
    column, mBERT(S), with `in_language`)."""
    table, average = PAPER_TABLE[task]
    column = "en" if lang == source else average if lang == "avg" else lang
    published = load_published("wd2019")
    if task == "parse":  # Table 6 stars the languages whose baseline is delexicalised (zh*, ja*)
        row, model = "AVER" if lang == "avg" else column, "mBERT(S) LAS" if in_language else model
        return next((c for c in (published.cell(table, r, model) for r in (row, row + "*")) if c != "—"), "—")
    return published.cell(table, IN_LANGUAGE_ROW if in_language else ZERO_SHOT, column)


def wd2019_report(spec: StudySpec, store, results) -> Report:
    s = spec.settings
    from mbertlab.studies.runner import placed_plan

    rows = StudyRows.load(placed_plan(spec), store, results)  # placed: a pinned precision is in the hashes
    _, targets = study_languages(spec, next(j for j in rows.jobs if j.kind == "transfer").inputs[-1])
    ctx = (s, rows, targets, {t: get_task(t).reported(repair=True) for t in s.tasks})
    tables, plots = [_zero_shot_table(*ctx, FINETUNE_ALL)], []
    if len(s.strategies) > 1 or s.strategies != ["finetune"]:
        tables.append(_strategy_table(*ctx))
    if s.gold_upos and "parse" in s.tasks:
        tables.append(_gold_upos_table(*ctx))
    if s.word_order and "parse" in s.tasks:
        tables.append(_word_order_table(*ctx))
    if s.langid is not None:
        tables.append(_langid_table(s, rows))
        plots += _langid_plot(s, rows)
    if s.overlap:
        tables += [_overlap_table(*ctx), _correlation_table(s, rows)]
        plots += _overlap_plot(*ctx)
    notes = [f"Mean ± sample std over seeds {s.seeds}; scores in %. Every task is fine-tuned on {s.source} "
             f"only and tested on each target without target data; the model is {SOURCE_NOTE}. 'avg' averages "
             "the targets."]
    return Report(f"Study {spec.name} ({spec.scale})", spec.description, tables, plots, notes)


def _zero_shot_table(s, rows, targets, main, strategy) -> Table:
    """Their Tables 2-6 in one: a row per task (the encoder, the paper's mBERT, the majority control), a column
    per language."""
    columns = ["task", "metric", "model", f"{s.source} (source)", *targets, "avg"]
    body = []
    for task in s.tasks:
        for model, sel in (("encoder, fine-tune all", {"strategy": strategy}), ("majority", {"strategy": "majority"})):
            if model == "majority" and not s.majority:
                continue
            found = rows.select("transfer", task=task, **sel, **_no_gold(task))
            body.append([get_task(task).title, get_task(task).metric_title, model] +
                        [lang_cell(found, main[task], lang) for lang in [s.source, *targets, "avg"]])
            if model != "majority":
                body.append([f"{get_task(task).title} (paper)", get_task(task).metric_title,
                             f"mBERT, fine-tune all ({PAPER_TABLE[task][0]})"] +
                            [paper_cell(task, lang, s.source) for lang in [s.source, *targets, "avg"]])
        if task in s.in_language:
            body += _in_language_rows(s, rows, targets, main, task)
    return Table(f"Zero-shot transfer from {s.source} (Wu & Dredze 2019 Tables 2-6 layout)", columns, body,
                 note=PAPER_NOTE + " 'in-language': fine-tuned, selected and tested on the language's own data "
                                   "(the source's is the zero-shot run's); its avg is the mean over the targets.")


def _in_language_rows(s, rows, targets, main, task: str) -> list[list]:
    """The paper's in-language supervised rows: each target fine-tuned on its own data, then the paper's."""
    metric, title = main[task], get_task(task)
    own = rows.select("transfer", task=task, strategy=IN_LANGUAGE, **_no_gold(task))
    source = rows.select("transfer", task=task, strategy=FINETUNE_ALL, **_no_gold(task))
    score = {(r.seed, r.test_lang): r.value for r in own if r.metric == metric and r.split == "test"}
    seeds = sorted({seed for seed, _ in score})
    avg = Cell([sum(score[seed, t] for t in targets) / len(targets) for seed in seeds
                if all((seed, t) in score for t in targets)], scale=100.0, digits=1)
    ours = ([title.title, title.metric_title, "encoder, in-language", lang_cell(source, metric, s.source)]
            + [lang_cell(own, metric, lang) for lang in targets] + [avg])
    paper = ([f"{title.title} (paper)", title.metric_title, f"mBERT, in-language ({PAPER_TABLE[task][0]})"]
             + [paper_cell(task, lang, s.source, in_language=True) for lang in [s.source, *targets, "avg"]])
    return [ours, paper]


def _no_gold(task: str) -> dict[str, str]:
    return {"upos_input": "none"} if task == "parse" else {}


def _strategy_table(s, rows, targets, main) -> Table:
    """Fine-tune all vs freezing layers 0..k vs feature-based; zero-shot average over targets per task."""
    tasks = s.strategy_tasks or s.tasks
    names = [FINETUNE_ALL] + ([freeze_label(k) for k in freeze_levels(s, encoder_depth(s))]
                              if "freeze" in s.strategies else []) + ([FEATURE] if "feature" in s.strategies else [])
    titles = [get_task(t).title for t in tasks]
    columns = ["strategy"] + [f"{t} {s.source}" for t in titles] + [f"{t} avg" for t in titles]
    body = []
    for name in names:
        found = {t: rows.select("transfer", task=t, strategy=name, **_no_gold(t)) for t in tasks}
        body.append([name] + [lang_cell(found[t], main[t], s.source) for t in tasks] +
                    [lang_cell(found[t], main[t], "avg") for t in tasks])
        if name == FINETUNE_ALL:
            body.append([f"{name} (paper)"] + [paper_cell(t, lang, s.source) for lang in (s.source, "avg")
                                                for t in tasks])
    return Table("Transfer strategies: fine-tune all, freeze the bottom layers, feature-based (Wu & Dredze 2019 "
                 "Fig. 1)", columns, body,
                 note="freeze 0-k: embeddings (layer 0) and transformer layers 1..k frozen (the paper's n = 12k/L of "
                      "its 12 layers); feature-based: frozen encoder, learned scalar mix of every layer under the "
                      "task head. The paper's freeze and feature-based scores are only in its Fig. 1 (a heat map); "
                      "its fine-tune-all row is Tables 2-6. " + PAPER_NOTE)


def _gold_upos_table(s, rows, targets, main) -> Table:
    columns = ["model", f"{s.source} (source)", *targets, "avg"]
    langs = [s.source, *targets, "avg"]
    body, cells, paper = [], {}, {}
    for name, pos, model in (("encoder", "none", "mBERT(Z)"), ("encoder + gold UPOS", "gold", "mBERT(Z+POS)")):
        found = rows.select("transfer", task="parse", strategy=FINETUNE_ALL, upos_input=pos)
        cells[pos] = [lang_cell(found, main["parse"], lang) for lang in langs]
        paper[pos] = [paper_cell("parse", lang, s.source, f"{model} LAS") for lang in langs]
        body += [[name] + cells[pos], [f"{name} (paper, {model})"] + paper[pos]]
    body.append(["Δ (gold UPOS − none)"] + [delta(g, n) for g, n in zip(cells["gold"], cells["none"])])
    body.append(["Δ (paper)"] + [_paper_delta(g, n) for g, n in zip(paper["gold"], paper["none"])])
    return Table("Dependency parsing with and without gold UPOS (LAS, no punctuation; Wu & Dredze 2019 Table 6)",
                 columns, body, note=PAPER_NOTE)


def _word_order_table(s, rows, targets, main) -> Table:
    """Table 6's order: the parsing targets by word-order distance from the source, with zero-shot LAS (and
    in-language LAS where a target has training data), and Spearman's rho of distance against zero-shot LAS."""
    from scipy.stats import spearmanr

    distance = {r.test_lang: r.value for r in rows.select("word_order") if r.metric == "word_order_distance"}
    relations = {r.test_lang: int(r.value) for r in rows.select("word_order") if r.metric == "relations"}
    zero = rows.select("transfer", task="parse", strategy=FINETUNE_ALL, upos_input="none")
    own = rows.select("transfer", task="parse", strategy=IN_LANGUAGE, upos_input="none")
    body, pairs = [], []
    for lang in sorted((t for t in targets if t in distance), key=lambda t: distance[t]):
        las = lang_cell(zero, main["parse"], lang)
        body.append([lang, f"{distance[lang]:.3f}", str(relations.get(lang, "—")), lang_cell(zero, "uas_nopunct", lang),
                     las, lang_cell(own, main["parse"], lang, train_lang=lang),
                     load_published("wd2019").cell("Table 6", lang, "Dist")])
        if las.values:
            pairs.append((distance[lang], las.mean))
    varied = len(pairs) >= 3 and len({d for d, _ in pairs}) > 1 and len({v for _, v in pairs}) > 1
    rho = spearmanr(*zip(*pairs)) if varied else None
    note = ("Distance: for each universal relation, the share of dependents before their head; the mean absolute "
            f"difference from {s.source}'s training treebank over relations with >= 10 dependents in both "
            "(analysis/word_order.py; the paper's Dist is Ahmad et al. 2019's, from WALS, for real languages). ")
    note += (f"Spearman's rho of distance against zero-shot LAS over the {len(pairs)} targets: {rho.statistic:+.2f} "
             f"(p = {rho.pvalue:.3f}; the paper orders its Table 6 this way and notes that mBERT's LAS falls "
             "with distance, without a test)." if rho is not None else
             "No rank correlation: fewer than 3 targets, or distance or LAS the same for all.")
    return Table(f"Dependency parsing by word-order distance from {s.source} (Wu & Dredze 2019 Table 6's order)",
                 ["target", "distance", "relations", "zero-shot UAS", "zero-shot LAS", "in-language LAS",
                  "Dist (paper)"], body, note=note)


def _paper_delta(a: str, b: str) -> str:
    return "—" if "—" in (a, b) else f"{float(a) - float(b):+.1f}"


def _langid_table(s, rows) -> Table:
    found = {c: rows.select("langid", control=c) for c in ("pretrained", "random_init")}
    layers = sorted({int(r.extra["layer"]) for rs in found.values() for r in rs if "layer" in r.extra})
    controls = ("pretrained", "random_init")[: 2 if s.langid.random_init else 1]
    columns = ["layer", "pretrained encoder"] + (["random init"] if s.langid.random_init else []) + \
        ["paper (mBERT, Fig. 2)"]
    body = []
    for layer in layers:
        line = ["0 (embeddings)" if layer == 0 else str(layer)]
        line += [cell(found[control], "accuracy", layer=layer) for control in controls]
        body.append(line + [_paper_langid()])
    return Table("Language identification accuracy by layer (Wu & Dredze 2019 Fig. 2 as a table)", columns, body,
                 note="A linear classifier on each layer's mean-pooled subword vectors of held-out dev sentences; "
                      "chance is 1 / number of languages. Paper: 'around 96%' at every one of mBERT's 13 layers "
                      "over 99 WiLI-2018 languages (§5.3; the per-layer values are only in the figure).")


def _paper_langid() -> str:
    return load_published("wd2019").cell("Figure 2", "every tested layer", "language ID accuracy")


def _overlap_table(s, rows, targets, main) -> Table:
    columns = ["task", "target", "p_type", "p_token", "zero-shot"]
    body = []
    for task in s.tasks:
        overlap = rows.select("overlap", task=task)
        found = rows.select("transfer", task=task, strategy=FINETUNE_ALL, **_no_gold(task))
        for lang in targets:
            if any(r.test_lang == lang for r in overlap):
                shares = [lang_cell(overlap, kind, lang, 1.0, 3) for kind in OVERLAPS]
                body.append([get_task(task).title, lang, *shares, lang_cell(found, main[task], lang)])
    return Table(f"Subword overlap of {s.source}'s training data with each target's test data, and zero-shot "
                 "scores (fine-tune all)", columns, body,
                 note="Per task, as §5.4 defines it: p_type = share of the subword types of the target's test set "
                      f"seen in {s.source}'s training set; p_token = share of the test set's subword tokens whose "
                      "type is seen (the encoder's tokenizer, special and unknown pieces left out).")


def _correlation_table(s, rows) -> Table:
    found = rows.select("correlate")
    names = [t for t in s.tasks] + ["pooled"]
    columns = ["task"] + [f"{m} ({k})" for k in ("p_type", "p_token") for m in ("r", "null 95th pct")] + ["n"]
    body = []
    for task in names:
        mine = [r for r in found if r.task == task]
        line: list = [get_task(task).title if task != "pooled" else "pooled (z-scored per task)"]
        for kind in ("p_type", "p_token"):
            for metric in ("pearson_r", "pearson_r_null95"):
                line.append(cell(mine, metric, 1.0, 2, overlap=kind))
        ns = sorted({int(r.extra["n"]) for r in mine if "n" in r.extra})
        line.append("/".join(map(str, ns)) or "—")
        body.append(line)
    return Table("Pearson correlation of zero-shot score with subword overlap (Wu & Dredze 2019 Fig. 3)", columns,
                 body, note="One r per seed over the targets; 'null 95th pct': the 95th percentile of r when overlap "
                            "values are randomly re-paired with scores (r above it: p < 0.05, one-sided). Pooled: "
                            "scores z-scored within each task, then one r over every (task, target) point. The "
                            "paper's r values are only in its Fig. 3; §5.4 states r > 0.5 with p < 0.05 for MLDoc, "
                            "NER, POS and parsing, not for XNLI.")


def _langid_plot(s, rows) -> list[Plot]:
    """Fig. 2: language-ID accuracy by layer, one line per encoder (mean over seeds)."""
    from mbertlab.report.plots import layer_png

    series = {}
    for control, name in (("pretrained", "pretrained encoder"), ("random_init", "random init")):
        by_layer: dict[int, list[float]] = {}
        for r in rows.select("langid", control=control):
            by_layer.setdefault(int(r.extra["layer"]), []).append(r.value)
        if by_layer:
            series[name] = {layer: sum(v) / len(v) for layer, v in by_layer.items()}
    if not series:
        return []
    paper = load_published("wd2019").number("Figure 2", "every tested layer", "language ID accuracy")
    layers = sorted({layer for values in series.values() for layer in values})
    series["Wu & Dredze 2019: mBERT, 'around 96%'"] = {layer: paper.value / 100 for layer in layers}
    return [Plot("Language identification accuracy by layer", layer_png(series, "accuracy"), "langid-by-layer")]


def _overlap_plot(s, rows, targets, main) -> list[Plot]:
    """Fig. 3: zero-shot score (fine-tune all, every seed) against p_token, one series per task."""
    from mbertlab.report.plots import scatter_png

    overlap = {(job.tag("seed"), r.task, r.test_lang): r.value for job, r in rows.tagged("overlap")
               if r.metric == "p_token"}
    points: dict[str, tuple[list[float], list[float]]] = {}
    for task in s.tasks:
        for r in rows.select("transfer", task=task, strategy=FINETUNE_ALL, **_no_gold(task)):
            x = overlap.get((str(r.seed), task, r.test_lang))
            if r.metric == main[task] and r.split == "test" and r.test_lang in targets and x is not None:
                xs, ys = points.setdefault(get_task(task).title, ([], []))
                xs.append(x)
                ys.append(r.value)
    if not points:
        return []
    return [Plot("Zero-shot score against subword overlap (p_token)",
                 scatter_png(points, "p_token", "zero-shot score"), "overlap-scatter")]
