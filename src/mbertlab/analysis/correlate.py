"""Pearson correlation between zero-shot scores and subword overlap (Wu & Dredze 2019 §5.4, Fig. 3).

Two doors share one Pearson r (`pearson_r`) and one p-value (scipy's): `mbertlab analyze correlate` over
results.db rows (`points_from_results`, `pearson`), and the `correlate` stage over the overlap artifacts (one
per task) and transfer artifacts (`correlate_into`), which computes r per task and pooled over tasks (scores z-scored
within each task). Beside each r the stage writes the 95th percentile of r under random re-pairings of
the same points (a one-sided permutation test at 5%), so "r is positive beyond chance" is a comparison of
two rows the scorecard can make.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from pydantic import Field

from mbertlab.analysis.overlap import OVERLAPS
from mbertlab.config import Config
from mbertlab.errors import ConfigError, DataError
from mbertlab.store.artifacts import final_path
from mbertlab.store.results import ResultRow, ResultsDB

POOLED = "pooled"


class CorrelateConfig(Config):
    metrics: dict[str, str] = Field(description="task -> the score metric correlated (e.g. upos: accuracy).")
    permutations: int = Field(2000, ge=100, description="Random re-pairings for the null distribution of r.")
    seed: int = 0


@dataclass
class Correlation:
    task: str
    overlap: str  # p_type or p_token
    r: float
    p_value: float
    n: int


def pearson_r(xs: np.ndarray, ys: np.ndarray) -> float:
    """Pearson's r; NaN when a side is constant (e.g. every target at chance), where r is undefined."""
    if np.ptp(xs) < 1e-12 or np.ptp(ys) < 1e-12:
        return float("nan")
    return float(np.corrcoef(xs, ys)[0, 1])


def pearson(task: str, overlap: str, xs: Sequence[float], ys: Sequence[float]) -> Correlation:
    """r with scipy's two-sided p-value (NaN with r); fewer than 3 points is an error."""
    from scipy import stats

    if len(xs) != len(ys) or len(xs) < 3:
        raise ConfigError(f"{task}: need at least 3 paired (overlap, score) points, got {len(xs)}/{len(ys)}")
    r = pearson_r(np.asarray(xs, dtype=float), np.asarray(ys, dtype=float))
    p = float("nan") if np.isnan(r) else float(stats.pearsonr(xs, ys).pvalue)
    return Correlation(task, overlap, r, p, len(xs))


def null_quantile(groups: list[tuple[np.ndarray, np.ndarray]], permutations: int, seed: int) -> float:
    """95th percentile of pooled r when x is shuffled within each group (the pairing is all that changes)."""
    rng = np.random.default_rng(seed)
    ys = np.concatenate([y for _, y in groups])
    rs = []
    for _ in range(permutations):
        xs = np.concatenate([rng.permutation(x) for x, _ in groups])
        rs.append(pearson_r(xs, ys))
    rs = np.asarray(rs)
    rs = rs[~np.isnan(rs)]
    return float(np.quantile(rs, 0.95)) if len(rs) else float("nan")


