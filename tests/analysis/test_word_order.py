"""Word-order distance (Wu & Dredze 2019 Table 6's ordering) from treebanks: by hand on toy trees, and on the
shared UD treebanks in the order WALS gives (Spanish closer to English than Hindi)."""
from __future__ import annotations

import pytest

from mbertlab.analysis.word_order import head_directions, word_order_distance

SVO = """1\tdogs\t_\tNOUN\t_\t_\t2\tnsubj\t_\t_
2\tsee\t_\tVERB\t_\t_\t0\troot\t_\t_
3\tcats\t_\tNOUN\t_\t_\t2\tobj\t_\t_
4\t.\t_\tPUNCT\t_\t_\t2\tpunct\t_\t_

"""
SOV = """1\tdogs\t_\tNOUN\t_\t_\t3\tnsubj\t_\t_
2\tcats\t_\tNOUN\t_\t_\t3\tobj:x\t_\t_
3\tsee\t_\tVERB\t_\t_\t0\troot\t_\t_

"""


def test_head_directions_and_distance_by_hand(tmp_path):
    svo, sov = tmp_path / "svo.conllu", tmp_path / "sov.conllu"
    svo.write_text(SVO * 3, encoding="utf-8")
    sov.write_text(SOV * 2 + SVO, encoding="utf-8")
    a, b = head_directions([svo]), head_directions([sov])
    assert a == {"nsubj": (3, 3), "obj": (0, 3)}  # punct and root left out
    assert b == {"nsubj": (3, 3), "obj": (2, 3)}  # obj:x counted as obj
    # nsubj: |1 - 1| = 0; obj: |0 - 2/3| = 2/3; mean over the two relations
    assert word_order_distance(a, b, min_count=3) == (pytest.approx(1 / 3), 2)
    assert word_order_distance(a, b, min_count=4) == (pytest.approx(float("nan"), nan_ok=True), 0)


def test_shared_treebanks_order_as_the_paper(shared_data):
    """The paper's Table 6 Dist (WALS): es 0.12 < ru 0.14 < hi 0.40 from English; the treebanks agree in order."""
    ud = shared_data / "ud"
    en = head_directions([ud / "en_partut-ud-train.conllu"])
    dist = {lang: word_order_distance(en, head_directions([ud / name]))[0]
            for lang, name in (("en", "en_partut-ud-test.conllu"), ("es", "es_gsd-ud-test.conllu"),
                               ("ru", "ru_gsd-ud-test.conllu"), ("hi", "hi_pud-ud-test.conllu"))}
    assert dist["en"] < 0.05 and dist["es"] < dist["hi"] and dist["ru"] < dist["hi"], dist
