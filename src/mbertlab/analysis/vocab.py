"""Vocabulary coverage curves (Wu & Dredze 2020 Fig. 3): how much of each language's text the
vocabulary's most frequent items cover.

For every language of a shards artifact: count each vocabulary id in its training tokens, rank the ids
by that count, and record the cumulative share of the language's tokens covered by the top r items, at
log-spaced ranks. A low-resource language in a shared vocabulary uses few items: its curve saturates
early. Writes `curve.tsv` (every rank), `curve.png` and results rows (`coverage` with the rank in
`extra`, `types_used`, `types_for_<p>`, `vocab_size`) from which the report draws the figure.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from pydantic import Field

from mbertlab.config import Config
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB


class VocabCurveConfig(Config):
    split: str = "train"
    points: int = Field(24, ge=2, description="Log-spaced ranks recorded as rows (curve.tsv keeps every rank).")
    shares: list[float] = Field(default_factory=lambda: [0.5, 0.9, 0.95],
                                description="Token shares whose needed vocabulary items are recorded.")


def coverage_curve(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """curve[r-1] = share of the tokens covered by the r most frequent ids (ranked within this text)."""
    counts = np.sort(np.bincount(np.asarray(ids, dtype=np.int64), minlength=vocab_size))[::-1]
    total = counts.sum()
    return np.cumsum(counts) / total if total else np.zeros(vocab_size)


def log_ranks(vocab_size: int, points: int) -> list[int]:
    return sorted({int(round(r)) for r in np.geomspace(1, vocab_size, points)})


def vocab_curve_into(config: VocabCurveConfig, shards: Artifact, out: Path, results: ResultsDB,
                     study: str = "") -> None:
    from mbertlab.report.plots import coverage_png
    from mbertlab.tokenizers.shards import ShardReader

    reader = ShardReader(shards.path)
    size = reader.vocab_size
    where = str(final_path(out))
    common = {"study": study, "task": "vocab", "model": f"{shards.stage}/{shards.hash}", "split": config.split,
              "artifact": where, "config_hash": final_path(out).name}
    rows, curves = [], {}
    for lang in reader.languages:
        ids = reader.tokens(lang, config.split)
        curve = curves[lang] = coverage_curve(ids, size)
        used = int(np.count_nonzero(np.bincount(np.asarray(ids, dtype=np.int64), minlength=size)))
        langs = {"languages": reader.languages}
        rows += [ResultRow(metric="coverage", value=float(curve[r - 1]), test_lang=lang,
                           extra={"rank": r, **langs}, **common) for r in log_ranks(size, config.points)]
        rows += [ResultRow(metric="types_used", value=used, test_lang=lang, extra=langs, **common),
                 ResultRow(metric="vocab_size", value=size, test_lang=lang, extra=langs, **common)]
        rows += [ResultRow(metric=f"types_for_{round(p * 100)}", value=int(np.searchsorted(curve, p) + 1),
                           test_lang=lang, extra=langs, **common) for p in config.shares]
    with (out / "curve.tsv").open("w", encoding="utf-8") as f:
        f.write("lang\trank\tcoverage\n")
        for lang, curve in curves.items():
            f.writelines(f"{lang}\t{r}\t{c:.6f}\n" for r, c in enumerate(curve, 1))
    (out / "curve.png").write_bytes(coverage_png("Token coverage by vocabulary rank", curves))
    results.add(rows, replace_artifact=where)
