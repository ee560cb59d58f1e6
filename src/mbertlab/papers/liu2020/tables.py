"""Tables of the `liu2020` design: BERT vs word2vec vs GloVe by data size on word retrieval (MRR, P@1; their
Figure 1) and XNLI zero-shot (Figure 2), BERT's context window (Figure 3), word2vec's window (Figure 4), and
MRR by part of speech (their Table 1, whose averages over six languages stand under our BERT row as "BERT
(paper)"). The figures' values are only plotted, so those tables cite the figure and show ours alone
(papers/liu2020/published.yaml)."""
from __future__ import annotations

from mbertlab.report.render import Report
from mbertlab.report.tables import Table, delta
from mbertlab.papers.liu2020.design import BERT, RELEASED, STATIC_NAMES, windowed_sizes, word2vec_grid, zero_shot
from mbertlab.studies.published import load_published
from mbertlab.studies.rows import StudyRows, cell
from mbertlab.studies.spec import StudySpec
from mbertlab.transfer.task_table import get_task

POS_COLUMNS = ("NOUN", "VERB", "ADJ", "ADV", "open", "closed")
PAPER_POS_ROWS = {"NOUN": "Noun", "VERB": "Verb", "ADJ": "Adj.", "ADV": "Adv.", "open": "Open", "closed": "Closed"}


def liu2020_report(spec: StudySpec, store, results) -> Report:
    from mbertlab.studies.runner import study_jobs

    s = spec.settings
    rows_of = StudyRows.load(study_jobs(spec), store, results)
    models = [BERT] + [STATIC_NAMES[m] for m in s.static_methods]
    sizes = [z.name for z in s.sizes]
    largest = max(s.sizes, key=lambda z: z.sentences).name
    tables = [_retrieval_table(s, rows_of, models, sizes)]
    if s.window is not None:
        tables += [_window_table(s, rows_of, size) for size in windowed_sizes(s)]
    if word2vec_grid(s):
        tables.append(_word2vec_window_table(s, rows_of))
    tables += [_task_table(s, rows_of, models, sizes, task) for task in s.tasks]
    tables.append(_pos_table(s, rows_of, models, largest))
    if s.encoder:
        tables.append(_released_table(s, rows_of))
    notes = [f"Sizes {', '.join(f'{z.name} = {z.sentences} sentences per language' for z in s.sizes)} (the "
             "paper's 200k / 1000k, scaled). Mean ± sample std over seeds "
             f"{s.seeds}. Every model shares one tokenizer; static vectors have the BERT hidden size."
             + (f" Zero-shot tasks use a BiLSTM + max-pooling head on frozen features (BERT mode: {s.bert_mode})."
                if s.tasks else "")]
    return Report(f"Study {spec.name} ({spec.scale})", spec.description, tables, [], notes)


def _targets(s) -> list[tuple[list[str], dict]]:
    """Row labels and row filters per target: the target itself, or each target and their average."""
    if len(s.targets) == 1:
        return [([], {})]
    return [([t], {"test_lang": t}) for t in s.targets] + [(["avg"], {})]


def _retrieval_table(s, rows_of, models, sizes) -> Table:
    several = len(s.targets) > 1
    columns = ["Model"] + (["Target"] if several else []) + [f"{name} {size}" for size in sizes
                                                             for name in ("MRR", "P@1")]
    body = []
    for model in models:
        for label, where in _targets(s):
            row: list = [model, *label]
            for size in sizes:
                rows = rows_of.select("word_retrieval", method=model, size=size, window="full")
                row += [cell(rows, "mrr", 1.0, 3, **where), cell(rows, "p@1", 100.0, 1, **where)]
            body.append(row)
    return Table(f"Word retrieval {s.source} → {', '.join(s.targets)} (MRR, P@1 %) by training data size", columns,
                 body,
                 note="Mirrors the paper's Figure 1a / 1b (200k / 1000k), whose values are only plotted. Each source "
                      "word ranks every target word of the gold lexicon by cosine similarity; BERT: contextual "
                      "vectors averaged over the word's occurrences, last layer.")


def _window_table(s, rows_of, size: str) -> Table:
    columns = ["Model", "Window", "MRR", "P@1"] + [f"{get_task(t).title} {lang}" for t in s.tasks
                                                   for lang in s.targets]
    body = []
    for window in ("full", "short"):
        retrieval = rows_of.select("word_retrieval", method=BERT, size=size, window=window)
        row: list = [BERT, _window_label(s, window), cell(retrieval, "mrr", 1.0, 3),
                     cell(retrieval, "p@1", 100.0, 1)]
        for task in s.tasks:
            transfer = rows_of.select("transfer", method=BERT, size=size, window=window, task=task)
            row += [cell(transfer, "accuracy", 100.0, 1, test_lang=lang, split="test") for lang in s.targets]
        body.append(row)
    skipped = [f"{BERT} {_window_label(s, w)}" for w in ("full", "short")
               if s.tasks and not zero_shot(s, {"method": BERT, "size": size, "window": w})]
    return Table(f"Context window of BERT ({size} data)", columns, body,
                 note="Mirrors the paper's Figure 3 (values only plotted). The window model sees as many tokens per "
                      "step (batch scaled by full / window)." + _retrieval_only_note(skipped))


