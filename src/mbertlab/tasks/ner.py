"""NER metrics. The main ones score the tags as predicted: entity P/R/F1 by seqeval's default mode, which is
conlleval's definition (an I- tag after O or after another type starts a new entity), and token macro-F1.
`f1_repaired` is a separate metric: entity F1 after Wu & Dredze's test-time repair, which both of their papers
(2019, 2020) applied before scoring; it can differ from conlleval's F1 by tens of points when predictions
switch type inside a span, so it never stands in for `f1`."""
from __future__ import annotations

import math
import warnings
from collections import Counter


def repair_bio(tags: list[str]) -> list[str]:
    """Wu & Dredze's test-time repair (2019 §5.1 "a simple post-processing heuristic", spelled out in 2020 §3):
    a stand-alone I-X becomes B-X, and B-X I-Y becomes B-Y I-Y: the entity takes the type of its final token."""
    out = list(tags)
    i = 0
    while i < len(out):
        if out[i] == "O":
            i += 1
            continue
        j = i + 1
        while j < len(out) and out[j].startswith("I-"):
            j += 1
        final = out[j - 1][2:]
        out[i] = "B-" + final
        for k in range(i + 1, j):
            out[k] = "I-" + final
        i = j
    return out


def entity_scores(gold: list[list[str]], pred: list[list[str]]) -> dict[str, float]:
    """Entity precision/recall/F1 as conlleval computes them (seqeval's default mode)."""
    from seqeval.metrics import f1_score, precision_score, recall_score

    with warnings.catch_warnings():  # no predicted entity: seqeval warns and scores 0, as conlleval does
        warnings.simplefilter("ignore")
        return {"f1": float(f1_score(gold, pred)), "precision": float(precision_score(gold, pred)),
                "recall": float(recall_score(gold, pred))}


def token_macro_f1(gold: list[list[str]], pred: list[list[str]]) -> float:
    """Macro-average over tag classes of per-token F1 (Limisiewicz et al. 2023)."""
    tp, fp, fn = Counter(), Counter(), Counter()
    for g_sent, p_sent in zip(gold, pred):
        for g, p in zip(g_sent, p_sent):
            if g == p:
                tp[g] += 1
            else:
                fp[p] += 1
                fn[g] += 1
    labels = sorted(set(tp) | set(fn))  # a fixed order: a set's order changes with the process's hash seed
    scores = []
    for label in labels:
        denominator = 2 * tp[label] + fp[label] + fn[label]
        scores.append(2 * tp[label] / denominator if denominator else 0.0)
    return math.fsum(scores) / len(scores) if scores else 0.0


def ner_metrics(gold: list[list[str]], pred: list[list[str]]) -> dict[str, float]:
    """conlleval's entity P/R/F1 and token macro-F1 on the tags as predicted, plus `f1_repaired`."""
    repaired = entity_scores(gold, [repair_bio(p) for p in pred])["f1"]
    return {**entity_scores(gold, pred), "token_macro_f1": token_macro_f1(gold, pred), "f1_repaired": repaired}
