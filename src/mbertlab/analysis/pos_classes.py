"""MRR by part of speech (Liu et al. 2020 Table 1): each source word takes its most frequent UPOS in a
UD treebank; MRR is then reported per class and for UD's open and closed classes."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from mbertlab.analysis.retrieval import mrr_by_class
from mbertlab.formats.conllu import read_conllu
from mbertlab.formats.records import OPEN_CLASS_UPOS, UPOS_TAGS

OPEN_CLASSES = frozenset(OPEN_CLASS_UPOS)
CLOSED_CLASSES = frozenset(set(UPOS_TAGS) - OPEN_CLASSES - {"PUNCT", "SYM", "X"})  # UD: "other" is not closed
REPORTED = ("NOUN", "VERB", "ADJ", "ADV", "open", "closed")


def most_frequent_upos(paths: list[Path], lowercase: bool = False) -> dict[str, str]:
    """word -> its most frequent UPOS over the treebank files (ties: alphabetically first tag); a `.tsv` file is
    read as XTREME's token<TAB>UPOS form (the taskdata stage's layout), anything else as CoNLL-U."""
    from mbertlab.formats.udpos import read_udpos_tsv

    counts: dict[str, Counter] = {}
    for path in paths:
        tagged = ((s.tokens, s.tags) for s in read_udpos_tsv(path)) if Path(path).suffix == ".tsv" else \
            ((s.forms, s.upos) for s in read_conllu(path))
        for forms, tags in tagged:
            for form, tag in zip(forms, tags):
                counts.setdefault(form.lower() if lowercase else form, Counter())[tag] += 1
    return {w: min(c, key=lambda t: (-c[t], t)) for w, c in counts.items()}


def mrr_by_pos(ranks: dict[str, int], classes: dict[str, str]) -> dict[str, float]:
    """MRR for NOUN, VERB, ADJ, ADV, open and closed (only the ones with at least one word)."""
    scores = mrr_by_class(ranks, classes, {"open": set(OPEN_CLASSES), "closed": set(CLOSED_CLASSES)})
    return {name: scores[name] for name in REPORTED if name in scores}
