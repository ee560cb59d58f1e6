"""Generated XNLI: no surface cue decides the label (lengths and overlap counts, either sentence alone), the
sense relations behind it can be learnt from the training pairs, and the other generated files do not depend
on it."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest

from mbertlab.analysis.surface import _fit, surface_baseline_accuracy
from mbertlab.data.generate import generate_into, preset_config
from mbertlab.data.generate.config import PRESETS
from mbertlab.data.generate.nli import relation
from mbertlab.errors import ConfigError
from mbertlab.formats.records import XNLI_LABELS
from mbertlab.formats.xnli import read_xnli

SIZES = {"sentences": {"train": 200, "dev": 20, "test": 20},
         "tasks": {"nli": {"train": 900, "dev": 30, "test": 900}, "mldoc": {"train": 8, "dev": 4, "test": 4}}}
CHANCE = 1 / 3


@pytest.fixture(scope="module", params=sorted(PRESETS))
def preset(request, tmp_path_factory) -> tuple[Path, list[str]]:
    out = tmp_path_factory.mktemp(request.param)
    config = preset_config(request.param, 0, SIZES)
    generate_into(config, out)
    return out, [lang.name for lang in config.languages if lang.variant != "unigram"]


def test_every_language_has_xnli(preset):
    out, langs = preset
    assert sorted(p.name.split(".")[0] for p in (out / "xnli").glob("*.train.tsv")) == sorted(langs)


def test_surface_baseline_within_5_points_of_chance(preset):
    out, langs = preset
    for lang in langs:
        xnli = out / "xnli"
        own = surface_baseline_accuracy(xnli / f"{lang}.train.tsv", xnli / f"{lang}.test.tsv")
        zero_shot = surface_baseline_accuracy(xnli / f"{langs[0]}.train.tsv", xnli / f"{lang}.test.tsv")
        assert abs(own - CHANCE) < 0.05 and abs(zero_shot - CHANCE) < 0.05, (lang, own, zero_shot)


def _bag_accuracy(train, test, words) -> float:
    """A multinomial logit on a bag of words of one sentence (the premise or the hypothesis alone)."""
    vocab = {w: i for i, w in enumerate(sorted({w for p in train for w in words(p)}))}

    def matrix(pairs):
        x = np.zeros((len(pairs), len(vocab) + 1))
        x[:, -1] = 1
        for i, p in enumerate(pairs):
            for w in words(p):
                if w in vocab:
                    x[i, vocab[w]] += 1
        return x

    labels = [np.array([XNLI_LABELS.index(p.label) for p in pairs]) for pairs in (train, test)]
    w = _fit(matrix(train)[:, :-1], labels[0])
    return float(((matrix(test) @ w).argmax(axis=1) == labels[1]).mean())


def test_either_sentence_alone_is_at_chance(preset):
    out, langs = preset
    train, test = (list(read_xnli(out / "xnli" / f"{langs[0]}.{split}.tsv")) for split in ("train", "test"))
    for words in (lambda p: p.hypothesis.split(), lambda p: p.premise.split()):
        assert abs(_bag_accuracy(train, test, words) - CHANCE) < 0.05


def _replaced(pair) -> tuple[str, str]:
    return next((a, b) for a, b in zip(pair.premise.split(), pair.hypothesis.split()) if a != b)


def test_learnable_from_the_training_pairs(preset):
    """A learner that knows only that labels come from sense relations: entailed pairs join a synonym set,
    contradictory ones join antonym sets (union-find with parity); pairs it cannot connect are neutral."""
    out, langs = preset
    for lang in langs:
        parent: dict[str, tuple[str, int]] = {}

        def find(w):
            root, parity = parent.setdefault(w, (w, 0))
            if root == w:
                return w, 0
            top, p = find(root)
            parent[w] = (top, p ^ parity)
            return top, p ^ parity

        for pair in read_xnli(out / "xnli" / f"{lang}.train.tsv"):
            if pair.label != "neutral":
                (ra, pa), (rb, pb) = (find(w) for w in _replaced(pair))
                if ra != rb:
                    parent[ra] = (rb, pa ^ pb ^ (pair.label == "contradiction"))
        right = total = 0
        for pair in read_xnli(out / "xnli" / f"{lang}.test.tsv"):
            (ra, pa), (rb, pb) = (find(w) for w in _replaced(pair))
            guess = "neutral" if ra != rb else ("entailment", "contradiction")[pa ^ pb]
            right, total = right + (guess == pair.label), total + 1
        assert right / total > 0.9, (lang, right / total)


def test_relation_by_hand():
    # group 0 = {0, 1 | 2, 3}: 0~1 and 2~3 synonyms, across the bar antonyms; other groups unrelated
    assert [relation(0, b) for b in (1, 2, 3, 4, 7)] == ["entailment", "contradiction", "contradiction",
                                                         "neutral", "neutral"]
    assert relation(3, 2) == "entailment" and relation(5, 6) == "contradiction"


def _digests(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_other_files_do_not_depend_on_nli(tmp_path):
    """XNLI has its own random stream: other NLI sizes change the xnli files and nothing else."""
    small = {"sentences": SIZES["sentences"], "tasks": {"mldoc": SIZES["tasks"]["mldoc"]}}
    sizes = ({"train": 30, "dev": 9, "test": 9}, {"train": 60, "dev": 12, "test": 15})
    digests = []
    for i, nli in enumerate(sizes):
        generate_into(preset_config("quick", 0, {**small, "tasks": {**small["tasks"], "nli": nli}}), tmp_path / str(i))
        digests.append(_digests(tmp_path / str(i)))
    a, b = digests
    assert a.keys() == b.keys()
    assert {k for k in a if a[k] != b[k]} == {k for k in a if k.startswith("xnli/")} != set()


def test_too_small_a_lexicon_is_a_config_error(tmp_path):
    config = preset_config("quick", 0, {**SIZES, "lexicon": {"VERB": 4}})
    with pytest.raises(ConfigError, match="lexicon.VERB must be at least 8"):
        generate_into(config, tmp_path)