def _window_label(s, window: str) -> str:
    return "full" if window == "full" else f"w = {s.window}"


def _word2vec_window_table(s, rows_of) -> Table:
    smallest = min(s.sizes, key=lambda z: z.sentences).name
    body = []
    for method in dict(word2vec_grid(s)):
        for window in ["full", *map(str, s.word2vec_windows)]:
            rows = rows_of.select("word_retrieval", method=STATIC_NAMES[method], size=smallest, window=window)
            label = f"{s.static.get('window', 5)} (the grid's)" if window == "full" else window
            body.append([STATIC_NAMES[method], label, cell(rows, "mrr", 1.0, 3), cell(rows, "p@1", 100.0, 1)])
    return Table(f"Word2Vec window ({smallest} data)", ["Model", "Window", "MRR", "P@1"], body,
                 note="Mirrors the paper's Figure 4 (values only plotted): word retrieval of word2vec trained with "
                      "longer co-occurrence windows on the small data. A window longer than a sentence reaches its "
                      "whole sentence (gensim samples each centre word's window from 1 to the maximum).")


def _task_table(s, rows_of, models, sizes, task: str) -> Table:
    title = get_task(task).title
    single = len(s.targets) == 1
    columns = ["Model", "Size", f"{s.source} (train language)"] + [f"{t} (zero-shot)" for t in s.targets] + \
        (["Δ"] if single else [])

    def scores(rows) -> list:
        src = cell(rows, "accuracy", 100.0, 1, test_lang=s.source, split="test")
        tgts = [cell(rows, "accuracy", 100.0, 1, test_lang=t, split="test") for t in s.targets]
        return [src, *tgts] + ([delta(src, tgts[0])] if single else [])

    body, skipped = [], []
    for model in models:
        for size in sizes:
            if not zero_shot(s, {"method": model, "size": size, "window": "full"}):
                skipped.append(f"{model} {size}")
                continue
            body.append([model, size, *scores(rows_of.select("transfer", method=model, size=size, window="full",
                                                             task=task))])
    if s.majority:
        majority = scores(rows_of.select("transfer", method="majority", task=task))
        body.append(["majority label", "—", *(majority[:-1] + ["—"] if single else majority)])
    return Table(f"{title} accuracy (%): trained on {s.source}, tested zero-shot on {', '.join(s.targets)}", columns,
                 body,
                 note="Mirrors the paper's Figure 2a / 2b (200k / 1000k), whose values are only plotted."
                      + _retrieval_only_note(skipped))


def _retrieval_only_note(skipped: list[str]) -> str:
    """The models of a table that `retrieval_only` keeps out of the zero-shot tasks at this scale."""
    if not skipped:
        return ""
    return (f" Not scored zero-shot at this scale (`retrieval_only`: no zero-shot claim reads them; word retrieval "
            f"only): {', '.join(skipped)}.")


def _pos_table(s, rows_of, models, largest: str) -> Table:
    lines = [(m, largest, "full") for m in models]
    if s.window is not None and largest in windowed_sizes(s):
        lines.append((BERT, largest, "short"))
    paper = load_published("liu2020")
    body = []
    for model, size, window in lines:
        rows = rows_of.select("word_retrieval", method=model, size=size, window=window)
        label = model if window == "full" else f"{model} (w = {s.window})"
        body.append([label] + [cell(rows, f"mrr_{c}", 1.0, 3) for c in POS_COLUMNS])
        if model == BERT and window == "full":
            body.append([f"{BERT} (paper)"] + [paper.cell("Table 1", PAPER_POS_ROWS[c], "avg") for c in POS_COLUMNS])
    return Table(f"MRR by part of speech ({largest} data)", ["Model", *POS_COLUMNS], body,
                 note="Mirrors the paper's Table 1 (its BERT trained on 1000k sentences per language; 'BERT (paper)' "
                      "is its average over de, es, ar, fr, ru, tr -> en, POS from OntoNotes). Ours: each source word "
                      "takes its most frequent UPOS in the source treebank; open = ADJ ADV INTJ NOUN PROPN VERB, "
                      "closed = UD's closed classes.")


def _released_table(s, rows_of) -> Table:
    """The released encoder (`encoder:`) as a reference, scored exactly as the models trained here."""
    from pathlib import Path

    columns = ["Target", "MRR", "P@1"] + [f"{get_task(t).title}" for t in s.tasks]
    retrieval = rows_of.select("word_retrieval", method=RELEASED)
    body = []
    for lang in s.targets:
        row: list = [lang, cell(retrieval, "mrr", 1.0, 3, test_lang=lang), cell(retrieval, "p@1", 100.0, 1,
                                                                                  test_lang=lang)]
        row += [cell(rows_of.select("transfer", method=RELEASED, task=t), "accuracy", 100.0, 1, test_lang=lang,
                     split="test") for t in s.tasks]
        body.append(row)
    return Table(f"Released encoder {Path(s.encoder).name} (reference)", columns, body,
                 note="Scored with its own tokenizer on the same lexicon, text and task head as the models above "
                      "(the paper's starting point: m-BERT's cross-lingual ability).")
