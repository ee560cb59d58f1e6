"""The generated world: concepts as points in a latent space shared by every language, so words carry meaning.

A dependent is drawn with probability proportional to its Zipf prior (a language's own, see `language_prior`)
times exp(cos(word, M_role · head) / selection + cos(word, topic) / topic_temperature). `M_role` is a random
rotation per syntactic role, so a verb prefers other nouns as subjects than as objects. A word's contexts then
depend on its point, and its translations (the same concept) have the same contexts in every language: that
shared shape is what lets an encoder align languages with no common script. Verbs come in groups of 4 (two
synonym pairs that are each other's antonyms) whose points are near, so NLI's sense relations are grounded in the
same distribution: synonyms share preferences and topics.

Every distribution is a table of cumulative probabilities, [head, topic, word], computed once per language;
a draw is one uniform number and a binary search.
"""
from __future__ import annotations

import numpy as np

from mbertlab.data.generate.config import GenerateConfig

NAME_CLASSES = ("PER", "LOC", "ORG")
MEANINGFUL = ("NOUN", "VERB", "ADJ", "ADV") + NAME_CLASSES
TOPICAL = ("NOUN", "VERB") + NAME_CLASSES  # classes whose choice the document's topic shifts
HEAD_CLASS = {"nsubj": "VERB", "obj": "VERB", "obl": "VERB", "advmod": "VERB", "nmod": "NOUN", "amod": "NOUN"}
# Verb groups: v = centre + SPREAD_PAIR·(±pair offset) + SPREAD_OWN·own noise, each part a unit vector: cosine
# about 0.9 between synonyms, 0.4 between antonyms, 0 across groups (for orthogonal parts).
SPREAD_PAIR, SPREAD_OWN = 0.62, 0.39
GROUP = 4


def _unit(m: np.ndarray) -> np.ndarray:
    return m / np.linalg.norm(m, axis=-1, keepdims=True)


def _rotation(rng: np.random.Generator, d: int) -> np.ndarray:
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))


def zipf(n: int, s: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** s
    return weights / weights.sum()


def verb_points(rng: np.random.Generator, n: int, d: int) -> np.ndarray:
    """Verbs 4g..4g+3 share a centre; 4g, 4g+1 (and 4g+2, 4g+3) share a pair offset, the two pairs opposite."""
    points = rng.standard_normal((n, d))
    for g in range(n // GROUP):
        centre, offset = _unit(rng.standard_normal((2, d)))
        for k in range(GROUP):
            sign = 1.0 if k < 2 else -1.0
            points[GROUP * g + k] = centre + SPREAD_PAIR * sign * offset + SPREAD_OWN * _unit(points[GROUP * g + k])
    return _unit(points)


class World:
    """Latent points of concepts, one rotation per role, topic directions; drawn once from the config's seed."""

    def __init__(self, config: GenerateConfig, sizes: dict[str, int]):
        w = config.world
        self.config, self.sizes = config, sizes
        rng = np.random.default_rng([config.seed, 31])
        d = w.dimensions
        self.points = {cls: (verb_points(rng, sizes[cls], d) if cls == "VERB"
                             else _unit(rng.standard_normal((sizes[cls], d)))) for cls in MEANINGFUL}
        self.maps = {role: _rotation(rng, d) for role in HEAD_CLASS}
        self.topics = _unit(rng.standard_normal((w.topics, d)))

    def language_prior(self, sample_seed: int | None) -> dict[str, np.ndarray]:
        """Zipf priors with a language's own log-normal offset per concept (none for `sample_seed` None: the
        world's shared prior, which the classification tasks use in every language)."""
        w = self.config.world
        rng = np.random.default_rng([self.config.seed, sample_seed, 11]) if sample_seed is not None else None
        out = {}
        for cls in MEANINGFUL:
            prior = zipf(self.sizes[cls], self.config.zipf)
            if rng is not None:
                prior = prior * np.exp(w.frequency_noise * rng.standard_normal(len(prior)))
            out[cls] = prior / prior.sum()
        return out

    def tables(self, prior: dict[str, np.ndarray]) -> "Choices":
        """The distribution of every (class, role) of an open class: [head, topic, word]; a source of meaning that
        is off leaves its axis of length 1 (the prior alone when both are off)."""
        w = self.config.world
        out: dict[tuple[str, str], Distribution] = {}
        for cls in MEANINGFUL:
            topical = None
            if w.topic and cls in TOPICAL:
                topical = self.topics @ self.points[cls].T / w.topic  # [topic, word]
            for role in [r for r in HEAD_CLASS if _takes(cls, r)] + ["free"]:  # free: no head (a root verb)
                heads = None
                if w.selection and role != "free":
                    heads = self.points[HEAD_CLASS[role]] @ self.maps[role].T / w.selection  # [head, d]
                out[(cls, role)] = Distribution(np.log(prior[cls]), self.points[cls], heads, topical)
        return Choices(out)


class Distribution:
    """p(word | head, topic) ∝ prior · exp(head · word + topical[topic, word]), as cumulative sums. Small tables
    are computed whole; a large lexicon's (k2020's paper scale: 80,000 nouns under 40,000 verbs) row by row, the
    most recent DENSE_LIMIT / words rows kept."""

    DENSE_LIMIT = 4_000_000  # entries of a table computed whole

    def __init__(self, log_prior: np.ndarray, points: np.ndarray, heads: np.ndarray | None,
                 topical: np.ndarray | None):
        self.log_prior, self.points, self.heads, self.topical = log_prior, points, heads, topical
        self.shape = (1 if heads is None else len(heads), 1 if topical is None else len(topical), len(log_prior))
        self.dense = self._rows(slice(None), slice(None)) if np.prod(self.shape) <= self.DENSE_LIMIT else None
        self.cache: dict[tuple[int, int], np.ndarray] = {}

    def _rows(self, head, topic) -> np.ndarray:
        logits = self.log_prior[None, None, :]
        if self.heads is not None:
            logits = logits + (self.heads[head] @ self.points.T).reshape(-1, 1, self.shape[2])
        if self.topical is not None:
            logits = logits + self.topical[topic].reshape(1, -1, self.shape[2])
        probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
        cdf = np.cumsum(probs, axis=-1)
        return cdf / cdf[..., -1:]

    def row(self, head: int | None, topic: int) -> np.ndarray:
        h = 0 if head is None or self.shape[0] == 1 else head
        t = min(topic, self.shape[1] - 1)
        if self.dense is not None:
            return self.dense[h, t]
        if (h, t) not in self.cache:
            if len(self.cache) * self.shape[2] > self.DENSE_LIMIT:
                self.cache.pop(next(iter(self.cache)))
            self.cache[(h, t)] = self._rows(slice(h, h + 1), slice(t, t + 1))[0, 0]
        return self.cache[(h, t)]


def _takes(cls: str, role: str) -> bool:
    """Which classes fill which roles: nouns and names are arguments, adjectives amod, adverbs advmod."""
    if cls == "ADJ":
        return role == "amod"
    if cls == "ADV":
        return role == "advmod"
    return cls != "VERB" and role in ("nsubj", "obj", "obl", "nmod")


class Choices:
    """A language's distributions; `None` where a (class, role) carries no meaning (the Zipf draw is used)."""

    def __init__(self, distributions: dict[tuple[str, str], Distribution]):
        self.distributions = distributions

    def table(self, cls: str, role: str, head: int | None, topic: int) -> np.ndarray | None:
        distribution = self.distributions.get((cls, role))
        return None if distribution is None else distribution.row(head, topic)
