"""Generated classification tasks from the shared grammar: an XNLI-style NLI set and MLDoc-style topics.

Every example is one abstract tree (or pair of trees) realised in every language, so row i of
`xnli/<lang>.<split>.tsv` is the same example in every language: a premise from one language and a
hypothesis from another make a cross-lingual pair with the same gold label.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from mbertlab.data.generate.grammar import Draws, Grammar, Node
from mbertlab.data.generate.nli import nli_examples
from mbertlab.data.generate.realise import Spelling, linearise
from mbertlab.data.generate.config import GenerateConfig, LanguageConfig
from mbertlab.formats.classification import MLDOC_LABELS

SPLITS = ("train", "dev", "test")
SENTENCES_PER_DOCUMENT = 4


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
        if grammar.world is not None and grammar.config.world.topic:  # the world's topics shape the text
            trees = [grammar.sentence(draws, topic) for _ in range(SENTENCES_PER_DOCUMENT)]
        else:  # no topics in the text: a topic is a domain of nouns
            trees = [grammar.sentence(draws) for _ in range(SENTENCES_PER_DOCUMENT)]
            for tree in trees:
                _topical(tree, topic, draws, bias)
        out.append((MLDOC_LABELS[topic], trees))
    return out


def _text(tree: Node, lang: LanguageConfig, spelling: Spelling) -> str:
    """The sentence's words in surface order: `realise`'s forms without its heads and labels (a third of the time
    of writing the task sets)."""
    return " ".join(spelling.surface(node, lang.morphology) for node in linearise(tree, lang))


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
