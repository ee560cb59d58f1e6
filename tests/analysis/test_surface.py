"""The surface baseline: ~1 where length decides the label, ~chance where nothing surface does, and the same
predictions as statsmodels' MNLogit (an independent multinomial logit) where the data are not separable."""
from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm

from mbertlab.analysis.surface import _matrix, surface_baseline_accuracy
from mbertlab.errors import DataError
from mbertlab.formats.records import XNLI_LABELS

WORDS = [f"w{i}" for i in range(50)]


def _write(path, rows):
    with path.open("w", encoding="utf-8") as f:
        f.write("language\tgold_label\tsentence1\tsentence2\tpairID\n")
        for i, (label, premise, hypothesis) in enumerate(rows):
            f.write(f"xx\t{label}\t{' '.join(premise)}\t{' '.join(hypothesis)}\t{i}\n")
    return path


def _sentence(rng, n):
    return [WORDS[j] for j in rng.integers(len(WORDS), size=n)]


def _rows(rng, n, hypothesis_length):
    rows = []
    for i in range(n):
        label = XNLI_LABELS[i % 3]
        rows.append((label, _sentence(rng, int(rng.integers(4, 12))), _sentence(rng, hypothesis_length(label))))
    return rows


def test_length_decides(tmp_path):
    rng = np.random.default_rng(0)
    by_label = {"entailment": 3, "neutral": 6, "contradiction": 9}
    train = _write(tmp_path / "train.tsv", _rows(rng, 300, by_label.get))
    test = _write(tmp_path / "test.tsv", _rows(rng, 300, by_label.get))
    assert surface_baseline_accuracy(train, test) > 0.99


def test_nothing_surface_decides(tmp_path):
    rng = np.random.default_rng(1)
    train = _write(tmp_path / "train.tsv", _rows(rng, 900, lambda _: int(rng.integers(3, 10))))
    test = _write(tmp_path / "test.tsv", _rows(rng, 900, lambda _: int(rng.integers(3, 10))))
    assert abs(surface_baseline_accuracy(train, test) - 1 / 3) < 0.06


def test_same_predictions_as_statsmodels(tmp_path):
    """Overlap weakly tied to the label (noisy): our fit and MNLogit's agree on (almost) every test pair."""
    rng = np.random.default_rng(2)

    def rows(n):
        out = []
        for i in range(n):
            label = XNLI_LABELS[i % 3]
            premise = _sentence(rng, int(rng.integers(5, 12)))
            keep = int(np.clip(rng.normal(1 + 1.5 * (i % 3), 1.5), 0, len(premise)))
            out.append((label, premise, premise[:keep] + _sentence(rng, int(rng.integers(1, 6)))))
        return out

    train, test = _write(tmp_path / "train.tsv", rows(600)), _write(tmp_path / "test.tsv", rows(600))
    ours = surface_baseline_accuracy(train, test)
    (x, y), (xt, yt) = _matrix(train), _matrix(test)
    columns = [0, 1, 3, 4, 5, 6, 8]  # statsmodels needs full rank: drop the two linear combinations
    fit = sm.MNLogit(y, sm.add_constant(x[:, columns])).fit(disp=0, maxiter=500)
    theirs = float((fit.predict(sm.add_constant(xt[:, columns])).argmax(axis=1) == yt).mean())
    assert 0.45 < theirs < 0.95  # informative but not separable
    assert ours == pytest.approx(theirs, abs=0.02)


def test_empty_file_names_it(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("language\tgold_label\tsentence1\tsentence2\tpairID\n", encoding="utf-8")
    with pytest.raises(DataError, match="empty.tsv.*no sentence pairs"):
        surface_baseline_accuracy(empty, empty)
