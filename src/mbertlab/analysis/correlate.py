"""Pearson correlation between zero-shot scores and subword overlap per task (Wu & Dredze 2019 Fig. 3),
with the scatter plot."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from mbertlab.errors import ConfigError


@dataclass
class Correlation:
    task: str
    overlap: str  # p_type or p_token
    r: float
    p_value: float
    n: int


def pearson(task: str, overlap: str, xs: Sequence[float], ys: Sequence[float]) -> Correlation:
    from scipy import stats

    if len(xs) != len(ys) or len(xs) < 3:
        raise ConfigError(f"{task}: need at least 3 paired (overlap, score) points, got {len(xs)}/{len(ys)}")
    res = stats.pearsonr(xs, ys)
    return Correlation(task, overlap, float(res.statistic), float(res.pvalue), len(xs))


def scatter_plot(points: dict[str, tuple[list[float], list[float]]], overlap: str, score: str, out: Path) -> Path:
    """One series per task: overlap on x, zero-shot score on y."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    for task, (xs, ys) in sorted(points.items()):
        ax.scatter(xs, ys, label=task, s=18)
    ax.set_xlabel(overlap)
    ax.set_ylabel(score)
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
