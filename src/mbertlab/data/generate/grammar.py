"""The shared grammar: abstract sentences (concepts, gold UPOS, dependency relations, entities).

A sentence is a tree of `Node`s rooted at a verb; languages only decide how to order and spell it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mbertlab.data.generate.config import GenerateConfig

CLASS_UPOS = {"NOUN": "NOUN", "VERB": "VERB", "ADJ": "ADJ", "ADV": "ADV", "ADP": "ADP", "DET": "DET",
              "PRON": "PRON", "NUM": "NUM", "CCONJ": "CCONJ", "PER": "PROPN", "LOC": "PROPN", "ORG": "PROPN",
              "PUNCT": "PUNCT"}
NAME_CLASSES = ("PER", "LOC", "ORG")
ROLE_ENTITY = {"nsubj": "PER", "obj": "ORG", "obl": "LOC", "nmod": "LOC"}  # entities: by_role


@dataclass
class Node:
    cls: str
    index: int
    deprel: str
    children: list["Node"] = field(default_factory=list)
    plural: bool = False
    entity: str | None = None  # PER/LOC/ORG on every token of a name
    agree_plural: bool = False  # verbs: the subject is plural

    @property
    def upos(self) -> str:
        return CLASS_UPOS[self.cls]

    def add(self, child: "Node") -> "Node":
        self.children.append(child)
        return child


class Grammar:
    """Samples abstract sentences with Zipfian word choice inside each class."""

    def __init__(self, config: GenerateConfig):
        self.config = config
        sizes = config.lexicon.model_dump()
        sizes["PUNCT"] = 1
        self.sizes = sizes
        self.probs = {c: _zipf(n, config.zipf) for c, n in sizes.items()}

    def draws(self, seed: list[int]) -> "Draws":
        return Draws(np.random.default_rng(seed), self.sizes, self.probs)

    def sentence(self, rng: Draws) -> Node:
        root = self.clause(rng, "root")
        if rng.random() < self.config.p_coordination:
            second = self.clause(rng, "conj")
            second.children.insert(0, Node("CCONJ", rng.word("CCONJ"), "cc"))
            root.add(second)
        root.add(Node("PUNCT", 0, "punct"))
        return root

    def clause(self, rng: Draws, deprel: str) -> Node:
        verb = Node("VERB", rng.word("VERB"), deprel)
        subject = verb.add(self.noun_phrase(rng, "nsubj"))
        verb.agree_plural = subject.plural
        verb.add(self.noun_phrase(rng, "obj"))
        if rng.random() < self.config.p_pp:
            verb.add(self.prepositional(rng, "obl"))
        if rng.random() < self.config.p_adverb:
            verb.add(Node("ADV", rng.word("ADV"), "advmod"))
        return verb

    def noun_phrase(self, rng: Draws, deprel: str, depth: int = 0) -> Node:
        c = self.config
        draw = rng.random()
        if draw < c.p_pronoun:
            index = rng.word("PRON")
            return Node("PRON", index, deprel, plural=index >= self.sizes["PRON"] // 2)
        if draw < c.p_pronoun + c.p_name:
            return self.name(rng, deprel)
        noun = Node("NOUN", rng.word("NOUN"), deprel, plural=bool(rng.random() < 0.3))
        noun.add(Node("DET", rng.word("DET"), "det"))
        if rng.random() < 0.15:
            noun.add(Node("NUM", rng.word("NUM"), "nummod"))
            noun.plural = True
        while rng.random() < c.p_adjective and sum(ch.cls == "ADJ" for ch in noun.children) < 2:
            noun.add(Node("ADJ", rng.word("ADJ"), "amod"))
        if depth == 0 and rng.random() < c.p_pp / 2:
            noun.add(self.prepositional(rng, "nmod", depth + 1))
        return noun

    def prepositional(self, rng: Draws, deprel: str, depth: int = 0) -> Node:
        noun = self.noun_phrase(rng, deprel, depth + 1)
        noun.children.insert(0, Node("ADP", rng.word("ADP"), "case"))
        return noun

    def name(self, rng: Draws, deprel: str) -> Node:
        kind = NAME_CLASSES[int(rng.integers(3))]
        entity = ROLE_ENTITY[deprel] if self.config.entities == "by_role" else kind
        head = Node(kind, rng.word(kind), deprel, entity=entity)
        if kind != "LOC" and rng.random() < 0.4:
            head.add(Node(kind, rng.word(kind), "flat", entity=entity))
        return head


class Draws:
    """A seeded source of decisions; Zipfian word draws come from pre-drawn blocks (one numpy call per 4096)."""

    BLOCK = 4096

    def __init__(self, rng: np.random.Generator, sizes: dict[str, int], probs: dict[str, np.ndarray]):
        self.rng, self.sizes, self.probs = rng, sizes, probs
        self._buffers: dict[str, list[int]] = {}

    def random(self) -> float:
        return float(self.rng.random())

    def integers(self, n: int) -> int:
        return int(self.rng.integers(n))

    def word(self, cls: str) -> int:
        buffer = self._buffers.get(cls)
        if not buffer:
            buffer = self.rng.choice(self.sizes[cls], size=self.BLOCK, p=self.probs[cls]).tolist()
            buffer.reverse()
            self._buffers[cls] = buffer
        return buffer.pop()


def _zipf(n: int, s: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** s
    return weights / weights.sum()
