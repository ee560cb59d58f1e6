"""UPOS tagging metric: accuracy over words."""
from __future__ import annotations


def upos_metrics(gold: list[list[str]], pred: list[list[str]]) -> dict[str, float]:
    total = sum(len(g) for g in gold)
    correct = sum(g == p for gs, ps in zip(gold, pred) for g, p in zip(gs, ps))
    return {"accuracy": correct / total if total else 0.0}
