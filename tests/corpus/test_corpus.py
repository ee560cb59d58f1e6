"""Sampling, overlap and manipulations against hand computations and independent counts."""
from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import chisquare

from mbertlab.corpus.manipulations import fake_script, permute_words, unfake_script, unigram_corpus, window
from mbertlab.errors import ConfigError
from mbertlab.corpus.overlap import overlap, vocab_coverage, vocab_frequency_curve
from mbertlab.corpus.sampling import balanced_budget, sampling_probs, smoothed_budget
from mbertlab.formats.conllu import read_conllu


def test_sampling_probs_and_budgets():
    assert sampling_probs({"a": 100, "b": 300}, 1.0) == {"a": 0.25, "b": 0.75}
    assert sampling_probs({"a": 100, "b": 300}, 0.0) == {"a": 0.5, "b": 0.5}
    p = sampling_probs({"a": 100, "b": 400}, 0.5)  # sqrt: 10 vs 20
    assert p["a"] == pytest.approx(1 / 3)
    assert balanced_budget({"a": 5, "b": 9, "c": 7}) == {"a": 5, "b": 5, "c": 5}
    assert smoothed_budget({"a": 100, "b": 400}, 0.0, 300) == {"a": 100, "b": 150}


def test_overlap_by_hand():
    assert overlap("a b c".split(), "a a d e".split()) == {"p_type": 1 / 3, "p_token": 2 / 4}


def test_overlap_on_two_treebanks(shared_data):
    en = [w for s in read_conllu(shared_data / "ud" / "en_partut-ud-dev.conllu") for w in s.forms]
    es = [w for s in read_conllu(shared_data / "ud" / "es_gsd-ud-dev.conllu") for w in s.forms]
    src_types = set(en)
    shared_types = {w for w in set(es) if w in src_types}
    p_token = sum(1 for w in es if w in src_types) / len(es)
    assert overlap(en, es) == {"p_type": len(shared_types) / len(set(es)), "p_token": p_token}


def test_vocab_curves():
    counts = Counter({"a": 5, "b": 1, "c": 0})
    assert vocab_frequency_curve(counts, ["a", "b", "c", "d"], [0, 1, 4]) == [(0, 0.5), (1, 0.25), (4, 0.25)]
    assert vocab_coverage(counts, ["a", "d"]) == 0.5


def test_fake_script_disjoint_from_every_raw_text(shared_data):
    en = (shared_data / "raw_text" / "en.txt").read_text(encoding="utf-8")[:20000]
    fake = fake_script(en)
    assert unfake_script(fake) == en
    fake_chars = set(fake) - set(" \n\t")
    for path in (shared_data / "raw_text").glob("*.txt"):
        assert not fake_chars & set(path.read_text(encoding="utf-8")), path.name


@given(st.text(max_size=60), st.integers(1, 0xF0000))
def test_fake_script_moves_every_non_space_character_by_the_shift(text, shift):
    if any(not c.isspace() and ord(c) + shift > 0x10FFFF for c in text):
        with pytest.raises(ConfigError, match="use a smaller shift"):
            fake_script(text, shift)
        return
    oracle = "".join(c if c.isspace() else chr(ord(c) + shift) for c in text)
    assert fake_script(text, shift) == oracle
    if not any(chr(ord(c) + shift).isspace() for c in text if not c.isspace()):  # always so for plane 15
        assert unfake_script(oracle, shift) == text


@given(st.lists(st.text(alphabet="abcdefgh", min_size=1, max_size=3), min_size=0, max_size=30),
       st.floats(0, 1), st.integers(0, 10))
def test_permutation_properties(words, p, seed):
    sentence = " ".join(words)
    out = permute_words(sentence, p, random.Random(seed))
    assert sorted(out.split()) == sorted(sentence.split())
    if p == 0:
        assert out == " ".join(sentence.split())


