"""Generated languages: valid trees, UPOS tags, one word per concept, disjoint fake script, determinism."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.formats.conllu import read_conllu
from mbertlab.formats.muse import read_dictionary
from mbertlab.formats.ner_columns import read_ner
from mbertlab.formats.records import UPOS_TAGS
from mbertlab.formats.text import read_lines

SMALL = {"sentences": {"train": 600, "dev": 60, "test": 60}}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen")
    generate_into(preset_config("quick", 0, SMALL), out)
    return out


def digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            h.update(path.relative_to(folder).as_posix().encode() + path.read_bytes())
    return h.hexdigest()


def is_tree(heads: list[int]) -> bool:
    """Independent check: exactly one root and every word reaches it without revisiting a node."""
    if sum(h == 0 for h in heads) != 1:
        return False
    for start in range(1, len(heads) + 1):
        seen, node = set(), start
        while node:
            if node in seen or not 0 <= heads[node - 1] <= len(heads):
                return False
            seen.add(node)
            node = heads[node - 1]
    return True


def test_same_seed_same_bytes_other_seed_differs(generated, tmp_path):
    again = tmp_path / "again"
    generate_into(preset_config("quick", 0, SMALL), again)
    assert digest(again) == digest(generated)
    other = tmp_path / "other"
    generate_into(preset_config("quick", 1, SMALL), other)
    assert digest(other) != digest(generated)


def test_every_file_reads_and_trees_are_valid(generated):
    for lang in ("src", "same", "fake", "fake_sov", "unigram"):
        for split in ("train", "dev", "test"):
            sentences = list(read_conllu(generated / lang / "ud" / f"{split}.conllu"))
            assert sentences and all(is_tree(s.heads) for s in sentences)
            assert {t for s in sentences for t in s.upos} <= set(UPOS_TAGS)
            ner = list(read_ner(generated / lang / "ner" / f"{split}.txt", scheme="bio"))
            text = list(read_lines(generated / lang / "text" / f"{split}.txt"))
            assert [s.tokens for s in ner] == [s.forms for s in sentences] == [t.split() for t in text]
            for s in ner:  # well-formed BIO as written
                for prev, tag in zip(["O"] + s.tags, s.tags):
                    assert not (tag.startswith("I-") and prev[2:] != tag[2:])


def test_lexicon_one_word_per_concept(generated):
    for target in ("same", "fake", "fake_sov"):
        pairs = [l.split() for l in (generated / "lexicon" / f"src-{target}.txt").read_text().splitlines()]
        sources, targets = [p[0] for p in pairs], [p[1] for p in pairs]
        assert len(set(sources)) == len(sources) and len(set(targets)) == len(targets)
        assert read_dictionary(generated / "lexicon" / f"src-{target}.txt")


def test_fake_script_shares_no_character(generated, shared_data):
    fake_chars = set((generated / "fake" / "text" / "train.txt").read_text()) - {" ", "\n"}
    src_chars = set((generated / "src" / "text" / "train.txt").read_text())
    assert not fake_chars & src_chars
    for path in (shared_data / "raw_text").glob("*.txt"):
        assert not fake_chars & set(path.read_text(encoding="utf-8")), path.name


def test_same_shares_half_the_content_words(generated):
    pairs = [l.split() for l in (generated / "lexicon" / "src-same.txt").read_text().splitlines()]
    content = [(a, b) for a, b in pairs if a.islower() and not a.isdigit()]
    shared = sum(a == b for a, b in content) / len(content)
    assert 0.35 < shared < 0.65


def test_unigram_keeps_lengths_not_order(generated):
    base = [len(l.split()) for l in (generated / "fake" / "text" / "train.txt").read_text().splitlines()]
    uni = [len(l.split()) for l in (generated / "unigram" / "text" / "train.txt").read_text().splitlines()]
    assert len(uni) == len(base)
    last = [l.split()[-1] for l in (generated / "unigram" / "text" / "train.txt").read_text().splitlines()]
    fake_stop = (generated / "fake" / "text" / "train.txt").read_text().split("\n")[0].split()[-1]
    assert sum(w == fake_stop for w in last) / len(last) < 0.5  # sentence-final stop no longer systematic


def test_nli_and_mldoc_read_and_align_across_languages(generated):
    from collections import Counter

    from mbertlab.formats.classification import MLDOC_LABELS, read_mldoc
    from mbertlab.formats.xnli import read_xnli

    langs = ("src", "same", "fake", "fake_sov")
    assert not (generated / "xnli" / "unigram.train.tsv").exists()
    for split in ("train", "dev", "test"):
        pairs = {l: list(read_xnli(generated / "xnli" / f"{l}.{split}.tsv")) for l in langs}
        docs = {l: list(read_mldoc(generated / "mldoc" / f"{l}.{split}.tsv")) for l in langs}
        labels = [p.label for p in pairs["src"]]
        assert all([p.label for p in pairs[l]] == labels for l in langs)
        assert all([d.label for d in docs[l]] == [d.label for d in docs["src"]] for l in langs)
        assert all(p.lang == l for l in langs for p in pairs[l])
        counts = Counter(labels)
        assert set(counts) == {"entailment", "neutral", "contradiction"}
        assert max(counts.values()) - min(counts.values()) <= 1  # labels cycle: balanced
        assert {d.label for d in docs["src"]} == set(MLDOC_LABELS)
    # the same example in two languages: word counts equal, the fake script spells the same words
    src, fake = (list(read_xnli(generated / "xnli" / f"{l}.train.tsv")) for l in ("src", "fake"))
    assert [len(p.premise.split()) for p in src] == [len(p.premise.split()) for p in fake]


def test_nli_edits_replace_one_verb_with_a_consistent_label(generated):
    """Independent of the tree code: hypothesis = premise with one verb (by the corpus's UD tags) replaced by a
    verb absent from the premise, and the label is a function of the (old, new) pair: never two labels."""
    from mbertlab.formats.xnli import read_xnli

    tags = {(f, u) for split in ("train", "dev", "test")
            for s in read_conllu(generated / "src" / "ud" / f"{split}.conllu") for f, u in zip(s.forms, s.upos)}
    verbs, others = {f for f, u in tags if u == "VERB"}, {f for f, u in tags if u != "VERB"}
    seen: dict[tuple[str, str], str] = {}
    for p in read_xnli(generated / "xnli" / "src.train.tsv"):
        a, b = p.premise.split(), p.hypothesis.split()
        assert len(a) == len(b)
        diff = [(x, y) for x, y in zip(a, b) if x != y]
        assert len(diff) == 1 and diff[0][1] not in a and not set(diff[0]) & others
        assert seen.setdefault(diff[0], p.label) == p.label
    edited = {w for pair in seen for w in pair}
    # every verb of the world has a group (40 verbs, 10 groups); the corpus has seen most of them as verbs
    assert len(edited) == 40 and len(edited & verbs) >= 30


def test_topics_bias_nouns(generated):
    """Nouns (by their UD tag) occur more often in documents of one label than the chance share of 1/4 (the
    world's topics shift nouns softly: 0.385 measured at the default `world.topic` 0.5)."""
    from collections import Counter, defaultdict

    from mbertlab.formats.classification import read_mldoc

    nouns = {f for s in read_conllu(generated / "src" / "ud" / "train.conllu") for f, u in zip(s.forms, s.upos)
             if u == "NOUN"}
    by_noun: dict[str, Counter] = defaultdict(Counter)
    docs = list(read_mldoc(generated / "mldoc" / "src.train.tsv"))
    for d in docs:
        for word in d.text.split():
            if word in nouns:
                by_noun[word][d.label] += 1
    frequent = [c for c in by_noun.values() if sum(c.values()) >= 20]
    assert len(frequent) >= 10
    majority = sum(max(c.values()) for c in frequent) / sum(sum(c.values()) for c in frequent)
    assert majority > 0.33, majority


def test_tasks_leave_the_preset_hash_alone():
    config = preset_config("quick", 0)
    assert "tasks" not in config.model_dump()
    changed = preset_config("quick", 0, {"tasks": {"topic_bias": 0.5}})
    assert changed.content_hash() != config.content_hash()


def test_entities_by_role_follow_the_clause_and_leave_the_text_alone(generated, tmp_path):
    """`entities: by_role`: the same words as the lexical default, each name typed by its place in the tree (read
    with the `conllu` library: a `flat` token takes its head's relation), and name words that take two types."""
    import conllu

    out = tmp_path / "by_role"
    generate_into(preset_config("quick", 0, {**SMALL, "entities": "by_role"}), out)
    role = {"nsubj": "PER", "obj": "ORG", "obl": "LOC", "nmod": "LOC"}
    for lang in ("src", "fake_sov"):
        text = lang + "/text/train.txt"
        assert (out / text).read_bytes() == (generated / text).read_bytes()
        with open(out / lang / "ud" / "train.conllu", encoding="utf-8") as f:
            trees = list(conllu.parse_incr(f))
        ner = list(read_ner(out / lang / "ner" / "train.txt", scheme="bio"))
        lexical = list(read_ner(generated / lang / "ner" / "train.txt", scheme="bio"))
        types: dict[str, set[str]] = {}
        names = 0
        for tree, tagged, before in zip(trees, ner, lexical, strict=True):
            by_id = {t["id"]: t for t in tree}
            for token, tag, old in zip(tree, tagged.tags, before.tags, strict=True):
                assert (tag == "O") == (old == "O") and (tag == "O") == (token["upos"] != "PROPN")
                if token["upos"] != "PROPN":
                    continue
                names += 1
                head = by_id[token["head"]] if token["deprel"] == "flat" else token
                assert tag[2:] == role[head["deprel"]], (lang, tree.metadata, token["form"])
                types.setdefault(token["form"], set()).add(tag[2:])
        assert names > 100 and sum(len(t) > 1 for t in types.values()) > 10
        # the default: one type per name word
        assert all(len({tag[2:] for s in lexical for w, tag in zip(s.tokens, s.tags) if w == form} - {""}) == 1
                   for form in types)
