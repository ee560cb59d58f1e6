"""Maximum spanning tree decoding with exactly one root.

`ufal.chu_liu_edmonds` (TurboParser's Chu-Liu/Edmonds) finds the best arborescence but may attach several
words to the artificial root; then every word is tried as the single root child and the best tree kept
(the approach of Dozat & Manning's and Zhang et al.'s parsers). NaN marks a forbidden arc for the library,
and it ignores scores within its tolerance of zero, so scores are shifted below −1 first (every tree has
n arcs, so a constant shift does not change which tree is best).
"""
from __future__ import annotations

import numpy as np


def decode_mst(scores: np.ndarray) -> list[int]:
    """Heads (0 = root) of words 1..n from scores[dependent, head] of shape (n + 1, n + 1)."""
    from ufal.chu_liu_edmonds import chu_liu_edmonds

    n = scores.shape[0] - 1
    if n == 1:
        return [0]
    s = np.asarray(scores, dtype=np.float64)
    s = s - (np.nanmax(s) + 1.0)
    np.fill_diagonal(s, np.nan)
    s[0, :] = np.nan  # the root has no head
    heads, _ = chu_liu_edmonds(s)
    if sum(1 for h in heads[1:] if h == 0) == 1:
        return list(heads[1:])
    best, best_score = None, -np.inf
    for root in range(1, n + 1):
        constrained = s.copy()
        constrained[1:, 0] = np.nan
        constrained[root, 0] = s[root, 0]
        candidate, score = chu_liu_edmonds(constrained)
        if candidate is not None and score > best_score:
            best, best_score = candidate, score
    return list(best[1:])
