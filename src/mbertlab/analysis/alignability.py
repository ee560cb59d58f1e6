"""How much two corpora offer for aligning their words, measured without a model (issue 49).

A skip-gram model is trained on each corpus apart. An orthogonal map (Procrustes) is fitted on a random half
of a bilingual lexicon, and each held-out source word's translation is retrieved among the lexicon's
translations of its word class (or only the held-out ones: `candidates`). If the two languages' words keep
the same contexts, their vector spaces are near-isomorphic and the map finds the translations (Mikolov et al.
2013; Søgaard et al. 2018 on when they are not). Two references sit beside that MRR: the MRR from corpus
frequency rank alone, a cue generated languages may offer far more cleanly than real ones, and chance. All
ranks count a tie in the gold's favour, as `retrieval.word_retrieval` does.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import islice
from pathlib import Path

import numpy as np

from mbertlab.analysis.pos_classes import most_frequent_upos
from mbertlab.analysis.retrieval import word_retrieval
from mbertlab.errors import ConfigError, DataError
from mbertlab.formats.muse import read_dictionary
from mbertlab.formats.text import read_lines

ALL = "all"  # the row that ranks among every translation (every held-out one), whatever its class
CANDIDATES = ("class", "held-out")  # what a held-out translation is ranked among: see score_vectors


@dataclass(frozen=True)
class AlignabilitySettings:
    """Skip-gram settings and the split's seed; the defaults are the issue's measurement (50 dimensions,
    window 5) with 5 epochs."""

    dim: int = 50
    window: int = 5
    epochs: int = 5
    min_count: int = 1
    seed: int = 0
    max_sentences: int | None = None
    candidates: str = "class"  # or "held-out": see score_vectors

    def __post_init__(self):
        if self.candidates not in CANDIDATES:
            raise ConfigError(f"candidates {self.candidates!r}: expected one of {', '.join(CANDIDATES)}")
        if self.max_sentences is not None and self.max_sentences < 1:
            raise ConfigError(f"max_sentences {self.max_sentences}: expected at least 1 (or none: every line)")


@dataclass(frozen=True)
class ClassRow:
    """One class: its held-out words, the MRR of each ranking of their translations, and chance (H_n / n for
    n candidates, the expected reciprocal rank of a uniformly random ranking)."""

    name: str
    words: int
    context: float
    frequency: float
    chance: float


@dataclass(frozen=True)
class Alignability:
    rows: list[ClassRow]  # the classes, most held-out words first, then ALL
    pairs: int  # usable lexicon pairs (both words have vectors)
    fit_pairs: int  # of them, the half the map is fitted on


def read_corpus(path: Path, max_sentences: int | None = None) -> list[list[str]]:
    """Whitespace tokens of the first `max_sentences` non-blank lines; an empty corpus names its file."""
    sentences = [line.split() for line in islice(read_lines(path), max_sentences)]
    if not sentences:
        raise DataError(path, None, "found no sentence; expected a text file with one sentence per line")
    return sentences


def frequency_ranks(sentences: list[list[str]]) -> dict[str, int]:
    """Word -> 1-based rank by corpus count, most frequent first; equal counts are ranked by the word's string,
    so that every word has its own rank."""
    counts = Counter(w for s in sentences for w in s)
    return {w: i for i, w in enumerate(sorted(counts, key=lambda w: (-counts[w], w)), 1)}


def chance_mrr(n: int) -> float:
    """Expected reciprocal rank of the gold among n candidates ranked uniformly at random: H_n / n."""
    return sum(1 / k for k in range(1, n + 1)) / n


def frequency_reciprocal_ranks(queries: list[tuple[str, str]], candidates: list[str], src_ranks: dict[str, int],
                               tgt_ranks: dict[str, int]) -> list[float]:
    """Reciprocal rank of each query pair's translation among the candidates, ranked by
    |log rank_src(word) - log rank_tgt(candidate)| (closest first); rank = 1 + candidates strictly closer.
    Distances are compared exactly, as ratios max/min of integer ranks cross-multiplied, so equal distances
    (ranks 4 and 9 from rank 6) tie whatever the floating point."""
    ranks = np.array([tgt_ranks[c] for c in sorted(set(candidates))], dtype=np.int64)
    out = []
    for source, target in queries:
        a, b = src_ranks[source], tgt_ranks[target]
        p, q = max(a, b), min(a, b)  # the gold's distance is log(p / q)
        closer = int((np.maximum(ranks, a) * q < p * np.minimum(ranks, a)).sum())
        out.append(1 / (1 + closer))
    return out


def usable_pairs(lexicon: Path, src_vectors: dict, tgt_vectors: dict) -> list[tuple[str, str]]:
    """(source, translation) for each lexicon source word with a vector, its translation the first of its
    translations (in file order) that has a vector; sorted by source word. None usable names the lexicon."""
    pairs = []
    for source, targets in sorted(read_dictionary(lexicon).items()):
        found = next((t for t in targets if t in tgt_vectors), None)
        if source in src_vectors and found is not None:
            pairs.append((source, found))
    if not pairs:
        raise DataError(lexicon, None, "no pair whose source word occurs in the source corpus and a translation in "
                                       "the target corpus (as often as --min-count asks)")
    return pairs


def split_pairs(pairs: list[tuple[str, str]], seed: int) -> tuple[list, list]:
    """A seeded random half (rounded down) to fit the map on, and the rest, held out."""
    order = np.random.default_rng(seed).permutation(len(pairs))
    half = len(pairs) // 2
    return [pairs[i] for i in order[:half]], [pairs[i] for i in order[half:]]


def skipgram_vectors(sentences: list[list[str]], settings: AlignabilitySettings) -> dict[str, np.ndarray]:
    """Skip-gram vectors (gensim, one worker, seeded: the same corpus and settings give the same vectors)."""
    from mbertlab.config import parse_config
    from mbertlab.embeddings.static import StaticConfig, train_word2vec

    values = {"method": "word2vec_sg", "dim": settings.dim, "window": settings.window, "epochs": settings.epochs,
              "min_count": settings.min_count, "seed": settings.seed}
    return train_word2vec(parse_config(StaticConfig, values, "alignability settings"), sentences)


def normalised(vectors: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Unit length, mean-centred over the vocabulary, unit length again (Artetxe et al. 2018's normalisation
    before an orthogonal map): the centring removes the direction every word shares, which no map could align."""
    words = list(vectors)
    m = np.stack([vectors[w] for w in words]).astype(np.float64)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    m -= m.mean(0)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    return dict(zip(words, m))