def test_permutation_swaps_exactly_half_at_p1():
    words = [f"w{i}" for i in range(11)]
    out = permute_words(" ".join(words), 1.0, random.Random(0)).split()
    assert sum(a != b for a, b in zip(words, out)) == 2 * (11 // 2)


def test_unigram_corpus_keeps_lengths_and_frequencies():
    rng = random.Random(0)
    vocab = [f"w{i}" for i in range(20)]
    weights = [1 / (i + 1) for i in range(20)]
    source = [" ".join(rng.choices(vocab, weights, k=rng.randint(3, 12))) for _ in range(4000)]
    out = unigram_corpus(source, seed=1)
    assert [len(s.split()) for s in out] == [len(s.split()) for s in source]
    src_counts, out_counts = Counter(" ".join(source).split()), Counter(" ".join(out).split())
    total = sum(out_counts.values())
    expected = [src_counts[w] / sum(src_counts.values()) * total for w in vocab]
    assert chisquare([out_counts[w] for w in vocab], expected).pvalue > 0.01


def test_window():
    assert list(window(["a b c d e", "f"], 2)) == ["a b", "c d", "e", "f"]


def test_corpus_build_counts_and_determinism(tmp_path, shared_data):
    from mbertlab.corpus.build import CorpusConfig, build_corpus_into

    source = shared_data / "raw_text" / "af.txt"
    config = CorpusConfig.model_validate({"languages": [{"name": "af", "sources": [{"path": str(source)}]}],
                                          "dev_fraction": 0.1})
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        build_corpus_into(config, tmp_path / name)
    lines = [l.strip() for l in source.read_text(encoding="utf-8").splitlines() if l.strip()]
    distinct = list(dict.fromkeys(lines))
    train = (tmp_path / "a" / "af" / "train.txt").read_text(encoding="utf-8").splitlines()
    dev = (tmp_path / "a" / "af" / "dev.txt").read_text(encoding="utf-8").splitlines()
    assert sorted(train + dev) == sorted(distinct) and not set(train) & set(dev)
    assert 0.05 < len(dev) / len(distinct) < 0.15
    import json

    stats = json.loads((tmp_path / "a" / "stats.json").read_text())["af"]
    assert stats["train"]["sentences"] == len(train)
    assert stats["train"]["tokens"] == sum(len(l.split()) for l in train)
    for f in ("af/train.txt", "af/dev.txt", "stats.json"):
        assert (tmp_path / "a" / f).read_bytes() == (tmp_path / "b" / f).read_bytes()


def test_stats_and_overlap_commands(shared_data, capsys):
    from mbertlab.cli.main import run
    from mbertlab.corpus.stats import text_stats

    path = shared_data / "raw_text" / "af.txt"
    raw = path.read_bytes()
    lines = [l for l in raw.decode("utf-8").splitlines() if l.strip()]
    s = text_stats(path)
    assert (s["sentences"], s["tokens"], s["bytes"]) == (len(lines), len(raw.split()), len(raw))
    assert s["wikisize"] == pytest.approx(__import__("math").log2(len(raw) / 2**20))
    assert run(["corpus", "stats", str(path)]) == 0 and "2280" in capsys.readouterr().out
    assert run(["overlap", str(path), str(shared_data / "raw_text" / "lv.txt")]) == 0
    assert '"p_type"' in capsys.readouterr().out


def _two_language_corpus(tmp_path, sizes: dict[str, int]) -> dict[str, list[str]]:
    """Distinct sentences of varied length per language (so character budgets are not multiples)."""
    rng = random.Random(0)
    texts = {}
    for lang, n in sizes.items():
        texts[lang] = [f"{lang} {i} " + " ".join("x" * rng.randint(1, 9) for _ in range(rng.randint(1, 8)))
                       for i in range(n)]
        (tmp_path / f"{lang}.txt").write_text("\n".join(texts[lang]) + "\n", encoding="utf-8")
    return texts


def _build(tmp_path, sizes, name, **options):
    import json

    from mbertlab.corpus.build import CorpusConfig, build_corpus_into

    langs = [{"name": l, "sources": [{"path": str(tmp_path / f"{l}.txt")}]} for l in sizes]
    config = CorpusConfig.model_validate({"languages": langs, "dev_fraction": 0.1, **options})
    (tmp_path / name).mkdir()
    build_corpus_into(config, tmp_path / name)
    stats = json.loads((tmp_path / name / "stats.json").read_text())
    lines = {l: (tmp_path / name / l / "train.txt").read_text().splitlines()
             + (tmp_path / name / l / "dev.txt").read_text().splitlines() for l in sizes}
    return stats, lines


def test_corpus_budgets_smoothed_and_balanced(tmp_path):
    sizes = {"big": 800, "small": 200}
    _two_language_corpus(tmp_path, sizes)
    stats, lines = _build(tmp_path, sizes, "a1", sampling="smoothed", alpha=1.0, total=500)
    assert {l: len(v) for l, v in lines.items()} == {"big": 400, "small": 100}
    assert stats["big"]["sampling"] == {"unit": "sentences", "budget": 400, "realised": 400}
    _, lines = _build(tmp_path, sizes, "a0", sampling="smoothed", alpha=0.0, total=300)
    assert {l: len(v) for l, v in lines.items()} == {"big": 150, "small": 150}
    stats, lines = _build(tmp_path, sizes, "bal", sampling="balanced")
    assert len(lines["big"]) == len(lines["small"]) == 200
    assert stats["small"]["sampling"]["realised"] == stats["big"]["sampling"]["realised"] == 200


def test_corpus_character_budgets_within_one_sentence(tmp_path):
    sizes = {"big": 800, "small": 300}
    texts = _two_language_corpus(tmp_path, sizes)
    from mbertlab.corpus.build import CorpusConfig

    langs = [{"name": "big", "sources": [{"path": str(tmp_path / "big.txt")}], "max_characters": 5000},
             {"name": "small", "sources": [{"path": str(tmp_path / "small.txt")}], "max_characters": 2000}]
    config = CorpusConfig.model_validate({"languages": langs})
    (tmp_path / "c").mkdir()
    from mbertlab.corpus.build import build_corpus_into

    build_corpus_into(config, tmp_path / "c")
    for lang, budget in (("big", 5000), ("small", 2000)):
        kept = (tmp_path / "c" / lang / "train.txt").read_text().splitlines() + \
            (tmp_path / "c" / lang / "dev.txt").read_text().splitlines()
        chars = sum(len(l) for l in kept)
        assert budget <= chars < budget + max(len(l) for l in texts[lang])
        assert sorted(kept) == sorted(texts[lang][:len(kept)])
    stats, _ = _build(tmp_path, sizes, "bc", sampling="balanced", unit="characters")
    small_total = sum(len(l) for l in texts["small"])
    assert stats["small"]["sampling"]["realised"] == small_total
    assert 0 <= stats["big"]["sampling"]["realised"] - small_total < max(len(l) for l in texts["big"])


def test_new_corpus_options_keep_old_hashes(tmp_path):
    from mbertlab.corpus.build import CorpusConfig

    (tmp_path / "x.txt").write_text("a b\n")
    config = CorpusConfig.model_validate({"languages": [{"name": "x", "sources": [{"path": str(tmp_path / "x.txt")}]}]})
    assert set(config.model_dump()) == {"languages", "dev_fraction", "dedup", "seed"}
    assert "max_characters" not in config.model_dump()["languages"][0]
    assert config.content_hash() != config.model_copy(update={"sampling": "balanced"}).content_hash()


@given(st.lists(st.text(max_size=6), max_size=300))
def test_seen_lines_equals_a_set(lines):
    from mbertlab.corpus.dedup import SeenLines

    seen, reference = SeenLines(capacity=4), set()
    for line in lines:
        assert seen.add(line) == (line not in reference)
        reference.add(line)
    assert len(seen) == len(reference)


def test_fake_scripts_line_map_is_its_word_map_on_every_word():
    """The corpus respells a derived language's lines with one translate per line; the task files and lexicon
    respell word by word: both must give the same text, whitespace kept as it is."""
    from mbertlab.corpus.manipulations import WORD_MAPS, map_words, respell_line

    for line in ("the cat", "  two  spaces\tand a tab ", "naïve café – 東京 123", "", "x"):
        assert respell_line("fake-script")(line) == map_words(line, WORD_MAPS.get("fake-script"))
    assert respell_line("fake-script")("a b") == f"{chr(ord('a') + 0xF0000)} {chr(ord('b') + 0xF0000)}"
