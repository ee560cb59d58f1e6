"""Surface-only baseline for XNLI-style files: how much of a task lengths and word overlap alone decide.

A multinomial logistic regression (scipy L-BFGS, a light L2 penalty so separable data still converges) on
features that carry no meaning: premise and hypothesis lengths in words, their difference, and bag-of-words
overlap counts. An NLI set whose labels this baseline predicts well above chance measures annotation (or
generator) artifacts, not inference; the scorecard's surface check compares it with chance.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from mbertlab.errors import DataError
from mbertlab.formats.records import XNLI_LABELS, PairExample
from mbertlab.formats.xnli import read_xnli

FEATURES = ("premise_words", "hypothesis_words", "difference", "shared_types", "shared_tokens",
            "hypothesis_types_not_in_premise", "premise_types_not_in_hypothesis",
            "hypothesis_tokens_not_in_premise", "jaccard")
L2 = 1e-4


def surface_features(pair: PairExample) -> list[float]:
    """The FEATURES of one pair, on whitespace words as written."""
    p, h = pair.premise.split(), pair.hypothesis.split()
    sp, sh = set(p), set(h)
    shared_tokens = sum(w in sp for w in h)
    return [len(p), len(h), len(h) - len(p), len(sp & sh), shared_tokens, len(sh - sp), len(sp - sh),
            len(h) - shared_tokens, len(sp & sh) / len(sp | sh)]


def _matrix(path: Path) -> tuple[np.ndarray, np.ndarray]:
    pairs = list(read_xnli(path))
    if not pairs:
        raise DataError(path, None, "found no sentence pairs; expected an XNLI file with at least one pair")
    x = np.array([surface_features(p) for p in pairs], dtype=np.float64)
    y = np.array([XNLI_LABELS.index(p.label) for p in pairs])
    return x, y


def _fit(x: np.ndarray, y: np.ndarray, classes: int = len(XNLI_LABELS), l2: float = L2) -> np.ndarray:
    """Weights (features + 1 intercept row) x classes minimising the mean cross-entropy plus L2 on slopes."""
    n, k = len(y), classes
    design = np.hstack([x, np.ones((n, 1))])
    onehot = np.eye(k)[y]

    def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
        w = flat.reshape(design.shape[1], k)
        logits = design @ w
        log_p = logits - logsumexp(logits, axis=1, keepdims=True)
        slopes = w[:-1]
        value = -(onehot * log_p).sum() / n + l2 * (slopes ** 2).sum()
        grad = design.T @ (np.exp(log_p) - onehot) / n
        grad[:-1] += 2 * l2 * slopes
        return value, grad.ravel()

    result = minimize(loss, np.zeros(design.shape[1] * k), jac=True, method="L-BFGS-B",
                      options={"maxiter": 2000})
    return result.x.reshape(design.shape[1], k)


def surface_baseline_accuracy(train: Path, test: Path) -> float:
    """Accuracy in [0, 1] on `test` of the surface-feature classifier trained on `train` (XNLI files)."""
    x_train, y_train = _matrix(Path(train))
    x_test, y_test = _matrix(Path(test))
    mean, scale = x_train.mean(axis=0), x_train.std(axis=0)
    scale[scale == 0] = 1.0
    w = _fit((x_train - mean) / scale, y_train)
    logits = np.hstack([(x_test - mean) / scale, np.ones((len(y_test), 1))]) @ w
    return float((logits.argmax(axis=1) == y_test).mean())