def procrustes_map(src_vectors: dict[str, np.ndarray], tgt_vectors: dict[str, np.ndarray],
                   pairs: list[tuple[str, str]]) -> dict[str, np.ndarray]:
    """Every source vector mapped by the orthogonal W that minimises ||X W - Y|| over the pairs' vectors."""
    from scipy.linalg import orthogonal_procrustes

    x = np.stack([src_vectors[s] for s, _ in pairs])
    y = np.stack([tgt_vectors[t] for _, t in pairs])
    w, _ = orthogonal_procrustes(x, y)
    return {word: v @ w for word, v in src_vectors.items()}


def class_row(name: str, queries: list[tuple[str, str]], pool: list[tuple[str, str]], mapped: dict,
              tgt_vectors: dict, ranks: tuple[dict[str, int], dict[str, int]]) -> ClassRow:
    """The queries' translations ranked among the pool's translations (the queries are in the pool) by cosine
    after the map and by frequency rank."""
    by_cosine = word_retrieval({s: [t] for s, t in pool}, mapped, tgt_vectors).ranks
    context = float(np.mean([1 / by_cosine[s] for s, _ in queries]))
    candidates = sorted({t for _, t in pool})
    frequency = float(np.mean(frequency_reciprocal_ranks(queries, candidates, *ranks)))
    return ClassRow(name, len(queries), context, frequency, chance_mrr(len(candidates)))


def _by_class(pairs: list[tuple[str, str]], classes: dict[str, str]) -> dict[str | None, list[tuple[str, str]]]:
    groups: dict[str | None, list[tuple[str, str]]] = {}
    for pair in pairs:
        groups.setdefault(classes.get(pair[0]), []).append(pair)
    return groups


def score_vectors(vectors: tuple[dict, dict], ranks: tuple[dict[str, int], dict[str, int]],
                  pairs: list[tuple[str, str]], classes: dict[str, str], seed: int,
                  candidates: str = "class") -> list[ClassRow]:
    """Fit the map on a seeded half of the pairs; one row per class of the held-out source words (most words
    first; words without a class count only in ALL), then ALL. Each held-out translation is ranked among the
    held-out translations of its class (ALL: every held-out translation), or with `candidates="class"` among
    every lexicon translation of its class, fitted half included (ALL: every translation)."""
    fit, held_out = split_pairs(pairs, seed)
    mapped = procrustes_map(*vectors, fit)
    queries = _by_class(held_out, classes)
    pools = queries if candidates == "held-out" else _by_class(pairs, classes)
    named = sorted((c for c in queries if c is not None), key=lambda c: (-len(queries[c]), c))
    rows = [class_row(c, queries[c], pools[c], mapped, vectors[1], ranks) for c in named]
    everything = held_out if candidates == "held-out" else pairs
    return rows + [class_row(ALL, held_out, everything, mapped, vectors[1], ranks)]


def alignability(source: Path, target: Path, lexicon: Path, classes: Path | None = None,
                 settings: AlignabilitySettings = AlignabilitySettings()) -> Alignability:
    """The per-class table of the module docstring for two text files (one sentence per line, whitespace
    tokens), a MUSE lexicon and optionally a CoNLL-U file giving each source word its most frequent UPOS."""
    corpora = [read_corpus(Path(p), settings.max_sentences) for p in (source, target)]
    word_classes = most_frequent_upos([Path(classes)]) if classes is not None else {}
    vectors = tuple(normalised(skipgram_vectors(c, settings)) for c in corpora)
    pairs = usable_pairs(Path(lexicon), *vectors)
    if len(pairs) < 4:
        raise DataError(lexicon, None, f"found {len(pairs)} usable pairs; expected at least 4 (half fit the map, "
                                       "half are retrieved)")
    rows = score_vectors(vectors, (frequency_ranks(corpora[0]), frequency_ranks(corpora[1])), pairs, word_classes,
                         settings.seed, settings.candidates)
    return Alignability(rows, len(pairs), len(pairs) // 2)
