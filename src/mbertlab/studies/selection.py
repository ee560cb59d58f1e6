"""Row selections of the scorecard: filters on ResultRow columns or, for any other key, on `extra` (where the
report also puts the job's tags); a list means 'any of', None drops a filter (a check's override)."""
from __future__ import annotations

from typing import Any

from mbertlab.store.results import COLUMNS, ResultRow

Selection = dict[str, Any]
SEL_HELP = "Row filters: ResultRow columns (metric, model, task, mode, train_lang, test_lang, split, study, " \
           "seed) or any tag in `extra`; a list means 'any of'."


def _matches(value: Any, wanted: Any) -> bool:
    if isinstance(wanted, (list, tuple)):
        return any(_matches(value, w) for w in wanted)
    return value == wanted or str(value) == str(wanted)


def field(row: ResultRow, key: str) -> Any:
    return getattr(row, key) if key in COLUMNS else row.extra.get(key)


def merged(*selections: Selection) -> Selection:
    """The selections merged left to right; a key set to None is dropped (matches any value)."""
    out: Selection = {}
    for s in selections:
        out.update(s)
    return {k: v for k, v in out.items() if v is not None}


def pick(rows: list[ResultRow], selection: Selection) -> list[ResultRow]:
    """The rows matching every filter."""
    return [r for r in rows if all(_matches(field(r, k), v) for k, v in selection.items())]


def label(selection: Selection) -> str:
    """The filters in words; a filter set to null (dropped by an override) is not one, so it is not shown."""
    return ", ".join(f"{k}={v}" for k, v in selection.items() if v is not None) or "all rows"


def run_key(row: ResultRow) -> tuple:
    """One trained model: its artifact and seed (hand-built rows without an artifact: the seed)."""
    return (row.artifact, row.seed)


def by_run(rows: list[ResultRow], selection: Selection) -> dict[tuple, float]:
    """The selected rows' values by trained model (`run_key`)."""
    return {run_key(r): r.value for r in pick(rows, selection)}


def deltas(rows: list[ResultRow], selection: Selection, source: Selection, target: Selection) -> dict[tuple, float]:
    """Δ = source − target per trained model (rows of one artifact and seed) among the selected rows."""
    src, tgt = by_run(rows, merged(selection, source)), by_run(rows, merged(selection, target))
    return {k: v - tgt[k] for k, v in src.items() if k in tgt}


def seed_means(rows: list[ResultRow]) -> dict[tuple, float]:
    """The rows' mean value per seed (the row's seed and its stage's `seed` tag): rows of one seed's models, over
    languages, pairs or conditions, are one sample of the seeds, not several."""
    by_seed: dict[tuple, list[float]] = {}
    for r in rows:
        by_seed.setdefault((r.seed, r.extra.get("seed")), []).append(r.value)
    return {k: sum(v) / len(v) for k, v in by_seed.items()}
