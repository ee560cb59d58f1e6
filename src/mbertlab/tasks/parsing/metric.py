"""Attachment scores as the CoNLL 2018 shared task defines them: over syntactic words, LAS counts a word
whose head and universal relation (subtype stripped) are both right. `punct=False` leaves out words whose
gold UPOS is PUNCT or SYM (the convention of Wu & Dredze 2019 and most parsing papers)."""
from __future__ import annotations

from mbertlab.formats.conllu import strip_subtype

PUNCT_TAGS = ("PUNCT", "SYM")


def attachment_scores(gold_heads: list[list[int]], gold_rels: list[list[str]], gold_upos: list[list[str]],
                      pred_heads: list[list[int]], pred_rels: list[list[str]], punct: bool = True) -> dict[str, float]:
    total = uas = las = 0
    for gh, gr, gu, ph, pr in zip(gold_heads, gold_rels, gold_upos, pred_heads, pred_rels):
        for i in range(len(gh)):
            if not punct and gu[i] in PUNCT_TAGS:
                continue
            total += 1
            if gh[i] == ph[i]:
                uas += 1
                las += strip_subtype(gr[i]) == strip_subtype(pr[i])
    suffix = "" if punct else "_nopunct"
    return {f"uas{suffix}": uas / total if total else 0.0, f"las{suffix}": las / total if total else 0.0}
