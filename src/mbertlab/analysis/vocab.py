"""Vocabulary statistics of Wu & Dredze 2020 Fig. 3: how much of a vocabulary a language's text uses.

For every language of a shards artifact, count each vocabulary id in its training tokens and record:
- the paper's statistic: the share of the vocabulary whose count exceeds each threshold (`vocab_above`,
  threshold and `vocabulary: subword` in extra), and the same for the "Raw" vocabulary of the paper's figure,
  the language's space-separated word types (`vocabulary: raw`), when the text artifact is given;
- coverage by rank (ours, beside it): the cumulative share of the language's tokens covered by the top r ids
  at log-spaced ranks (`coverage`, rank in extra), `types_used`, `types_for_<p>`, `vocab_size`.
A low-resource language in a shared vocabulary uses few items: few items pass a threshold, and its coverage
curve saturates early. Writes `curve.tsv` (every rank) and `curve.png`.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
from pydantic import Field

from mbertlab.config import Config
from mbertlab.corpus.overlap import vocab_frequency_curve
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB


class VocabCurveConfig(Config):
    split: str = "train"
    points: int = Field(24, ge=2, description="Log-spaced ranks recorded as rows (curve.tsv keeps every rank).")
    shares: list[float] = Field(default_factory=lambda: [0.5, 0.9, 0.95],
                                description="Token shares whose needed vocabulary items are recorded.")
    thresholds: list[int] = Field(default_factory=lambda: [0, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
                                  description="Counts: the share of the vocabulary above each (the paper's Fig. 3).")
    text_files: str | None = Field(None, description="Where a language's text is in the text artifact (the second "
                                   "input), for the Raw curve; none: no Raw rows.")


def coverage_curve(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    """curve[r-1] = share of the tokens covered by the r most frequent ids (ranked within this text)."""
    counts = np.sort(np.bincount(np.asarray(ids, dtype=np.int64), minlength=vocab_size))[::-1]
    total = counts.sum()
    return np.cumsum(counts) / total if total else np.zeros(vocab_size)


def log_ranks(vocab_size: int, points: int) -> list[int]:
    return sorted({int(round(r)) for r in np.geomspace(1, vocab_size, points)})


def word_counts(path: Path) -> Counter:
    """Space-separated word types of a text file and their counts (the paper's "Raw" vocabulary)."""
    from mbertlab.formats.text import read_lines

    if not path.is_file():
        raise DataError(path, None, "no such text file (needed for the Raw vocabulary of Fig. 3)")
    counts: Counter = Counter()
    for line in read_lines(path):
        counts.update(line.split())
    return counts


def above_rows(counts: Counter, vocab, thresholds: list[int], kind: str, extra: dict, **row) -> list[ResultRow]:
    """`vocab_above` rows: the share of `vocab` whose count exceeds each threshold."""
    return [ResultRow(metric="vocab_above", value=share, extra={**extra, "threshold": t, "vocabulary": kind}, **row)
            for t, share in vocab_frequency_curve(counts, vocab, thresholds)]


def vocab_curve_into(config: VocabCurveConfig, shards: Artifact, out: Path, results: ResultsDB,
                     study: str = "", text: Path | None = None) -> None:
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
        counts = Counter(dict(enumerate(np.bincount(np.asarray(ids, dtype=np.int64), minlength=size).tolist())))
        rows += above_rows(counts, range(size), config.thresholds, "subword", test_lang=lang, extra=langs, **common)
        if text is not None and config.text_files is not None:
            words = word_counts(text / config.text_files.format(lang=lang, split=config.split))
            rows += above_rows(words, list(words), config.thresholds, "raw", test_lang=lang, extra=langs, **common)
    with (out / "curve.tsv").open("w", encoding="utf-8") as f:
        f.write("lang\trank\tcoverage\n")
        for lang, curve in curves.items():
            f.writelines(f"{lang}\t{r}\t{c:.6f}\n" for r, c in enumerate(curve, 1))
    (out / "curve.png").write_bytes(coverage_png("Token coverage by vocabulary rank", curves))
    results.add(rows, replace_artifact=where)
