from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from mbertlab.analysis.correlate import pearson
from mbertlab.errors import ConfigError


def test_pearson_equals_scipy():
    rng = np.random.default_rng(1)
    x = rng.random(15)
    y = 0.5 * x + rng.normal(scale=0.1, size=15)
    got = pearson("pos", "p_type", list(x), list(y))
    ref = stats.pearsonr(x, y)
    assert got.r == pytest.approx(ref.statistic) and got.p_value == pytest.approx(ref.pvalue) and got.n == 15


def test_too_few_points_raise():
    with pytest.raises(ConfigError):
        pearson("pos", "p_type", [0.1, 0.2], [0.3, 0.4])


def test_scatter_writes_png(tmp_path):
    from mbertlab.report.plots import save_png, scatter_png

    out = save_png(scatter_png({"pos": ([0.1, 0.5, 0.9], [0.2, 0.4, 0.8])}, "p_type", "acc"), tmp_path / "s.png")
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_points_pair_zero_shot_scores_with_their_overlap():
    from mbertlab.analysis.correlate import points_from_results
    from mbertlab.store.results import ResultRow

    overlap = [ResultRow("p_type", 0.3, train_lang="en", test_lang="de"),
               ResultRow("p_type", 0.9, task="pos", train_lang="en", test_lang="de")]
    scores = [ResultRow("acc", 0.6, task="ner", train_lang="en", test_lang="de"),
              ResultRow("acc", 0.7, task="pos", train_lang="en", test_lang="de"),
              ResultRow("acc", 0.99, task="pos", train_lang="en", test_lang="en")]
    assert points_from_results(scores, overlap) == {"ner": ([0.3], [0.6]), "pos": ([0.9], [0.7])}
    with pytest.raises(ConfigError):
        points_from_results([ResultRow("acc", 0.5, task="ner", train_lang="en", test_lang="zh")], overlap)
