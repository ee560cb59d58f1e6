"""Every plot of the package, as PNG bytes: a report embeds them, a stage or a command saves them
(`save_png`). matplotlib is imported on first use only, so `import mbertlab` stays light."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from mbertlab.report.render import Plot

if TYPE_CHECKING:
    import numpy as np

WIDE = (5.5, 3.6)  # reports and stage figures, at 110 dpi
SQUARE = (5, 4)  # the `analyze` commands' figures, at 100 dpi


def _axes(size: tuple[float, float], dpi: int):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=size, dpi=dpi)


def _png(fig, ax, xlabel: str, ylabel: str, title: str = "", legend: int | str = "small") -> bytes:
    """Labels, legend and layout, then the figure as PNG bytes (the figure is closed)."""
    import io

    import matplotlib.pyplot as plt

    if xlabel:
        ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    ax.legend(fontsize=legend)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    plt.close(fig)
    return buf.getvalue()


def save_png(png: bytes, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(png)
    return out


def line_png(title: str, lines: dict[str, list[tuple[float, float]]], xlabel: str, ylabel: str,
             logx: bool = False) -> bytes:
    """One line per label through its (x, y) points; dots mark the points of short lines."""
    fig, ax = _axes(WIDE, 110)
    for label, points in lines.items():
        ax.plot([x for x, _ in points], [y for _, y in points], label=label, marker="." if len(points) < 30 else None)
    if logx:
        ax.set_xscale("log")
    return _png(fig, ax, xlabel, ylabel, title)


def coverage_png(title: str, curves: dict[str, np.ndarray | list[tuple[int, float]]]) -> bytes:
    """Coverage against rank (log x axis), one line per label; a curve is an array of shares by rank
    (rank 1 first) or a list of (rank, share) points. Shares are drawn in %."""
    import numpy as np

    lines = {label: [(r, 100 * c) for r, c in (enumerate(curve, 1) if isinstance(curve, np.ndarray) else curve)]
             for label, curve in curves.items()}
    return line_png(title, lines, "vocabulary items ranked by frequency in the language",
                    "% of the language's tokens", logx=True)


def layer_png(series: dict[str, dict[int, float]], metric: str) -> bytes:
    """A metric by layer, one line per series (language ID accuracy or retrieval MRR by layer)."""
    fig, ax = _axes(SQUARE, 100)
    for name, values in sorted(series.items()):
        layers = sorted(values)
        ax.plot(layers, [values[l] for l in layers], marker="o", label=name)
    return _png(fig, ax, "layer", metric, legend=7)


def scatter_png(points: dict[str, tuple[list[float], list[float]]], xlabel: str, ylabel: str) -> bytes:
    """One series per task: e.g. subword overlap on x, zero-shot score on y."""
    fig, ax = _axes(SQUARE, 100)
    for task, (xs, ys) in sorted(points.items()):
        ax.scatter(xs, ys, label=task, s=18)
    return _png(fig, ax, xlabel, ylabel, legend=7)


def bar_plot(title: str, name: str, groups: list[str], series: dict[str, list[tuple[float, float]]],
             ylabel: str) -> Plot:
    """Grouped bars with error bars: series name -> [(mean, std) per group]."""
    import textwrap

    fig, ax = _axes((max(5, 1.6 * len(groups)), 3.6), 110)
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        ax.bar(xs, [m for m, _ in values], width, yerr=[s for _, s in values], label=label, capsize=3)
    ax.set_xticks(range(len(groups)), [textwrap.fill(g, 16) for g in groups], fontsize="small")
    return Plot(title, _png(fig, ax, "", ylabel, title), name)
