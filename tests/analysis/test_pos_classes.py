from __future__ import annotations

import numpy as np
import pytest

from mbertlab.analysis.pos_classes import CLOSED_CLASSES, most_frequent_upos, mrr_by_pos
from mbertlab.analysis.retrieval import word_retrieval

CONLLU = """# text = run dogs run
1\trun\trun\tVERB\t_\t_\t0\troot\t_\t_
2\tdogs\tdog\tNOUN\t_\t_\t1\tobj\t_\t_
3\trun\trun\tNOUN\t_\t_\t1\tobj\t_\t_

# text = the run fast
1\tthe\tthe\tDET\t_\t_\t2\tdet\t_\t_
2\trun\trun\tVERB\t_\t_\t0\troot\t_\t_
3\tfast\tfast\tADV\t_\t_\t2\tadvmod\t_\t_

"""


def test_most_frequent_upos(tmp_path):
    path = tmp_path / "t.conllu"
    path.write_text(CONLLU, encoding="utf-8")
    assert most_frequent_upos([path]) == {"run": "VERB", "dogs": "NOUN", "the": "DET", "fast": "ADV"}
    assert "DET" in CLOSED_CLASSES and "PUNCT" not in CLOSED_CLASSES
    tsv = tmp_path / "t.tsv"  # XTREME's token<TAB>UPOS form, as the taskdata stage writes real UPOS files
    tsv.write_text("run\tVERB\ndogs\tNOUN\nrun\tNOUN\n\nthe\tDET\nrun\tVERB\nfast\tADV\n\n", encoding="utf-8")
    assert most_frequent_upos([tsv]) == most_frequent_upos([path])


def test_mrr_by_pos_equals_hand_computation():
    # targets on the unit circle; each source vector is placed so its gold target has a chosen rank
    angles = {"t1": 0.0, "t2": 0.5, "t3": 1.0, "t4": 1.5}
    tgt = {t: np.array([np.cos(a), np.sin(a)]) for t, a in angles.items()}
    src = {"dog": tgt["t1"], "cat": np.array([np.cos(0.1), np.sin(0.1)]),   # dog->t1 rank 1; cat->t2 rank 2
           "run": np.array([np.cos(1.45), np.sin(1.45)]),                       # run->t3 rank 2
           "the": np.array([np.cos(0.05), np.sin(0.05)])}                      # the->t4 rank 4
    dictionary = {"dog": ["t1"], "cat": ["t2"], "run": ["t3"], "the": ["t4"]}
    ranks = word_retrieval(dictionary, src, tgt).ranks
    assert ranks == {"dog": 1, "cat": 2, "run": 2, "the": 4}
    got = mrr_by_pos(ranks, {"dog": "NOUN", "cat": "NOUN", "run": "VERB", "the": "DET"})
    assert got == pytest.approx({"NOUN": (1 + 1 / 2) / 2, "VERB": 1 / 2, "open": (1 + 1 / 2 + 1 / 2) / 3,
                                 "closed": 1 / 4})
