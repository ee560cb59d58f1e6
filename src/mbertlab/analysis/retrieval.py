"""Word retrieval with a bilingual dictionary (Liu et al. 2020 §2.1): for each source word, rank every
target word of the dictionary by cosine similarity; MRR is the mean of 1/rank of the gold translation
(the best-ranked one when there are several), P@k the share with a gold translation in the top k."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator

import numpy as np


@dataclass
class RetrievalScores:
    mrr: float
    p_at_1: float
    p_at_5: float
    pairs: int  # source words evaluated (both sides have a vector)
    ranks: dict[str, int]  # best gold rank per source word


MEMORY_MB = 512.0  # default bound on the similarity buffers alive at once (MiB)
TIE = 1e-9  # scores closer than this tie: equal vectors give cosines that differ in the last bits, by BLAS kernel


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)


def _blocks(n_sources: int, n_targets: int, memory_mb: float) -> Iterator[slice]:
    """Slices of source rows such that two float64 blocks of their similarities to every target (the most
    alive at once) fit in `memory_mb` MiB, one row at least: the sources x targets matrix is never built."""
    rows = max(1, int(memory_mb * 2**20) // (2 * 8 * max(1, n_targets)))
    return (slice(start, min(start + rows, n_sources)) for start in range(0, n_sources, rows))


def _top_k_sorted(values: np.ndarray, k: int, axis: int) -> np.ndarray:
    """The k largest values along `axis` in ascending order, as np.sort(values, axis)[-k:] has them."""
    n = values.shape[axis]
    return np.sort(np.take(np.partition(values, n - k, axis=axis), range(n - k, n), axis=axis), axis=axis)


def _csls_target_means(src: np.ndarray, tgt: np.ndarray, k: int, memory_mb: float) -> np.ndarray:
    """Each target's mean cosine to its k nearest sources, keeping only the running top k per target."""
    top = np.empty((0, len(tgt)))
    for rows in _blocks(len(src), len(tgt), memory_mb):
        both = np.concatenate([top, src[rows] @ tgt.T])
        top = _top_k_sorted(both, min(k, len(both)), axis=0)
        del both
    return top.mean(0)


def _block_scores(src: np.ndarray, tgt: np.ndarray, r_tgt: np.ndarray | None, k: int) -> np.ndarray:
    """Scores [rows, targets] of a block of (normalised) sources: cosine, or CSLS (Conneau et al. 2018:
    2·cos − the mean cosine of each side's k nearest neighbours on the other side), updated in place."""
    scores = src @ tgt.T
    if r_tgt is not None:
        r_src = _top_k_sorted(scores, min(k, len(tgt)), axis=1).mean(1)
        scores *= 2
        scores -= r_src[:, None]
        scores -= r_tgt[None, :]
    return scores


def word_retrieval(dictionary: dict[str, list[str]], src_vectors: dict[str, np.ndarray],
                   tgt_vectors: dict[str, np.ndarray], csls: bool = False, k: int = 10,
                   memory_mb: float = MEMORY_MB) -> RetrievalScores:
    """Ranks of the gold translations among the dictionary's target words, the similarities computed by
    blocks of source rows within `memory_mb` MiB; ties count in the word's favour (rank = 1 + targets scored
    higher by more than `TIE`, so words with equal vectors tie however the matrix product was blocked)."""
    sources = [w for w in dictionary if w in src_vectors and any(t in tgt_vectors for t in dictionary[w])]
    targets = sorted({t for w in sources for t in dictionary[w] if t in tgt_vectors})
    if not sources:
        return RetrievalScores(0.0, 0.0, 0.0, 0, {})
    index = {t: i for i, t in enumerate(targets)}
    src = _normalise(np.stack([src_vectors[w] for w in sources]).astype(np.float64))
    tgt = _normalise(np.stack([tgt_vectors[t] for t in targets]).astype(np.float64))
    r_tgt = _csls_target_means(src, tgt, min(k, len(src)), memory_mb) if csls else None
    ranks = {}
    for rows in _blocks(len(src), len(tgt), memory_mb):
        scores = _block_scores(src[rows], tgt, r_tgt, k)
        for i, word in enumerate(sources[rows]):
            best = scores[i, [index[t] for t in dictionary[word] if t in index]].max()
            ranks[word] = int((scores[i] > best + TIE).sum()) + 1
        del scores  # before the next block is computed
    values = np.array(list(ranks.values()), dtype=np.float64)
    return RetrievalScores(float((1 / values).mean()), float((values <= 1).mean()), float((values <= 5).mean()),
                           len(sources), ranks)


def mrr_by_class(ranks: dict[str, int], classes: dict[str, str], groups: dict[str, set[str]]) -> dict[str, float]:
    """MRR over the source words of each class (e.g. NOUN) and of each group of classes (open, closed)."""
    out: dict[str, float] = {}
    by: dict[str, list[int]] = {}
    for word, rank in ranks.items():
        cls = classes.get(word)
        if cls is None:
            continue
        by.setdefault(cls, []).append(rank)
        for name, members in groups.items():
            if cls in members:
                by.setdefault(name, []).append(rank)
    for name, rs in sorted(by.items()):
        out[name] = float(np.mean([1 / r for r in rs]))
    return out
