"""K et al.'s own published numbers through k2020's findings (paper scale): each table row the report maps to a
condition becomes rows of that condition, one per target language the paper prints (es / hi / ru as three
samples; a Russian-only table as three equal values, so the numbers decide exactly). The test lists the claims
the paper's own numbers would not pass, each with why: a predicate the paper itself fails is a wrong reading."""
from __future__ import annotations

import re

from mbertlab.store.results import ResultRow
from mbertlab.studies.published import load_published
from mbertlab.studies.scorecard import evaluate_findings
from mbertlab.studies.spec import load_spec
from tests.studies.own_numbers import paper_claims

PUBLISHED = load_published("k2020")


def _paper_rows(spec, tables: set[str]) -> list[ResultRow]:
    """Rows from the paper's tables named (the base condition is a row of most tables, with other numbers)."""
    targets = {c.name: c.test_on or c.target for c in spec.settings.conditions}  # where target scores are read
    rows = []
    for table in spec.settings.tables:
        if table.paper is None or table.paper.table not in tables:
            continue
        for row in table.rows:
            for key, column in table.paper.columns.items():
                task, side = key.split(".")
                if side == "delta":
                    continue
                lang = {"source": "src", "target": targets[row.condition]}.get(side, side)
                values = [n.value / 100 for label in row.paper
                          if (n := PUBLISHED.number(table.paper.table, label, column)) is not None]
                values = values * 3 if len(values) == 1 else values
                rows += [ResultRow("accuracy" if task == "xnli" else "f1", v, task=task, test_lang=lang, split="test",
                                   seed=i, extra={"condition": row.condition, "control": "pretrained"})
                         for i, v in enumerate(values)]
    return rows


def test_which_claims_the_papers_own_numbers_pass():
    spec = load_spec("k2020", "paper")
    findings = paper_claims("k2020")
    # by hand: Table 4's Δ (Russian) per depth, as the paper prints it (source − target)
    depth = {r.test_lang: r.value for r in _paper_rows(spec, {"Table 4"}) if r.extra["condition"] == "depth 1"}
    assert round(100 * (depth["src"] - depth["tgt_fake"]), 1) == 21.6
    # each claim over the rows of the tables it names (its `ref`)
    verdicts = {f.id: evaluate_findings([f], _paper_rows(spec, {f"Table {n}" for n in re.findall(r"\d+", f.ref)}),
                                        correct=False)[0] for f in findings}
    states = {i: v.state for i, v in verdicts.items()}
    assert {i for i, s in states.items() if s == "does not hold"} == set()
    assert {i for i, s in states.items() if s == "not run"} == {
        # untested: a correlation across conditions; §3.2.4's en-enfake pair and targets of several structures
        "depth-correlation", "fake-english-to-english", "structure-spanish-closer",
        # judged against a random-init control, which the paper does not have
        "cross-lingual-without-overlap", "permuted-above-random", "single-head-cross-lingual",
        # Table 11 (mixed premise / hypothesis) is its own report table, not a factor table's paper columns
        "mixed-pairs-drop-source-premise", "mixed-pairs-drop-target-premise"}
    # the fixed predicates pass the paper's own columns: the source score may dip 0.2 at depth 24, Table 7's
    # gaps reach 5.5 points on Russian (here hi's place: 1.9)
    assert states["deeper-better-source"] == "holds" and states["four-languages"] == "holds"
    assert states["deeper-better-target"] == "holds"  # Δ falls 21.6 > 18 > 17.9 > 15.2 > 13.3 > 13.1 > 11.3
    # "NSP hurts ... even more than monolingual": Δ with NSP above without in every language (by 1.6, 0.3 and 1.0
    # points), too little against the languages' spread to decide
    # es / hi / ru as three unpaired samples: their spread (e.g. Table 1's targets at 74.9 / 61.7 / ... ) hides
    # effects of a few points that the paper reads per language; none of these fails, none is decided
    assert {i for i, s in states.items() if s == "inconclusive"} == {
        "markers-no-effect-ner", "markers-no-effect-xnli", "nsp-hurts", "nsp-hurts-cross-lingual-more",
        "overlap-negligible-ner",
        "overlap-negligible-xnli", "structure-crucial", "word-order-xnli", "word-over-char", "wordpiece-like-word",
        "wordpiece-over-char", "wordpiece-over-word"}
    assert {i for i, s in states.items() if s == "holds"} == {
        "word-order-ner", "unigram-not-enough", "unigram-not-enough-xnli", "heads-not-significant", "depth-integral",
        "deeper-better-source", "deeper-better-target", "heads-no-effect", "parameters-threshold", "four-languages"}
