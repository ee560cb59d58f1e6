"""The generated world: words carry meaning (a dependent depends on its head, a sentence on its document's topic,
synonyms are near), each source of meaning turns off, and translations' frequencies correlate but differ."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import spearmanr

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.data.generate.world import GROUP, World
from mbertlab.formats.conllu import read_conllu

SIZES = {"sentences": {"train": 3000, "dev": 10, "test": 10},
         "tasks": {"nli": {"train": 3, "dev": 3, "test": 3}, "mldoc": {"train": 4, "dev": 4, "test": 4}}}


def _generate(tmp_path_factory, world: dict) -> Path:
    out = tmp_path_factory.mktemp("world")
    generate_into(preset_config("quick", 0, {**SIZES, "world": world}), out)
    return out


@pytest.fixture(scope="module")
def meaning(tmp_path_factory) -> Path:
    return _generate(tmp_path_factory, {})


@pytest.fixture(scope="module")
def context_free(tmp_path_factory) -> Path:
    return _generate(tmp_path_factory, {"meaning": False})


def _mutual_information(pairs: list[tuple[str, str]]) -> float:
    """Plug-in mutual information (nats) of a list of (x, y) pairs."""
    joint, xs, ys, n = Counter(pairs), Counter(x for x, _ in pairs), Counter(y for _, y in pairs), len(pairs)
    return sum(c / n * np.log(c * n / (xs[x] * ys[y])) for (x, y), c in joint.items())


def _verb_object_pairs(folder: Path) -> list[tuple[str, str]]:
    """(verb form, object noun form) of every clause, read back from the CoNLL-U file."""
    out = []
    for s in read_conllu(folder / "src" / "ud" / "train.conllu"):
        for form, upos, head, deprel in zip(s.forms, s.upos, s.heads, s.deprels):
            if deprel == "obj" and upos == "NOUN" and s.upos[head - 1] == "VERB":
                out.append((s.forms[head - 1], form))
    return out


def _shuffled_mi(pairs, seed=0) -> float:
    """The plug-in estimate's bias at this sample size: the same pairs with the objects shuffled."""
    objects = [y for _, y in pairs]
    np.random.default_rng(seed).shuffle(objects)
    return _mutual_information([(x, y) for (x, _), y in zip(pairs, objects)])


def test_a_verb_selects_its_objects_only_with_meaning(meaning, context_free):
    with_meaning, without = _verb_object_pairs(meaning), _verb_object_pairs(context_free)
    gain = _mutual_information(with_meaning) - _shuffled_mi(with_meaning)
    gain_off = _mutual_information(without) - _shuffled_mi(without)
    assert gain > 0.3, gain  # nats of information a verb gives about its object beyond the estimate's bias
    assert abs(gain_off) < 0.05, gain_off


def _topic_overlap(folder: Path, lag: int) -> float:
    """Mean Jaccard overlap of the nouns and verbs of sentence i and sentence i + lag."""
    content = [{f for f, u in zip(s.forms, s.upos) if u in ("NOUN", "VERB")}
               for s in read_conllu(folder / "src" / "ud" / "train.conllu")]
    return float(np.mean([len(a & b) / max(1, len(a | b)) for a, b in zip(content, content[lag:])]))


def test_consecutive_sentences_share_a_topic(meaning, context_free):
    # documents of 8 sentences: the next sentence shares more words than one 1,000 lines away; with no topic the
    # two are the same up to noise
    assert _topic_overlap(meaning, 1) > 1.15 * _topic_overlap(meaning, 1000)
    assert abs(_topic_overlap(context_free, 1) - _topic_overlap(context_free, 1000)) < 0.01


def test_synonyms_are_nearer_than_antonyms_nearer_than_other_groups():
    config = preset_config("quick", 0)
    sizes = {**config.lexicon.model_dump(), "PUNCT": 1}
    verbs = World(config, sizes).points["VERB"]
    cos = verbs @ verbs.T
    groups = len(verbs) // GROUP
    synonyms = np.mean([cos[GROUP * g, GROUP * g + 1] for g in range(groups)])
    antonyms = np.mean([cos[GROUP * g, GROUP * g + 2] for g in range(groups)])
    unrelated = np.mean([cos[GROUP * g, GROUP * ((g + 1) % groups)] for g in range(groups)])
    assert synonyms > 0.75 and 0.15 < antonyms < synonyms - 0.2 and abs(unrelated) < 0.25, (
        synonyms, antonyms, unrelated)


def _frequencies(folder: Path, lang: str) -> list[tuple[int, int]]:
    """(count in src, count in `lang`) of every lexicon pair, from the training text."""
    def counts(name):
        return Counter((folder / name / "text" / "train.txt").read_text("utf-8").split())

    source, target = counts("src"), counts(lang)
    lexicon = [line.split() for line in (folder / "lexicon" / f"src-{lang}.txt").read_text("utf-8").splitlines()]
    return [(source[a], target[b]) for a, b in lexicon]


def test_translations_frequencies_correlate_but_differ(meaning, context_free):
    rho_meaning = spearmanr(*zip(*_frequencies(meaning, "fake")))[0]
    rho_free = spearmanr(*zip(*_frequencies(context_free, "fake")))[0]
    assert 0.5 < rho_meaning < 0.93 < rho_free, (rho_meaning, rho_free)


def test_each_source_of_meaning_turns_off(tmp_path_factory):
    """No selection, no topic, no frequency noise: a verb tells nothing about its object, as in the
    context-free world, though the draws go through the world's tables."""
    off = _generate(tmp_path_factory, {"selection": None, "topic": None, "frequency_noise": 0.0})
    pairs = _verb_object_pairs(off)
    assert abs(_mutual_information(pairs) - _shuffled_mi(pairs)) < 0.05
    assert abs(_topic_overlap(off, 1) - _topic_overlap(off, 1000)) < 0.01
