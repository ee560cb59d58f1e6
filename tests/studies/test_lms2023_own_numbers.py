"""Limisiewicz et al. 2023's own Table 2 (Eq. 3: MRR x 100 relative to the teachers, one run per model) through
lms2023's Table 2 findings, each number as three equal seeds (decided exactly, pooled sets by their spread). The
test lists the claims the paper's own table does not pass: each reads a sentence of the paper that its own table
contradicts, and the spec's claim says so (we keep the paper's sentence as the claim, not our reading of the
table)."""
from __future__ import annotations

import pytest

from mbertlab.store.results import ResultRow
from mbertlab.studies.published import load_published
from mbertlab.studies.scorecard import FAILS, HOLDS, INCONCLUSIVE, evaluate_findings
from tests.studies.own_numbers import paper_claims

SETS = {"Shared": "shared script", "Diverse": "diverse script"}
GROUPS = {"Low-Res.": "low", "High-Res.": "high", "All": "all"}
VARIANTS = {"HL": "HL", "HL Balanced": "HL balanced", "Ours": "distilled"}


def table2_rows() -> list[ResultRow]:
    rows = []
    for n in load_published("lms2023").numbers:
        if n.table == "Table 2":
            paper_set, group = n.row.split(", ")
            rows += [ResultRow("eq3", n.value / 100, task="retrieval", test_lang=GROUPS[group], seed=seed,
                               extra={"level": "group", "set": SETS[paper_set], "variant": VARIANTS[n.column]})
                     for seed in range(3)]
    return rows


def test_table2_claims_on_the_papers_own_numbers():
    findings = paper_claims("lms2023", "Table 2")
    assert len(table2_rows()) == 54
    verdicts = {v.id: v for v in evaluate_findings(findings, table2_rows(), correct=False)}
    states = {i: v.state for i, v in verdicts.items()}
    assert {i for i, s in states.items() if s == FAILS} == {
        # §6 "low-resource languages are dominated by HL balanced": diverse low prints -3.8 (HL balanced) < -3.1
        "low-dominated-by-balanced",
        # §6 "our method has the best score for low-resource languages" (shared): -0.1 < HL balanced's 0.3
        "shared-low-best"}
    # Figure 1's caption "HL excels in high-resource languages", read across the figure's models as it compares
    # them, in each set: HL's high-resource Eq. 3 above the student's (-5.8 vs -7.6, -5.0 vs -7.0). Read within HL
    # (high > low) it failed the paper's own table (-5.8 vs -2.5 shared)
    assert states["hl-favours-high"] == HOLDS and "smallest: " in verdicts["hl-favours-high"].test
    assert states["balanced-helps-low"] == HOLDS and states["balanced-costs-high"] == HOLDS
    assert verdicts["low-dominated-by-balanced"].effect == pytest.approx(-0.038 + 0.031)
    assert verdicts["shared-low-best"].effect == pytest.approx(-0.001 - 0.003)
    # "maintaining performance on high-resource languages": the 2.0-point gap (diverse) is within the 0.02
    # tolerance exactly (printed to a tenth of a point); pooled over both sets the spread of the two sets leaves
    # the 1.9-point mean gap undecided, and the 1.4-point win over HL balanced (all languages) too
    assert states["conclusion-high-diverse"] == HOLDS and verdicts["conclusion-high-diverse"].effect == \
        pytest.approx(-0.02)
    assert {i for i, s in states.items() if s == INCONCLUSIVE} == {"abstract-high-resource",
                                                                  "conclusion-beats-subsampling"}
    assert all(s in (HOLDS, FAILS, INCONCLUSIVE) for s in states.values()) and len(states) == 18
