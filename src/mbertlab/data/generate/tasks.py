"""Generated classification tasks from the shared grammar: an XNLI-style NLI set and MLDoc-style topics.

Every example is one abstract tree (or pair of trees) realised in every language, so row i of
`xnli/<lang>.<split>.tsv` is the same example in every language: a premise from one language and a
hypothesis from another make a cross-lingual pair with the same gold label.
"""
from __future__ import annotations

import copy
from pathlib import Path

import numpy as np

from mbertlab.data.generate.grammar import Draws, Grammar, Node
from mbertlab.data.generate.realise import Spelling, realise
from mbertlab.data.generate.config import GenerateConfig, LanguageConfig
from mbertlab.formats.classification import MLDOC_LABELS

SPLITS = ("train", "dev", "test")
OPTIONAL = ("amod", "advmod", "obl", "nmod")
SENTENCES_PER_DOCUMENT = 4


def _without_modifiers(node: Node) -> Node:
    """Entailment: the premise minus its adjectives, adverbs and adpositional phrases (less information)."""
    node.children = [_without_modifiers(c) for c in node.children if c.deprel not in OPTIONAL]
    return node


def _swapped(root: Node, draws: Draws) -> Node:
    """Contradiction: subject and object exchanged (who did what to whom changes); when they are the same
    concept, the verb is replaced by another one instead."""
    subject = next(c for c in root.children if c.deprel == "nsubj")
    obj = next(c for c in root.children if c.deprel == "obj")
    if (subject.cls, subject.index) == (obj.cls, obj.index):
        root.index = (root.index + 1 + draws.integers(draws.sizes["VERB"] - 1)) % draws.sizes["VERB"]
        return root
    subject.deprel, obj.deprel = "obj", "nsubj"
    i, j = root.children.index(subject), root.children.index(obj)
    root.children[i], root.children[j] = obj, subject
    root.agree_plural = obj.plural
    return root


def _with_clause(root: Node, grammar: Grammar, draws: Draws) -> Node:
    """Neutral: an unrelated clause coordinated to the premise (neither implied nor excluded by it)."""
    clause = grammar.clause(draws, "conj")
    clause.children.insert(0, Node("CCONJ", draws.word("CCONJ"), "cc"))
    root.children.insert(len(root.children) - 1, clause)  # before the final punctuation
    return root


def nli_examples(grammar: Grammar, seed: list[int], n: int) -> list[tuple[str, Node, Node]]:
    """`n` (label, premise, hypothesis) trees; every block of 3 holds each label once (balanced)."""
    draws = grammar.draws(seed)
    out, rotation = [], 0
    for i in range(n):
        premise = grammar.sentence(draws)
        rotation = draws.integers(3) if i % 3 == 0 else rotation
        label = ("entailment", "neutral", "contradiction")[(i + rotation) % 3]
        hypothesis = copy.deepcopy(premise)
        if label == "entailment":
            hypothesis = _without_modifiers(hypothesis)
        elif label == "contradiction":
            hypothesis = _swapped(hypothesis, draws)
        else:
            hypothesis = _with_clause(hypothesis, grammar, draws)
        out.append((label, premise, hypothesis))
    return out


def _topical(node: Node, topic: int, draws: Draws, bias: float) -> None:
    """With probability `bias`, a noun is redrawn from the topic's domain (nouns whose index ≡ topic mod 4),
    Zipfian within it."""
    if node.cls == "NOUN" and draws.random() < bias:
        domain = np.arange(topic, draws.sizes["NOUN"], len(MLDOC_LABELS))
        p = draws.probs["NOUN"][domain]
        node.index = int(domain[int(draws.rng.choice(len(domain), p=p / p.sum()))])
    for child in node.children:
        _topical(child, topic, draws, bias)


def documents(grammar: Grammar, seed: list[int], n: int, bias: float) -> list[tuple[str, list[Node]]]:
    draws = grammar.draws(seed)
    out, rotation = [], 0
    for i in range(n):
        rotation = draws.integers(len(MLDOC_LABELS)) if i % len(MLDOC_LABELS) == 0 else rotation
        topic = (i + rotation) % len(MLDOC_LABELS)  # every block of 4 holds each topic once
        trees = [grammar.sentence(draws) for _ in range(SENTENCES_PER_DOCUMENT)]
        for tree in trees:
            _topical(tree, topic, draws, bias)
        out.append((MLDOC_LABELS[topic], trees))
    return out


def _text(tree: Node, lang: LanguageConfig, spelling: Spelling) -> str:
    return " ".join(t.form for t in realise(tree, lang, spelling))


def write_tasks(out: Path, config: GenerateConfig, grammar: Grammar, spellings: dict[str, Spelling]) -> None:
    """`xnli/<lang>.<split>.tsv` (header language, gold_label, sentence1, sentence2, pairID) and
    `mldoc/<lang>.<split>.tsv` (label<TAB>text) for every language with its own sentences (not unigram)."""
    langs = [l for l in config.languages if l.variant != "unigram"]
    sizes = config.tasks
    for k, split in enumerate(SPLITS):
        pairs = nli_examples(grammar, [config.seed, 1000 + k], getattr(sizes.nli, split))
        docs = documents(grammar, [config.seed, 2000 + k], getattr(sizes.mldoc, split), sizes.topic_bias)
        for lang in langs:
            spelling = spellings[lang.name]
            (out / "xnli").mkdir(parents=True, exist_ok=True)
            (out / "mldoc").mkdir(parents=True, exist_ok=True)
            with (out / "xnli" / f"{lang.name}.{split}.tsv").open("w", encoding="utf-8", newline="\n") as f:
                f.write("language\tgold_label\tsentence1\tsentence2\tpairID\n")
                for i, (label, premise, hypothesis) in enumerate(pairs):
                    f.write(f"{lang.name}\t{label}\t{_text(premise, lang, spelling)}\t"
                            f"{_text(hypothesis, lang, spelling)}\t{split}-{i}\n")
            with (out / "mldoc" / f"{lang.name}.{split}.tsv").open("w", encoding="utf-8", newline="\n") as f:
                for label, trees in docs:
                    f.write(f"{label}\t{' '.join(_text(t, lang, spelling) for t in trees)}\n")
