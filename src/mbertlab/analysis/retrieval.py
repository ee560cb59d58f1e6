"""Word retrieval with a bilingual dictionary (Liu et al. 2020 §2.1): for each source word, rank every
target word of the dictionary by cosine similarity; MRR is the mean of 1/rank of the gold translation
(the best-ranked one when there are several), P@k the share with a gold translation in the top k."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class RetrievalScores:
    mrr: float
    p_at_1: float
    p_at_5: float
    pairs: int  # source words evaluated (both sides have a vector)
    ranks: dict[str, int]  # best gold rank per source word


def _normalise(m: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(m, axis=1, keepdims=True)
    return m / np.maximum(norms, 1e-12)


def csls_scores(src: np.ndarray, tgt: np.ndarray, k: int = 10) -> np.ndarray:
    """CSLS (Conneau et al. 2018): 2·cos − mean cos of each side's k nearest neighbours on the other side."""
    cos = _normalise(src) @ _normalise(tgt).T
    k_t = min(k, cos.shape[1])
    k_s = min(k, cos.shape[0])
    r_src = np.sort(cos, axis=1)[:, -k_t:].mean(1)
    r_tgt = np.sort(cos, axis=0)[-k_s:, :].mean(0)
    return 2 * cos - r_src[:, None] - r_tgt[None, :]


def word_retrieval(dictionary: dict[str, list[str]], src_vectors: dict[str, np.ndarray],
                   tgt_vectors: dict[str, np.ndarray], csls: bool = False) -> RetrievalScores:
    sources = [w for w in dictionary if w in src_vectors and any(t in tgt_vectors for t in dictionary[w])]
    targets = sorted({t for w in sources for t in dictionary[w] if t in tgt_vectors})
    if not sources:
        return RetrievalScores(0.0, 0.0, 0.0, 0, {})
    index = {t: i for i, t in enumerate(targets)}
    src = np.stack([src_vectors[w] for w in sources]).astype(np.float64)
    tgt = np.stack([tgt_vectors[t] for t in targets]).astype(np.float64)
    scores = csls_scores(src, tgt) if csls else _normalise(src) @ _normalise(tgt).T
    ranks = {}
    for i, word in enumerate(sources):
        gold = [index[t] for t in dictionary[word] if t in index]
        best = scores[i, gold].max()
        ranks[word] = int((scores[i] > best).sum()) + 1
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