def zscore(values: list[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return (arr - arr.mean()) / arr.std() if arr.std() > 0 else arr - arr.mean()


def correlations(config: CorrelateConfig, points: dict) -> list[dict]:
    """One record per (task or pooled, overlap kind): r, its p-value, n and the permutation null's 95th pct."""
    out = []
    tasks = sorted({task for task, _ in points})
    for kind in OVERLAPS:
        groups = {task: (np.asarray(points[(task, kind)][0], float), np.asarray(points[(task, kind)][1], float))
                  for task in tasks}
        pooled = [(x, zscore(list(y))) for x, y in groups.values()]
        for name, members in [(t, [groups[t]]) for t in tasks] + [(POOLED, pooled)]:
            xs = np.concatenate([x for x, _ in members])
            ys = np.concatenate([y for _, y in members])
            found = pearson(name, kind, xs, ys) if len(xs) >= 3 else None
            if found is None or np.isnan(found.r):
                continue  # no row: a finding on it reads "not run" rather than a made-up value
            out.append({**asdict(found), "null95": null_quantile(members, config.permutations, config.seed)})
    return out


def selected_scores(transfer: Path) -> tuple[dict, dict[str, dict[str, float]]]:
    """A transfer artifact's config and its selected point's scores by 'lang.split'."""
    config = json.loads((transfer / "config.json").read_text(encoding="utf-8"))
    scores = json.loads((transfer / "scores.json").read_text(encoding="utf-8"))
    return config, scores["selected"]["scores"]


def task_points(config: CorrelateConfig, overlaps: dict[str, dict], transfers: list[Path]
                ) -> dict[tuple[str, str], tuple[list, list]]:
    """Per task and overlap kind: the (overlap, score) pairs of the targets the task was tested on, as
    {(task, kind): (xs, ys)}; `overlaps` is {task: {target: {p_type, p_token}}}."""
    points = {}
    for path in transfers:
        tconfig, scores = selected_scores(path)
        task = tconfig["task"]
        if task not in overlaps:
            raise DataError(path, None, f"no overlap statistics of task {task!r} (needed for the correlation)")
        metric = config.metrics[task]
        for kind in OVERLAPS:
            xs, ys = [], []
            for target, values in overlaps[task].items():
                key = f"{target}.test"
                if key not in scores:
                    raise DataError(path, None, f"no test score for target {target!r} (needed for the correlation)")
                xs.append(values[kind])
                ys.append(scores[key][metric])
            points[(task, kind)] = (xs, ys)
    return points


def read_overlaps(overlap_dirs: list[Path]) -> dict[str, dict]:
    """{task: overlap.json} of overlap artifacts, one per task."""
    out = {}
    for path in overlap_dirs:
        task = json.loads((path / "config.json").read_text(encoding="utf-8"))["task"]
        out[task] = json.loads((path / "overlap.json").read_text(encoding="utf-8"))
    return out


def correlate_into(config: CorrelateConfig, overlap_dirs: list[Path], transfer_dirs: list[Path], out: Path,
                   results: ResultsDB, study: str = "") -> list[dict]:
    """correlations.json and two rows per record (pearson_r, pearson_r_null95) from the overlap artifacts
    (one per task) and the transfer artifacts fine-tuned on their source."""
    records = correlations(config, task_points(config, read_overlaps(overlap_dirs), transfer_dirs))
    (out / "correlations.json").write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    artifact = str(final_path(out))
    rows = []
    for rec in records:
        extra = {"overlap": rec["overlap"], "p_value": rec["p_value"], "n": rec["n"],
                 "score": config.metrics.get(rec["task"], "z-scored main metric")}
        for metric, value in (("pearson_r", rec["r"]), ("pearson_r_null95", rec["null95"])):
            rows.append(ResultRow(metric=metric, value=value, study=study, task=rec["task"], mode="correlate",
                                  seed=config.seed, config_hash=final_path(out).name, artifact=artifact, extra=extra))
    results.add(rows, replace_artifact=artifact)
    return records


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


def correlation_rows(found: list[Correlation], score: str, study: str = "") -> list:
    return [ResultRow(metric="pearson_r", value=c.r, study=study, task=c.task, mode="correlate",
                      extra={"overlap": c.overlap, "score": score, "p_value": c.p_value, "n": c.n})
            for c in found]


def layer_series(rows: list) -> dict[str, dict[int, float]]:
    """{series: {layer: value}} from rows whose extra records a layer; a series is model/task/test_lang."""
    series: dict[str, dict[int, float]] = {}
    for r in rows:
        if "layer" not in r.extra:
            raise ConfigError(f"row {r.metric!r} of {r.model!r} records no layer in its extra")
        name = "/".join(p for p in (r.model, r.task, r.test_lang) if p)
        series.setdefault(name, {})[int(r.extra["layer"])] = r.value
    return series
