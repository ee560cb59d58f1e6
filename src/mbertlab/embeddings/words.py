"""Word vectors from word-piece vectors: a word is the mean of its pieces, as contextual vectors average a
word's subwords (analysis/contextual.py), so static and contextual retrieval score the same words."""
from __future__ import annotations

import numpy as np


def known_words(tokenizer, words, pieces: set[str] | None = None) -> set[str]:
    """The words whose pieces are all in the vocabulary (no [UNK]) and, when given, all in `pieces`."""
    out = set()
    for word in words:
        toks = tokenizer.tokenize(word)
        if toks and tokenizer.unk_token not in toks and (pieces is None or all(t in pieces for t in toks)):
            out.add(word)
    return out


def word_vectors(tokenizer, piece_vectors: dict[str, np.ndarray], words) -> dict[str, np.ndarray]:
    """{word: mean of its pieces' vectors} for the words whose pieces all have a vector."""
    out = {}
    for word in words:
        toks = tokenizer.tokenize(word)
        if toks and all(t in piece_vectors for t in toks):
            out[word] = np.mean([piece_vectors[t] for t in toks], axis=0)
    return out


def restrict_dictionary(dictionary: dict[str, list[str]], sources: set[str], targets: set[str]
                        ) -> dict[str, list[str]]:
    """The entries whose source is in `sources`, each keeping only its translations in `targets`."""
    out = {}
    for word, translations in dictionary.items():
        kept = [t for t in translations if t in targets]
        if word in sources and kept:
            out[word] = kept
    return out
