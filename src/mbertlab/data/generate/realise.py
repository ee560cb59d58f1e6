"""Languages: how each spells concepts (lexicon, script, suffixes) and orders a sentence's tree."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from mbertlab.data.generate.config import LanguageConfig
from mbertlab.errors import ConfigError
from mbertlab.data.generate.grammar import NAME_CLASSES, Grammar, Node

CLOSED = ("DET", "ADP", "PRON", "CCONJ")
MAX_TRIES = 100_000  # draws of a new form before the alphabet is judged too small for the lexicon


@dataclass
class Token:
    form: str
    upos: str
    head: int  # 1-based, 0 = root
    deprel: str
    ner: str  # BIO tag
    concept: tuple[str, int]


@dataclass
class Spelling:
    """Everything a language needs to write a word: one form per concept plus two suffixes."""

    lexicon: dict[tuple[str, int], str]
    plural: str
    agreement: str

    def surface(self, node: Node, morphology: bool) -> str:
        form = self.lexicon[(node.cls, node.index)]
        if morphology and node.cls == "NOUN" and node.plural:
            return form + self.plural
        if morphology and node.cls == "VERB" and node.agree_plural:
            return form + self.agreement
        return form


def fresh_spelling(grammar: Grammar, lang: LanguageConfig, rng: np.random.Generator,
                   base: Spelling | None) -> Spelling:
    """New word forms from the language's alphabet; names, numbers and a share of the base's words kept."""
    consonants, vowels = lang.alphabet.split(" ")
    syllables = [c + v for c in consonants for v in vowels]
    taken = set(base.lexicon.values()) if base else set()
    lexicon: dict[tuple[str, int], str] = {}
    for cls, n in grammar.sizes.items():
        for i in range(n):
            key = (cls, i)
            if base is not None and (cls in NAME_CLASSES or cls in ("NUM", "PUNCT")
                                     or rng.random() < lang.shared_vocabulary):
                lexicon[key] = base.lexicon[key]
                continue
            form = _new_form(cls, i, syllables, rng, taken)
            if form is None:
                raise ConfigError(f"generated language {lang.name!r}: alphabet {lang.alphabet!r} spells too few "
                                  f"distinct {cls} forms for the lexicon ({n} concepts); expected more consonants "
                                  "or vowels, or a smaller lexicon")
            lexicon[key] = form
            taken.add(form)
    return Spelling(lexicon, vowels[-1] + consonants[4 % len(consonants)],
                    consonants[5 % len(consonants)] + vowels[0])


def _new_form(cls: str, index: int, syllables: list[str], rng: np.random.Generator,
              taken: set[str]) -> str | None:
    """A form no other concept has; None when MAX_TRIES draws found none (the alphabet is too small)."""
    if cls == "NUM":
        return str(index + 2)
    if cls == "PUNCT":
        return "."
    for _ in range(MAX_TRIES):
        n = 1 if cls in CLOSED else int(rng.integers(2, 4))
        form = "".join(syllables[int(rng.integers(len(syllables)))] for _ in range(n))
        if cls in NAME_CLASSES:
            form = form.capitalize()
        if form not in taken:
            return form
    return None


def derived_spelling(base: Spelling, respell: Callable[[str], str]) -> Spelling:
    """The base's words respelled one by one (fake script: the same mapping in a disjoint script, no shared
    character); its suffixes too."""
    return Spelling({k: respell(v) for k, v in base.lexicon.items()}, respell(base.plural), respell(base.agreement))


def linearise(node: Node, lang: LanguageConfig) -> list[Node]:
    """The nodes of the tree in surface order."""
    before, after = [], []
    if node.cls == "VERB":
        args = [c for c in node.children if c.deprel in ("nsubj", "obj", "obl", "advmod")]
        subject = [c for c in args if c.deprel == "nsubj"]
        rest = [c for c in args if c.deprel != "nsubj"]
        before = [c for c in node.children if c.deprel == "cc"]
        if lang.word_order == "SVO":
            before, after = before + subject, rest
        elif lang.word_order == "SOV":
            before = before + subject + rest
        else:
            after = subject + rest
        after += [c for c in node.children if c.deprel in ("conj", "punct")]
    else:
        for child in node.children:
            if child.deprel == "case":
                (before if lang.adposition == "pre" else after).append(child)
            elif child.deprel in ("det", "nummod") or (child.deprel == "amod" and lang.adjective == "before"):
                before.append(child)
            else:
                after.append(child)
        if lang.adposition == "post":  # postpositions close the phrase
            after = [c for c in after if c.deprel != "case"] + [c for c in after if c.deprel == "case"]
    out: list[Node] = []
    for child in before:
        out += linearise(child, lang)
    out.append(node)
    for child in after:
        out += linearise(child, lang)
    return out


def realise(root: Node, lang: LanguageConfig, spelling: Spelling) -> list[Token]:
    order = linearise(root, lang)
    position = {id(n): i + 1 for i, n in enumerate(order)}
    parent: dict[int, Node] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in node.children:
            parent[id(child)] = node
            stack.append(child)
    tokens, previous_entity = [], None
    for node in order:
        head = position[id(parent[id(node)])] if id(node) in parent else 0
        ner = "O"
        if node.entity:
            ner = ("I-" if previous_entity == node.entity and node.deprel == "flat" else "B-") + node.entity
        previous_entity = node.entity
        tokens.append(Token(spelling.surface(node, lang.morphology), node.upos, head,
                            "root" if head == 0 else node.deprel, ner, (node.cls, node.index)))
    return tokens
