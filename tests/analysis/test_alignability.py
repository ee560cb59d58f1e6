"""`analyze alignability`: frequency-rank MRR and chance counted by hand, Procrustes retrieval on injected
vectors with a known answer, and an end-to-end run on generated languages."""
from __future__ import annotations

from pathlib import Path

import json

import numpy as np
import pytest

from mbertlab.analysis.alignability import (
    ALL,
    AlignabilitySettings,
    alignability,
    chance_mrr,
    frequency_ranks,
    frequency_reciprocal_ranks,
    normalised,
    read_corpus,
    score_vectors,
)
from mbertlab.cli.main import run
from mbertlab.errors import ConfigError, DataError


def write(path, text: str):
    path.write_text(text, encoding="utf-8")
    return path


# Source counts a 4, b 3, c 2, d 1 -> ranks a1 b2 c3 d4; target w 4, x 3, y 2, z 1 -> w1 x2 y3 z4.
SOURCE = "a b a\nc a b\n\nb a c d\n"
TARGET = "w x y\nw z x w\nx w y\n"
LEXICON = [("a", "x"), ("b", "w"), ("c", "z"), ("d", "y")]


def test_frequency_rank_mrr_and_chance_by_hand(tmp_path):
    src = frequency_ranks(read_corpus(write(tmp_path / "src.txt", SOURCE)))
    tgt = frequency_ranks(read_corpus(write(tmp_path / "tgt.txt", TARGET)))
    assert src == {"a": 1, "b": 2, "c": 3, "d": 4} and tgt == {"w": 1, "x": 2, "y": 3, "z": 4}
    # distance |log r_src - log r_tgt|, i.e. the ratio max/min of the ranks:
    # a(1) -> x(2): ratio 2; w(1) ratio 1 is closer, y 3 and z 4 are not: rank 2.
    # b(2) -> w(1): ratio 2; x(2) 1 and y(3) 1.5 are closer, z(4) ratio 2 ties (in the gold's favour): rank 3.
    # c(3) -> z(4): ratio 4/3; y(3) ratio 1 is closer, x 1.5 and w 3 are not: rank 2.
    # d(4) -> y(3): ratio 4/3; z(4) ratio 1 is closer, x 2 and w 4 are not: rank 2.
    rr = frequency_reciprocal_ranks(LEXICON, ["w", "x", "y", "z"], src, tgt)
    assert rr == pytest.approx([1 / 2, 1 / 3, 1 / 2, 1 / 2])
    assert np.mean(rr) == pytest.approx(11 / 24)
    # chance among 4 candidates: (1 + 1/2 + 1/3 + 1/4) / 4 = 25/48
    assert chance_mrr(4) == pytest.approx(25 / 48) and chance_mrr(1) == 1.0


def test_equal_counts_rank_by_the_words_string():
    assert frequency_ranks([["q", "p", "p", "b", "a"]]) == {"p": 1, "a": 2, "b": 3, "q": 4}


def rotated(n: int, dim: int, seed: int):
    rng = np.random.default_rng(seed)
    src = {f"s{i}": rng.normal(size=dim) for i in range(n)}
    q, _ = np.linalg.qr(rng.normal(size=(dim, dim)))
    tgt = {f"t{i}": v @ q for i, v in enumerate(src.values())}
    return src, tgt


def test_a_rotated_copy_is_retrieved_exactly_and_a_shuffled_lexicon_at_chance():
    src, tgt = rotated(400, 10, 0)
    vectors = (normalised(src), normalised(tgt))
    ranks = ({w: 1 for w in src}, {w: 1 for w in tgt})  # every frequency distance ties: frequency MRR 1
    pairs = [(f"s{i}", f"t{i}") for i in range(400)]
    classes = {f"s{i}": "NOUN" if i % 2 else "VERB" for i in range(400)}
    rows = score_vectors(vectors, ranks, pairs, classes, seed=0)
    assert [r.name for r in rows] == ["NOUN", "VERB", ALL] or [r.name for r in rows] == ["VERB", "NOUN", ALL]
    assert all(r.context == pytest.approx(1.0) and r.frequency == 1.0 for r in rows)
    assert sum(r.words for r in rows[:2]) == rows[2].words == 200
    assert rows[2].chance == pytest.approx(chance_mrr(400))  # candidates: every translation (fitted half too)
    shuffled = list(zip([s for s, _ in pairs], np.random.default_rng(1).permutation([t for _, t in pairs])))
    wrong = score_vectors(vectors, ranks, shuffled, {}, seed=0, candidates="held-out")
    assert [r.name for r in wrong] == [ALL] and wrong[0].chance == pytest.approx(chance_mrr(200))
    # chance 0.029; a mean of 200 reciprocal ranks of a random ranking has a standard error of about 0.006
    assert abs(wrong[0].context - wrong[0].chance) < 0.03


def test_missing_empty_and_unusable_inputs_are_one_line_errors(tmp_path):
    src, tgt = write(tmp_path / "src.txt", SOURCE), write(tmp_path / "tgt.txt", TARGET)
    lexicon = write(tmp_path / "lex.txt", "".join(f"{s} {t}\n" for s, t in LEXICON))
    with pytest.raises(DataError, match="nope.txt: no such file"):
        alignability(tmp_path / "nope.txt", tgt, lexicon)
    with pytest.raises(DataError, match="empty.txt: found no sentence"):
        alignability(src, write(tmp_path / "empty.txt", "\n\n"), lexicon)
    with pytest.raises(DataError, match="other.txt: no pair whose source word"):
        alignability(src, tgt, write(tmp_path / "other.txt", "a q\nzz x\n"))
    with pytest.raises(DataError, match="few.txt: found 2 usable pairs"):
        alignability(src, tgt, write(tmp_path / "few.txt", "a x\nb w\n"))
    with pytest.raises(ConfigError, match="candidates 'all'"):
        AlignabilitySettings(candidates="all")


