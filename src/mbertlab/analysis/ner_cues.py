"""Model-free NER taggers: which surface cue finds a target's entities without any encoder.

A zero-shot NER transfer that a random-init encoder also solves (the `no_lexical_shortcut` check) rides on
something in the surface of the text. These taggers are fitted on the source's training file only and scored
on a target's file, each with one cue:
- `lexicon`: a word's most frequent source tag (O when unseen): shared name forms.
- `case_spans`: a capitalised word is inside an entity (a run of them is one), of the source's commonest type;
  `case_spans_untyped` scores the same spans with the types ignored: how far case alone finds the entities.
- `case_context`: the same spans, typed by the source's counts of entity types after the word before a span and
  before the word after it: shared function words that mark a name's role.
Scores are conlleval's entity F1 (`tasks.ner.entity_scores`), in [0, 1].
"""
from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

from seqeval.metrics.sequence_labeling import get_entities

from mbertlab.errors import DataError
from mbertlab.formats.ner_columns import read_ner
from mbertlab.tasks.ner import entity_scores

START, END = "<s>", "</s>"


def _sentences(path: Path) -> list[tuple[list[str], list[str]]]:
    sentences = [(list(s.tokens), list(s.tags)) for s in read_ner(path, scheme="bio")]
    if not sentences:
        raise DataError(path, None, "found no sentences; expected a NER file of word<TAB>TAG lines")
    return sentences


def _case_spans(words: list[str]) -> list[tuple[int, int]]:
    spans, i = [], 0
    while i < len(words):
        if words[i][:1].isupper():
            j = i + 1
            while j < len(words) and words[j][:1].isupper():
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def _tags(length: int, spans: list[tuple[int, int, str]]) -> list[str]:
    tags = ["O"] * length
    for i, j, kind in spans:
        tags[i:j] = ["B-" + kind] + ["I-" + kind] * (j - i - 1)
    return tags


def _untyped(tags: list[list[str]]) -> list[list[str]]:
    return [[t if t == "O" else t[:2] + "X" for t in s] for s in tags]


def ner_cue_scores(train: Path, test: Path) -> dict[str, float]:
    """Entity F1 on `test` of each cue's tagger fitted on `train` (see the module docstring)."""
    source, target = _sentences(Path(train)), _sentences(Path(test))
    by_word: dict[str, Counter] = defaultdict(Counter)
    before: dict[str, Counter] = defaultdict(Counter)
    after: dict[str, Counter] = defaultdict(Counter)
    kinds: Counter = Counter()
    for words, tags in source:
        for word, tag in zip(words, tags):
            by_word[word][tag] += 1
        for kind, i, last in get_entities(tags):
            j = last + 1
            kinds[kind] += 1
            before[words[i - 1] if i else START][kind] += 1
            after[words[j] if j < len(words) else END][kind] += 1
    if not kinds:
        raise DataError(Path(train), None, "found no entity; expected B-/I- tags in the source's NER file")
    commonest = kinds.most_common(1)[0][0]

    def context_kind(words: list[str], i: int, j: int) -> str:
        votes = before.get(words[i - 1] if i else START, Counter()) + after.get(
            words[j] if j < len(words) else END, Counter())
        return votes.most_common(1)[0][0] if votes else commonest

    gold = [tags for _, tags in target]
    predicted = {
        "lexicon": [[by_word[w].most_common(1)[0][0] if w in by_word else "O" for w in words]
                    for words, _ in target],
        "case_spans": [_tags(len(words), [(i, j, commonest) for i, j in _case_spans(words)]) for words, _ in target],
        "case_context": [_tags(len(words), [(i, j, context_kind(words, i, j)) for i, j in _case_spans(words)])
                         for words, _ in target],
    }
    scores = {name: entity_scores(gold, tags)["f1"] for name, tags in predicted.items()}
    scores["case_spans_untyped"] = entity_scores(_untyped(gold), _untyped(predicted["case_spans"]))["f1"]
    return scores
