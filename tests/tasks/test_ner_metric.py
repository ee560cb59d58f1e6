"""NER's main metric is conlleval's entity P/R/F1 on the tags as predicted. Two oracles: seqeval's default mode
(no repair) and a small conlleval written here from conlleval.pl's startOfChunk/endOfChunk rules, on type
switches (`B-LOC I-PER`), stand-alone I- tags, empty sentences and all-O input, hand-made and generated."""
from __future__ import annotations

import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from seqeval.metrics import f1_score, precision_score, recall_score

from mbertlab.tasks.ner import ner_metrics, repair_bio
from tests.conftest import examples


def _chunk_edges(prev: str, tag: str) -> tuple[bool, bool]:
    """(the previous chunk ends before `tag`, a chunk starts at `tag`), as conlleval.pl decides them."""
    p_kind, p_type = (prev[0], prev[2:]) if prev != "O" else ("O", "")
    t_kind, t_type = (tag[0], tag[2:]) if tag != "O" else ("O", "")
    end = (p_kind in "BI" and t_kind in "BO") or (p_kind != "O" and p_type != t_type)
    start = t_kind == "B" or (p_kind == "O" and t_kind == "I") or (t_kind != "O" and p_type != t_type)
    return end, start


def conlleval_chunks(sentences: list[list[str]]) -> set[tuple[int, int, int, str]]:
    """Every chunk as (sentence, first, last, type); a sentence boundary ends any open chunk (conlleval
    reads the blank line as O)."""
    chunks = set()
    for s, tags in enumerate(sentences):
        opened = None
        for i, tag in enumerate([*tags, "O"]):
            end, start = _chunk_edges(tags[i - 1] if i else "O", tag)
            if end and opened is not None:
                chunks.add((s, opened, i - 1, tags[opened][2:]))
                opened = None
            if start:
                opened = i
    return chunks


def conlleval(gold: list[list[str]], pred: list[list[str]]) -> dict[str, float]:
    g, p = conlleval_chunks(gold), conlleval_chunks(pred)
    correct = len(g & p)
    precision = correct / len(p) if p else 0.0
    recall = correct / len(g) if g else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"f1": f1, "precision": precision, "recall": recall}


def seqeval_scores(gold, pred) -> dict[str, float]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {"f1": f1_score(gold, pred), "precision": precision_score(gold, pred),
                "recall": recall_score(gold, pred)}


def assert_equal_to_both(gold, pred) -> None:
    ours = ner_metrics(gold, pred)
    for oracle in (conlleval(gold, pred), seqeval_scores(gold, pred)):
        for name, value in oracle.items():
            assert ours[name] == pytest.approx(value, abs=1e-12), name


@pytest.mark.parametrize("gold, pred, f1", [
    ([["B-PER", "I-PER"]], [["B-LOC", "I-PER"]], 0.0),  # a type switch is two entities, neither right
    ([["B-PER", "I-PER"]], [["I-PER", "I-PER"]], 1.0),  # a stand-alone I- starts an entity (conlleval)
    ([["B-PER", "I-PER", "O"]], [["B-PER", "I-PER", "I-PER"]], 0.0),  # wrong end
    ([["O", "O"], []], [["O", "O"], []], 0.0),  # all O: no entity, F1 0 as conlleval prints it
    ([["B-ORG"], [], ["I-LOC", "O"]], [["B-ORG"], [], ["B-LOC", "O"]], 1.0),  # empty sentence; I- start in gold
    ([["B-PER"], ["I-PER"]], [["B-PER"], ["O"]], 2 / 3),  # a sentence boundary ends a chunk
])
def test_hand_made_cases(gold, pred, f1):
    assert conlleval(gold, pred)["f1"] == pytest.approx(f1)
    assert_equal_to_both(gold, pred)


def test_repair_is_a_separate_metric():
    """The issue's example: conlleval scores a type switch 0, the repair 100."""
    gold, pred = [["B-PER", "I-PER"]], [["B-LOC", "I-PER"]]
    scores = ner_metrics(gold, pred)
    assert scores["f1"] == 0.0 and scores["f1_repaired"] == 1.0
    assert scores["token_macro_f1"] == pytest.approx((0 + 1) / 2)  # gold classes B-PER 0, I-PER 1: raw tags


TAGS = st.sampled_from(["O", "O", "O", "B-PER", "I-PER", "B-LOC", "I-LOC", "I-ORG"])
SENTENCES = st.lists(st.lists(TAGS, max_size=12), min_size=1, max_size=6)  # seqeval needs a sentence


@settings(max_examples=examples(400), deadline=None)
@given(st.data())
def test_random_tag_sequences(data):
    gold = data.draw(SENTENCES)
    pred = [data.draw(st.lists(TAGS, min_size=len(s), max_size=len(s))) for s in gold]
    assert_equal_to_both(gold, pred)
    assert ner_metrics(gold, pred)["f1_repaired"] == pytest.approx(
        conlleval(gold, [repair_bio(p) for p in pred])["f1"], abs=1e-12)


@settings(max_examples=examples(200), deadline=None)
@given(SENTENCES)
def test_a_prediction_equal_to_gold_scores_one_unless_gold_has_no_entity(gold):
    scores = ner_metrics(gold, gold)
    assert scores["f1"] == (1.0 if conlleval_chunks(gold) else 0.0)
