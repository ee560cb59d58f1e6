"""Generated NLI pairs whose label only meaning decides: not length, word overlap, or either sentence alone.

The generated world gives verbs sense relations: in each group of 4 consecutive verb concepts, 4g and 4g+1 are
synonyms, so are 4g+2 and 4g+3, and the two pairs are antonyms (no one does both to the same thing); verbs of
different groups are unrelated (compatible). As in SNLI, both sentences describe one scene, so every noun
phrase names the same entity in both. A hypothesis is the premise with one verb replaced by its synonym
(entailment), an antonym (contradiction) or an unrelated verb (neutral). The replaced verb is drawn uniformly
among the GROUPS groups and the new one never occurs in the premise, so lengths, overlap counts and each
sentence's words have the same distribution in the three classes; the label is a function of the (old, new)
verb pair alone, which a model that knows the verbs' relations (learnt from the training pairs) reads off.
"""
from __future__ import annotations

from dataclasses import replace

from mbertlab.data.generate.grammar import Draws, Grammar, Node
from mbertlab.errors import ConfigError
from mbertlab.formats.records import XNLI_LABELS

GROUP = 4
CONTEXT_FREE_GROUPS = 2  # the context-free world: 8 related verbs (a small transformer learns them from 2,000
# pairs, 94-98%; 24 words: 53%); with meaning, synonyms are near in the world and every verb has a group


def verb_groups(config) -> int:
    """How many groups of 4 verbs NLI edits."""
    if not config.world.meaning:
        return CONTEXT_FREE_GROUPS
    return config.world.verb_groups or config.lexicon.VERB // GROUP


def relation(a: int, b: int) -> str:
    """The label of replacing verb concept `a` by verb concept `b` (both grouped)."""
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


def _options(premise: Node, old: int, grouped: int) -> dict[str, list[int]]:
    """label -> the verbs that may replace verb `old`: grouped, absent from the premise."""
    used = {n.index for n in _nodes(premise) if n.cls == "VERB"}
    out: dict[str, list[int]] = {label: [] for label in XNLI_LABELS}
    for new in range(grouped):
        if new != old and new not in used:
            out[relation(old, new)].append(new)
    return out


def _edit(grammar: Grammar, draws: Draws, grouped: int) -> tuple[Node, Node, dict[str, list[int]]]:
    """A premise, the verb to edit (its concept redrawn uniformly among the grouped ones) and the replacements
    per label; drawn before the label is known, among those where every label has a replacement."""
    while True:
        premise = grammar.sentence(draws, grammar.topic(draws))
        verbs = [n for n in _nodes(premise) if n.cls == "VERB"]
        node = verbs[draws.integers(len(verbs))]
        node.index = draws.integers(grouped)
        options = _options(premise, node.index, grouped)
        if all(options.values()):
            return premise, node, options


def nli_examples(grammar: Grammar, seed: list[int], n: int) -> list[tuple[str, Node, Node]]:
    """`n` (label, premise, hypothesis) trees; every block of 3 holds each label once (balanced)."""
    grouped = min(verb_groups(grammar.config), grammar.sizes["VERB"] // GROUP) * GROUP
    if n and grouped < 2 * GROUP:
        raise ConfigError(f"lexicon.VERB must be at least {2 * GROUP} for generated NLI (a synonym, an antonym "
                          f"and an unrelated verb for each edited verb); found {grammar.sizes['VERB']}")
    draws = grammar.draws(seed)
    out, rotation = [], 0
    for i in range(n):
        rotation = draws.integers(3) if i % 3 == 0 else rotation
        label = XNLI_LABELS[(i + rotation) % 3]
        premise, node, options = _edit(grammar, draws, grouped)
        choices = options[label]
        new = choices[draws.integers(len(choices))]
        old, node.index = node.index, new
        hypothesis = _copy(premise)
        node.index = old
        out.append((label, premise, hypothesis))
    return out
