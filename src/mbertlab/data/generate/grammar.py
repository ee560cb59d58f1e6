"""The shared grammar: abstract sentences (concepts, gold UPOS, dependency relations, entities).

A sentence is a tree of `Node`s rooted at a verb; languages only decide how to order and spell it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from mbertlab.data.generate.config import GenerateConfig
from mbertlab.data.generate.world import NAME_CLASSES, Choices, World, zipf

CLASS_UPOS = {"NOUN": "NOUN", "VERB": "VERB", "ADJ": "ADJ", "ADV": "ADV", "ADP": "ADP", "DET": "DET",
              "PRON": "PRON", "NUM": "NUM", "CCONJ": "CCONJ", "PER": "PROPN", "LOC": "PROPN", "ORG": "PROPN",
              "PUNCT": "PUNCT"}
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
    """Samples abstract sentences. With the world's meaning on, a word's choice depends on its head and the
    document's topic (world.py); with it off, on its Zipf rank inside its class alone (as before 2026-11-27)."""

    def __init__(self, config: GenerateConfig):
        self.config = config
        sizes = config.lexicon.model_dump()
        sizes["PUNCT"] = 1
        self.sizes = sizes
        self.probs = {c: zipf(n, config.zipf) for c, n in sizes.items()}
        self.world = World(config, sizes) if config.world.meaning else None
        self._choices: dict[int | None, Choices] = {}

    def draws(self, seed: list[int], language: int | None = None) -> "Draws":
        """A seeded source of decisions; with meaning on, over the word frequencies of the language whose
        `sample_seed` is `language` (None: the world's shared frequencies, as the tasks use)."""
        choices = None
        if self.world is not None:
            if language not in self._choices:
                self._choices[language] = self.world.tables(self.world.language_prior(language))
            choices = self._choices[language]
        return Draws(np.random.default_rng(seed), self.sizes, self.probs, choices)

    def topic(self, rng: "Draws") -> int:
        """A document's topic (drawing nothing when the world has no topics, so the context-free text stays as
        it was)."""
        if self.world is None or not self.config.world.topic:
            return 0
        return rng.integers(self.config.world.topics)

    def text(self, rng: "Draws", n: int) -> list[Node]:
        """`n` sentences of running text: documents of `world.document_sentences` sentences share a topic."""
        out, topic = [], 0
        for i in range(n):
            if i % self.config.world.document_sentences == 0:
                topic = self.topic(rng)
            out.append(self.sentence(rng, topic))
        return out

    def sentence(self, rng: "Draws", topic: int = 0) -> Node:
        root = self.clause(rng, "root", topic)
        if rng.random() < self.config.p_coordination:
            second = self.clause(rng, "conj", topic)
            second.children.insert(0, Node("CCONJ", rng.word("CCONJ"), "cc"))
            root.add(second)
        root.add(Node("PUNCT", 0, "punct"))
        return root

    def clause(self, rng: "Draws", deprel: str, topic: int) -> Node:
        verb = Node("VERB", rng.choose("VERB", "free", None, topic), deprel)
        subject = verb.add(self.noun_phrase(rng, "nsubj", verb.index, topic))
        verb.agree_plural = subject.plural
        verb.add(self.noun_phrase(rng, "obj", verb.index, topic))
        if rng.random() < self.config.p_pp:
            verb.add(self.prepositional(rng, "obl", verb.index, topic))
        if rng.random() < self.config.p_adverb:
            verb.add(Node("ADV", rng.choose("ADV", "advmod", verb.index, topic), "advmod"))
        return verb

    def noun_phrase(self, rng: "Draws", deprel: str, head: int, topic: int, depth: int = 0) -> Node:
        """A pronoun, a name or DET [NUM] ADJ{0,2} NOUN [PP], filling role `deprel` of concept `head` (a verb
        for nsubj/obj/obl, a noun for nmod)."""
        c = self.config
        draw = rng.random()
        if draw < c.p_pronoun:
            index = rng.word("PRON")
            return Node("PRON", index, deprel, plural=index >= self.sizes["PRON"] // 2)
        if draw < c.p_pronoun + c.p_name:
            return self.name(rng, deprel, head, topic)
        noun = Node("NOUN", rng.choose("NOUN", deprel, head, topic), deprel, plural=bool(rng.random() < 0.3))
        noun.add(Node("DET", rng.word("DET"), "det"))
        if rng.random() < 0.15:
            noun.add(Node("NUM", rng.word("NUM"), "nummod"))
            noun.plural = True
        while rng.random() < c.p_adjective and sum(ch.cls == "ADJ" for ch in noun.children) < 2:
            noun.add(Node("ADJ", rng.choose("ADJ", "amod", noun.index, topic), "amod"))
        if depth == 0 and rng.random() < c.p_pp / 2:
            noun.add(self.prepositional(rng, "nmod", noun.index, topic, depth + 1))
        return noun

    def prepositional(self, rng: "Draws", deprel: str, head: int, topic: int, depth: int = 0) -> Node:
        noun = self.noun_phrase(rng, deprel, head, topic, depth + 1)
        noun.children.insert(0, Node("ADP", rng.word("ADP"), "case"))
        return noun

    def name(self, rng: "Draws", deprel: str, head: int, topic: int) -> Node:
        kind = NAME_CLASSES[int(rng.integers(3))]
        entity = ROLE_ENTITY[deprel] if self.config.entities == "by_role" else kind
        first = Node(kind, rng.choose(kind, deprel, head, topic), deprel, entity=entity)
        if kind != "LOC" and rng.random() < 0.4:
            first.add(Node(kind, rng.choose(kind, "free", None, topic), "flat", entity=entity))
        return first


class Draws:
    """A seeded source of decisions; Zipfian word draws come from pre-drawn blocks (one numpy call per 4096),
    and so do the uniform numbers that draw from the world's tables."""

    BLOCK = 4096

    def __init__(self, rng: np.random.Generator, sizes: dict[str, int], probs: dict[str, np.ndarray],
                 choices: Choices | None = None):
        self.rng, self.sizes, self.probs, self.choices = rng, sizes, probs, choices
        self._buffers: dict[str, list[int]] = {}
        self._uniform: list[float] = []

    def random(self) -> float:
        return float(self.rng.random())

    def integers(self, n: int) -> int:
        return int(self.rng.integers(n))

    def word(self, cls: str) -> int:
        """A concept of `cls` by its Zipf rank alone."""
        buffer = self._buffers.get(cls)
        if not buffer:
            buffer = self.rng.choice(self.sizes[cls], size=self.BLOCK, p=self.probs[cls]).tolist()
            buffer.reverse()
            self._buffers[cls] = buffer
        return buffer.pop()

    def choose(self, cls: str, role: str, head: int | None, topic: int) -> int:
        """A concept of `cls` filling `role` of concept `head` in a document on `topic` (the Zipf draw when the
        world carries no meaning)."""
        table = self.choices.table(cls, role, head, topic) if self.choices is not None else None
        if table is None:
            return self.word(cls)
        if not self._uniform:
            self._uniform = self.rng.random(self.BLOCK).tolist()
        return int(np.searchsorted(table, self._uniform.pop(), side="right"))
