"""No shortcut in the generated tasks across a script (issue 49): a bag-of-words, length and overlap classifier
fitted on the source's XNLI and MLDoc learns the source task, and stays at chance on the disjoint-script target;
on a target that shares half its words with the source the same classifier transfers (so the check can fail)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mbertlab.analysis.surface import _fit, surface_features
from mbertlab.data.generate import generate_into, preset_config
from mbertlab.formats.classification import MLDOC_LABELS, read_mldoc
from mbertlab.formats.records import XNLI_LABELS
from mbertlab.formats.xnli import read_xnli

SIZES = {"sentences": {"train": 200, "dev": 20, "test": 20},
         "tasks": {"nli": {"train": 3000, "dev": 30, "test": 1500}, "mldoc": {"train": 1000, "dev": 8, "test": 1000}}}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("tasks")
    generate_into(preset_config("quick", 0, SIZES), out)
    return out


def _nli_features(pair) -> list[str]:
    """Words of either sentence, the (removed, added) word pair, as sparse feature names."""
    p, h = pair.premise.split(), pair.hypothesis.split()
    edits = [f"{a}>{b}" for a, b in zip(p, h) if a != b]
    return [f"p:{w}" for w in p] + [f"h:{w}" for w in h] + edits


def _accuracy(train, test, features, label, labels, dense=lambda row: []) -> float:
    """A multinomial logit on a bag of `features` (plus `dense` ones) fitted on `train`, scored on `test`."""
    vocab = {f: i for i, f in enumerate(sorted({f for row in train for f in features(row)}))}
    width = len(dense(train[0]))

    def matrix(rows):
        x = np.zeros((len(rows), len(vocab) + width))
        for i, row in enumerate(rows):
            for f in features(row):
                if f in vocab:
                    x[i, vocab[f]] += 1
            x[i, len(vocab):] = dense(row)
        return x

    x_train, x_test = matrix(train), matrix(test)
    mean, scale = x_train.mean(axis=0), x_train.std(axis=0)
    scale[scale == 0] = 1.0
    y_train, y_test = (np.array([labels.index(label(r)) for r in rows]) for rows in (train, test))
    w = _fit((x_train - mean) / scale, y_train, len(labels), l2=1e-3)
    scores = np.hstack([(x_test - mean) / scale, np.ones((len(test), 1))]) @ w
    return float((scores.argmax(axis=1) == y_test).mean())


def _within_chance(accuracy: float, n: int, classes: int) -> bool:
    """Within 3 standard errors of chance for n test examples."""
    p = 1 / classes
    return abs(accuracy - p) < 3 * np.sqrt(p * (1 - p) / n)


def _by_target(folder: Path, read, score) -> dict[str, float]:
    """`score(train, test)` of the classifier fitted on src's training file, on each target's test file."""
    train = list(read(folder / "src.train.tsv"))
    return {lang: score(train, list(read(folder / f"{lang}.test.tsv"))) for lang in ("src", "same", "fake", "fake_sov")}


def test_nli_bag_of_words_learns_the_source_and_stays_at_chance_across_the_script(generated):
    results = _by_target(generated / "xnli", read_xnli, lambda train, test: _accuracy(
        train, test, _nli_features, lambda r: r.label, XNLI_LABELS, surface_features))
    assert results["src"] > 0.6, results  # it memorises the source's verb pairs
    assert _within_chance(results["fake"], 1500, 3) and _within_chance(results["fake_sov"], 1500, 3), results


def test_mldoc_bag_of_words_transfers_only_where_words_are_shared(generated):
    results = _by_target(generated / "mldoc", read_mldoc, lambda train, test: _accuracy(
        train, test, lambda r: r.text.split(), lambda r: r.label, MLDOC_LABELS, lambda r: [len(r.text.split())]))
    assert results["src"] > 0.6 and results["same"] > 0.4, results  # topics are in the words; shared words carry them
    assert _within_chance(results["fake"], 1000, 4) and _within_chance(results["fake_sov"], 1000, 4), results
