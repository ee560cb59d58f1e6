"""Generated NLI pairs whose label only meaning decides: not length, word overlap, or either sentence alone.

The generated world gives verbs, adjectives and adverbs sense relations: within each group of 4 consecutive
concepts of a class, concepts 4g and 4g+1 are synonyms, so are 4g+2 and 4g+3, and the two pairs are antonyms
(nothing is both); concepts of different groups are unrelated (compatible). As in SNLI, both sentences
describe one scene, so every noun phrase names the same entity in both. A hypothesis is the premise with one
such word replaced by its synonym (entailment), an antonym (contradiction) or an unrelated word of its class
(neutral). The replaced word is drawn uniformly among the grouped concepts and the new one never occurs in the
premise, so lengths, overlap counts and each sentence's words have the same distribution in the three classes;
the label is a function of the (old, new) word pair alone, which a model that knows the lexicon's relations
can read off.
"""
from __future__ import annotations

from dataclasses import replace

from mbertlab.data.generate.grammar import Draws, Grammar, Node
from mbertlab.errors import ConfigError
from mbertlab.formats.records import XNLI_LABELS

EDITED = ("VERB", "ADJ", "ADV")
GROUP = 4
TRIES = 1000


def relation(a: int, b: int) -> str:
    """The label of replacing concept `a` by concept `b` of the same class (both in groups of GROUP)."""
    if a // GROUP != b // GROUP:
        return "neutral"
    return "entailment" if a // 2 == b // 2 else "contradiction"


def _nodes(root: Node) -> list[Node]:
    out = [root]
    for child in root.children:
        out += _nodes(child)
    return out


def _copy(node: Node) -> Node:
    return replace(node, children=[_copy(c) for c in node.children])


def _options(premise: Node, cls: str, old: int, grouped: int) -> dict[str, list[int]]:
    """label -> the concepts that may replace `old`: same class, grouped, absent from the premise."""
    used = {n.index for n in _nodes(premise) if n.cls == cls}
    out: dict[str, list[int]] = {label: [] for label in XNLI_LABELS}
    for new in range(grouped):
        if new != old and new not in used:
            out[relation(old, new)].append(new)
    return out


def _edit(grammar: Grammar, draws: Draws) -> tuple[Node, Node, dict[str, list[int]]]:
    """A premise, the node to edit (its concept redrawn uniformly among the grouped ones) and the replacements
    per label; drawn before the label is known, among those where every label has a replacement."""
    for _ in range(TRIES):
        premise = grammar.sentence(draws)
        nodes = [n for n in _nodes(premise) if n.cls in EDITED and grammar.sizes[n.cls] >= GROUP]
        if not nodes:
            continue
        node = nodes[draws.integers(len(nodes))]
        grouped = grammar.sizes[node.cls] // GROUP * GROUP
        node.index = draws.integers(grouped)
        options = _options(premise, node.cls, node.index, grouped)
        if all(options.values()):
            return premise, node, options
    raise ConfigError(f"generated NLI: no sentence in {TRIES} has a verb, adjective or adverb with a synonym, an "
                      f"antonym and an unrelated word; lexicon.VERB, ADJ or ADV must be at least {2 * GROUP}")


def nli_examples(grammar: Grammar, seed: list[int], n: int) -> list[tuple[str, Node, Node]]:
    """`n` (label, premise, hypothesis) trees; every block of 3 holds each label once (balanced)."""
    draws = grammar.draws(seed)
    out, rotation = [], 0
    for i in range(n):
        rotation = draws.integers(3) if i % 3 == 0 else rotation
        label = XNLI_LABELS[(i + rotation) % 3]
        premise, node, options = _edit(grammar, draws)
        choices = options[label]
        new = choices[draws.integers(len(choices))]
        old, node.index = node.index, new
        hypothesis = _copy(premise)
        node.index = old
        out.append((label, premise, hypothesis))
    return out
