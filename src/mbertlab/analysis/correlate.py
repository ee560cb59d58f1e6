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


def points_from_results(score_rows: list, overlap_rows: list) -> dict[str, tuple[list[float], list[float]]]:
    """Per task, (overlap, zero-shot score) pairs: a score row (train_lang != test_lang) is paired with the
    overlap row of the same train_lang/test_lang pair (of the same task when the overlap row names one)."""
    overlap: dict[tuple[str, str, str], float] = {(r.task, r.train_lang, r.test_lang): r.value for r in overlap_rows}
    points: dict[str, tuple[list[float], list[float]]] = {}
    for r in score_rows:
        if r.train_lang == r.test_lang:
            continue
        x = overlap.get((r.task, r.train_lang, r.test_lang), overlap.get(("", r.train_lang, r.test_lang)))
        if x is None:
            raise ConfigError(f"no overlap row for {r.train_lang} -> {r.test_lang} (task {r.task!r})")
        xs, ys = points.setdefault(r.task, ([], []))
        xs.append(x)
        ys.append(r.value)
    return points


def correlation_rows(correlations: list[Correlation], score: str, study: str = "") -> list:
    from mbertlab.store.results import ResultRow

    return [ResultRow(metric="pearson_r", value=c.r, study=study, task=c.task, mode="correlate",
                      extra={"overlap": c.overlap, "score": score, "p_value": c.p_value, "n": c.n})
            for c in correlations]


def layer_series(rows: list) -> dict[str, dict[int, float]]:
    """{series: {layer: value}} from rows whose extra records a layer; a series is model/task/test_lang."""
    series: dict[str, dict[int, float]] = {}
    for r in rows:
        if "layer" not in r.extra:
            raise ConfigError(f"row {r.metric!r} of {r.model!r} records no layer in its extra")
        name = "/".join(p for p in (r.model, r.task, r.test_lang) if p)
        series.setdefault(name, {})[int(r.extra["layer"])] = r.value
    return series


def line_plot(series: dict[str, dict[int, float]], metric: str, out: Path) -> Path:
    """A metric by layer, one line per series (language ID accuracy or retrieval MRR by layer)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4))
    for name, values in sorted(series.items()):
        layers = sorted(values)
        ax.plot(layers, [values[l] for l in layers], marker="o", label=name)
    ax.set_xlabel("layer")
    ax.set_ylabel(metric)
    ax.legend(fontsize=7)
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out