def _src_and_fake(out: Path, sentences: int, world: dict) -> Path:
    """The quick preset's `src` and its fake-script copy `fake` only."""
    from mbertlab.data.generate import generate_into, preset_config
    from mbertlab.data.generate.config import quick_preset

    languages = [lang for lang in quick_preset()["languages"] if lang["name"] in ("src", "fake")]
    overrides = {"languages": languages, "sentences": {"train": sentences, "dev": 20, "test": 20}, "world": world,
                 "tasks": {"nli": {"train": 3, "dev": 3, "test": 3}, "mldoc": {"train": 4, "dev": 4, "test": 4}}}
    generate_into(preset_config("quick", 0, overrides), out)
    return out


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """The context-free world (`world.meaning: false`, the generator before 2026-11-27), 3,000 training
    sentences: every word drawn independently of its context."""
    return _src_and_fake(tmp_path_factory.mktemp("generated"), 3000, {"meaning": False})


@pytest.mark.slow
def test_the_default_world_aligns_nouns_and_verbs_by_context(tmp_path):
    """Issue 49's target on the default quick preset (20,000 sentences): NOUN and VERB MRR from context vectors
    at least 0.5 and above frequency rank alone."""
    out = _src_and_fake(tmp_path, 20000, {})
    result = alignability(out / "src" / "text" / "train.txt", out / "fake" / "text" / "train.txt",
                          out / "lexicon" / "src-fake.txt", out / "src" / "ud" / "train.conllu")
    rows = {r.name: r for r in result.rows}
    for name in ("NOUN", "VERB"):
        assert rows[name].context >= 0.5 and rows[name].context > rows[name].frequency, rows[name]


def test_context_free_generated_nouns_align_at_chance_and_a_corpus_with_itself_exactly(generated, tmp_path):
    text, classes = generated / "src" / "text" / "train.txt", generated / "src" / "ud" / "train.conllu"
    result = alignability(text, generated / "fake" / "text" / "train.txt", generated / "lexicon" / "src-fake.txt",
                          classes, AlignabilitySettings(epochs=3))
    noun = next(r for r in result.rows if r.name == "NOUN")
    # about 39 held-out nouns among 78: chance 0.063, a standard error of about 0.02 around it
    assert noun.words >= 30 and abs(noun.context - noun.chance) < 0.06 < noun.frequency - noun.chance
    words = [line.split()[0] for line in (generated / "lexicon" / "src-fake.txt").read_text("utf-8").splitlines()]
    identity = write(tmp_path / "identity.txt", "".join(f"{w} {w}\n" for w in words))
    same = alignability(text, text, identity, classes, AlignabilitySettings(epochs=3))
    assert all(r.context == pytest.approx(1.0) for r in same.rows)  # one seed, one corpus: the same vectors


def test_the_command_prints_the_table_and_json(tmp_path, capsys):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(12)]
    lines = [" ".join(rng.choice(words, 8)) for _ in range(300)]
    text = write(tmp_path / "src.txt", "\n".join(lines) + "\n")
    lexicon = write(tmp_path / "lex.txt", "".join(f"{w} {w}\n" for w in words))
    args = ["analyze", "alignability", "--source", str(text), "--target", str(text), "--lexicon", str(lexicon),
            "--dim", "4", "--epochs", "2"]  # 6 pairs determine a map in 4 dimensions
    assert run(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["class", "words", "context", "frequency", "chance"]
    assert out[1].split() == ["all", "6", "1.000", "1.000", f"{chance_mrr(12):.3f}"]
    assert out[2] == "12 usable lexicon pairs, 6 fit the map, the rest are retrieved"
    assert run(args + ["--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["rows"][0]["name"] == ALL and data["rows"][0]["context"] == pytest.approx(1.0)
    assert data["pairs"] == 12 and data["settings"]["dim"] == 4


def test_normalised_is_unit_centred_unit():
    # unit: a (1, 0), b (0, 1); mean (0.5, 0.5); centred a (0.5, -0.5), b (-0.5, 0.5); unit again
    out = normalised({"a": np.array([3.0, 0.0]), "b": np.array([0.0, 2.0])})
    h = 2 ** -0.5
    assert np.allclose(out["a"], [h, -h]) and np.allclose(out["b"], [-h, h])


def test_equal_log_distances_tie_exactly():
    # from source rank 6, target ranks 4 and 9 are both a ratio 1.5 away: the gold (4) keeps rank 1
    assert frequency_reciprocal_ranks([("s", "t4")], ["t4", "t9"], {"s": 6}, {"t4": 4, "t9": 9}) == [1.0]
    assert frequency_reciprocal_ranks([("s", "t9")], ["t4", "t9"], {"s": 6}, {"t4": 4, "t9": 9}) == [1.0]
    assert frequency_reciprocal_ranks([("s", "t9")], ["t5", "t9"], {"s": 6}, {"t5": 5, "t9": 9}) == [0.5]
