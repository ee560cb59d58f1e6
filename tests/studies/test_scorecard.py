"""Scorecard predicates on synthetic rows: holds / does not hold / inconclusive / not run, decided by tests
checked against scipy's and statsmodels' own (Welch t-test, TOST); numbers and effect sizes."""
from __future__ import annotations

import math

import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_ind

from mbertlab.errors import ConfigError
from mbertlab.store.results import ResultRow
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import run_study
from mbertlab.studies.scorecard import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    evaluate_findings,
    parse_findings,
    scorecard_tables,
)
from mbertlab.studies.spec import load_spec
from tests.studies.test_runner import context, write_spec


def rows_for(cond: str, lang: str, values, metric="accuracy", **extra) -> list[ResultRow]:
    return [ResultRow(metric=metric, value=v, task="upos", test_lang=lang, split="test", seed=i,
                      extra={"condition": cond, **extra}) for i, v in enumerate(values)]


ROWS = (rows_for("shared", "src", [0.90, 0.92, 0.94]) + rows_for("shared", "tgt", [0.60, 0.62, 0.64])
        + rows_for("fake", "src", [0.91, 0.93, 0.95]) + rows_for("fake", "tgt", [0.59, 0.61, 0.63])
        + rows_for("random", "tgt", [0.30, 0.40, 0.50])
        + [r for p, v in [(0, 0.7), (0.25, 0.6), (0.5, 0.5), (1, 0.45)]
           for r in rows_for("perm", "tgt", [v, v + 0.02], permutation=p)])


def one(spec: dict, rows=ROWS):
    return evaluate_findings(parse_findings([{"id": "f", "quote": "c", "section": "§1", **spec}], "spec.yaml"),
                             rows)[0]


def vals(cond, lang=None):
    return [r.value for r in ROWS if r.extra["condition"] == cond and lang in (None, r.test_lang)]


def welch_state(a, b, margin=0.0, alpha=0.05):
    """The verdict as scipy's Welch test gives it: significant up holds, significant down fails."""
    a = [x - margin for x in a]
    if stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue < alpha:
        return HOLDS
    return FAILS if stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue < alpha else INCONCLUSIVE


def test_greater_is_decided_by_a_welch_test():
    shared, random = vals("shared", "tgt"), vals("random")
    v = one({"kind": "greater", "where": {"metric": "accuracy"}, "a": {"condition": "shared", "test_lang": "tgt"},
             "b": {"condition": "random"}})
    assert v.state == HOLDS == welch_state(shared, random)
    assert [s.n for s in v.sides] == [3, 3] and "Welch" in v.test
    assert v.effect == pytest.approx(0.62 - 0.40)
    # stds 0.02 and 0.1 -> pooled sqrt((0.0004 + 0.01) / 2)
    assert v.cohen_d == pytest.approx(0.22 / math.sqrt(0.0052))
    for margin, expected in [(0.3, INCONCLUSIVE), (0.5, FAILS)]:  # 0.22 - 0.3 is within the spread; - 0.5 is not
        v = one({"kind": "greater", "a": {"condition": "shared", "test_lang": "tgt"}, "b": {"condition": "random"},
                 "margin": margin})
        assert v.state == expected == welch_state(shared, random, margin)
    assert one({"kind": "greater", "a": {"condition": "random"},
                "b": {"condition": "shared", "test_lang": "tgt"}}).state == FAILS == welch_state(random, shared)
    # 0.61 vs 0.62 with stds 0.02: the seeds cannot separate them
    assert one({"kind": "greater", "a": {"condition": "shared", "test_lang": "tgt"},
                "b": {"condition": "fake", "test_lang": "tgt"}}).state == INCONCLUSIVE


def test_differences_need_three_seeds_a_side():
    # permutation 0 and 1: 0.71 vs 0.46, but two seeds each
    v = one({"kind": "greater", "a": {"condition": "perm", "permutation": 0}, "b": {"condition": "perm",
                                                                                   "permutation": 1}})
    assert v.state == INCONCLUSIVE and "≥ 3 seeds" in v.test and v.effect == pytest.approx(0.25)


def test_no_spread_lets_the_numbers_decide():
    rows = rows_for("x", "a", [0.5, 0.5, 0.5]) + rows_for("y", "a", [0.4, 0.4, 0.4])
    assert one({"kind": "greater", "a": {"condition": "x"}, "b": {"condition": "y"}}, rows).state == HOLDS
    assert one({"kind": "greater", "a": {"condition": "y"}, "b": {"condition": "x"}}, rows).state == FAILS


def test_above_a_constant_overall_and_at_every_level():
    random = vals("random")  # 0.30, 0.40, 0.50
    for value in (0.1, 0.35, 0.45, 0.7):
        expected = HOLDS if stats.ttest_1samp(random, value, alternative="greater").pvalue < 0.05 else \
            FAILS if stats.ttest_1samp(random, value, alternative="less").pvalue < 0.05 else INCONCLUSIVE
        v = one({"kind": "above", "select": {"condition": "random"}, "value": value})
        assert v.state == expected, value
        assert v.effect == pytest.approx(0.40 - value)
    assert one({"kind": "above", "select": {"condition": "random"}, "value": 0.1}).state == HOLDS
    assert one({"kind": "above", "select": {"condition": "random"}, "value": 0.7}).state == FAILS
    assert one({"kind": "below", "select": {"condition": "random"}, "value": 0.7}).state == HOLDS
    # two seeds a level: inconclusive; `direct` compares the means (a statistic computed once)
    v = one({"kind": "above", "select": {"condition": "perm"}, "by": "permutation", "value": 0.5})
    assert v.state == INCONCLUSIVE and len(v.sides) == 4 and "permutation=1" in v.test
    assert v.effect == pytest.approx(0.46 - 0.5)
    direct = {"select": {"condition": "perm"}, "by": "permutation", "test": "direct"}
    assert one({"kind": "above", **direct, "value": 0.5}).state == FAILS
    assert one({"kind": "above", **direct, "value": 0.45}).state == HOLDS
    v = one({"kind": "above", "select": {"condition": "perm"}, "by": "permutation", "levels": [0, 2], "value": 0})
    assert v.state == NOT_RUN and "permutation=2" in v.test
    assert one({"kind": "above", "select": {"condition": "unigram"}, "value": 0}).state == NOT_RUN
    with pytest.raises(ConfigError, match="levels"):
        one({"kind": "above", "levels": [1], "value": 0})
    v = one({"kind": "below", **direct, "value": 0.7})
    assert v.state == FAILS and "permutation=0" in v.test and v.effect == pytest.approx(0.71 - 0.7)
    assert one({"kind": "below", **direct, "value": 0.72}).state == HOLDS


def test_a_claim_the_study_cannot_test_is_listed_as_not_run():
    v = one({"kind": "untested", "why": "needs a Hindi treebank"})
    assert v.state == NOT_RUN and v.test == "not tested: needs a Hindi treebank" and v.sides == ()
    with pytest.raises(ConfigError, match="why"):
        one({"kind": "untested"})


def test_missing_rows_are_not_run():
    v = one({"kind": "greater", "a": {"condition": "shared"}, "b": {"condition": "unigram"}})
    assert v.state == NOT_RUN and "condition=unigram" in v.test
    assert one({"kind": "within", "tol": 0.1, "a": {"condition": "fake"}, "b": {"metric": "f1"}}).state == NOT_RUN
    assert one({"kind": "greater", "a": {"condition": "shared"}, "b": {"condition": "fake"}}, rows=[]).state == NOT_RUN


def tost_state(a, b, tol, alpha=0.05):
    """statsmodels' two one-sided tests: equivalent within ±tol, or not (a Welch test at 2α against ±tol)."""
    if ttost_ind(a, b, -tol, tol, usevar="unequal")[0] < alpha:
        return HOLDS
    d = sum(a) / len(a) - sum(b) / len(b)
    outside = [x - (tol if d > 0 else -tol) for x in a]
    side = "greater" if d > 0 else "less"
    return FAILS if stats.ttest_ind(outside, b, equal_var=False, alternative=side).pvalue < alpha else INCONCLUSIVE


def test_within_is_decided_by_two_one_sided_tests():
    fake, shared, random = vals("fake", "tgt"), vals("shared", "tgt"), vals("random")
    same = {"a": {"condition": "fake", "test_lang": "tgt"}, "b": {"condition": "shared", "test_lang": "tgt"}}
    for tol in (0.005, 0.02, 0.06, 0.2):  # |0.61 - 0.62| = 0.01 with stds 0.02
        v = one({"kind": "within", "tol": tol, **same})
        assert v.state == tost_state(fake, shared, tol), tol
    assert one({"kind": "within", "tol": 0.06, **same}).state == HOLDS
    assert one({"kind": "within", "tol": 0.02, **same}).state == INCONCLUSIVE
    spread = {"a": {"condition": "shared", "test_lang": "tgt"}, "b": {"condition": "random"}}
    # pooled std = sqrt(0.0052) = 0.0721; difference 0.22 = 3.05 stds, with a wide interval
    v = one({"kind": "within", "k": 3.1, **spread})
    assert v.state == INCONCLUSIVE == tost_state(shared, random, 3.1 * math.sqrt(0.0052))
    far = rows_for("x", "a", [0.50, 0.51, 0.52]) + rows_for("y", "a", [0.10, 0.11, 0.12])
    v = one({"kind": "within", "tol": 0.05, "a": {"condition": "x"}, "b": {"condition": "y"}}, far)
    assert v.state == FAILS == tost_state([0.50, 0.51, 0.52], [0.10, 0.11, 0.12], 0.05)
    single = ROWS + [ResultRow(metric="accuracy", value=0.5, extra={"condition": "solo"})]
    v = one({"kind": "within", "k": 1, "a": {"condition": "solo"}, "b": {"condition": "solo"}}, single)
    assert v.state == INCONCLUSIVE and "≥ 3 seeds" in v.test


def test_monotone_over_a_factor():
    rows = [r for p, v in [(0, 0.7), (0.25, 0.6), (0.5, 0.5), (1, 0.45)]
            for r in rows_for("perm", "tgt", [v, v + 0.01, v + 0.02], permutation=p)]
    base = {"by": "permutation", "levels": [0, 0.25, 0.5, 1], "select": {"condition": "perm"}}
    v = one({"kind": "decreasing", **base}, rows)
    assert v.state == HOLDS and v.effect == pytest.approx(0.45 - 0.7)
    assert [s.n for s in v.sides] == [3, 3, 3, 3]
    assert one({"kind": "increasing", **base}, rows).state == FAILS
    assert one({"kind": "decreasing", **base, "margin": 0.1}, rows).state == FAILS  # last step is 0.05
    assert one({"kind": "decreasing", **base, "margin": 0.05}, rows).state == INCONCLUSIVE  # exactly the margin
    assert one({"kind": "decreasing", **base, "levels": [0, 0.75]}, rows).state == NOT_RUN
    assert one({"kind": "decreasing", **base}).state == INCONCLUSIVE  # ROWS: two seeds a level


def test_delta_within():
    spec = {"kind": "delta_within", "a1": {"condition": "fake", "test_lang": "src"},
            "a2": {"condition": "fake", "test_lang": "tgt"}, "b1": {"condition": "shared", "test_lang": "src"},
            "b2": {"condition": "shared", "test_lang": "tgt"}}
    v = one({**spec, "tol": 0.1})  # Δfake = 0.32, Δshared = 0.30, each group's std 0.02
    assert v.state == HOLDS and v.effect == pytest.approx(0.02)
    # Welch–Satterthwaite for four equal groups: se = 0.02·sqrt(4/3), df = 8; 90% interval 0.02 ± 1.860·se
    half = stats.t.ppf(0.95, 8) * 0.02 * math.sqrt(4 / 3)
    assert f"[{0.02 - half:+.4g}, {0.02 + half:+.4g}]" in v.test
    assert one({**spec, "tol": 0.04}).state == INCONCLUSIVE


def test_invalid_findings_are_config_errors():
    q = {"id": "x", "quote": "c", "section": "§1"}
    with pytest.raises(ConfigError) as err:
        parse_findings([{**q, "kind": "bigger", "a": {}, "b": {}}], "s.yaml")
    assert "s.yaml" in str(err.value)
    with pytest.raises(ConfigError, match="exactly one"):
        parse_findings([{**q, "kind": "within", "a": {}, "b": {}}], "s.yaml")
    with pytest.raises(ConfigError, match="duplicate"):
        parse_findings([{**q, "kind": "greater", "a": {}, "b": {}}] * 2, "s.yaml")
    with pytest.raises(ConfigError, match="quote"):  # a paper's claim quotes the paper
        parse_findings([{"id": "x", "claim": "c", "kind": "greater", "a": {}, "b": {}}], "s.yaml")
    with pytest.raises(ConfigError, match="claim"):
        parse_findings([{"id": "x", "own": True, "kind": "greater", "a": {}, "b": {}}], "s.yaml")


def test_tables_count_the_papers_claims_and_list_our_own_apart():
    findings = parse_findings([
        {"id": "g", "quote": "Shared beats random.", "section": "§4", "ref": "Table 1", "kind": "greater",
         "a": {"condition": "shared", "test_lang": "tgt"}, "b": {"condition": "random"}},
        {"id": "n", "quote": "Unigram.", "section": "§5", "kind": "greater", "a": {"condition": "unigram"},
         "b": {"condition": "x"}},
        {"id": "i", "quote": "Fake beats shared.", "section": "Abstract", "kind": "greater",
         "a": {"condition": "fake", "test_lang": "tgt"}, "b": {"condition": "shared", "test_lang": "tgt"}},
        {"id": "o", "own": True, "claim": "random is above 0.1", "kind": "above", "select": {"condition": "random"},
         "value": 0.1}], "s.yaml")
    paper, own = scorecard_tables(evaluate_findings(findings, ROWS))
    text = paper.as_text_rows()
    assert [r[0] for r in text] == ["g", "n", "i"]
    # g and i are tested: Holm over their two p-values (scipy's Welch p, adjusted by statsmodels)
    p_g = stats.ttest_ind(vals("shared", "tgt"), vals("random"), equal_var=False, alternative="greater").pvalue
    p_i = stats.ttest_ind(vals("fake", "tgt"), vals("shared", "tgt"), equal_var=False, alternative="less").pvalue
    raw = [p_g, min(p_i, 1 - p_i)]
    adjusted = multipletests(raw, method="holm")[1]
    assert [float(text[0][5]), float(text[2][5])] == pytest.approx(raw, rel=1e-2)
    assert [float(text[0][6]), float(text[2][6])] == pytest.approx(adjusted, rel=1e-2)
    g_state = HOLDS if adjusted[0] < 0.05 else INCONCLUSIVE
    assert text[0][:3] == ["g", "“Shared beats random.” (§4; Table 1)", g_state] and text[1][2] == "not run"
    assert "0.62 ± 0.02 (n=3)" in text[0][8] and text[0][9] == "+0.22"
    holds = int(g_state == HOLDS)
    assert paper.note.startswith(f"{holds} holds, 0 does not hold, {2 - holds} inconclusive, 0 uninformative, "
                                 "1 not run (of the paper's claims)")
    assert own.as_text_rows()[0][:3] == ["o", "random is above 0.1", "holds"]
    assert "not counted" in own.title


def test_report_of_a_spec_with_findings_shows_the_scorecard(tmp_path):
    findings = [{"id": "longer", "quote": "A longer cell scores higher.", "section": "§1", "kind": "greater",
                 "where": {"metric": "accuracy"}, "a": {"cell": "bb"}, "b": {"cell": "a"}},  # tags reach `extra`
                {"id": "missing", "quote": "No such cell.", "section": "§2", "kind": "within", "k": 2,
                 "a": {"cell": "a"}, "b": {"cell": "zz"}}]
    spec = load_spec(write_spec(tmp_path / "toy.yaml", tmp_path, findings=findings, seeds=[0, 1, 2]))
    ctx = context(tmp_path / "w")
    run_study(spec, ctx)
    md, html = write_report(spec, ctx)
    text = md.read_text()
    assert "### Reproduction scorecard" in text and "<h3>Reproduction scorecard</h3>" in html.read_text()
    line = next(l for l in text.splitlines() if l.startswith("| longer |"))
    assert "| holds |" in line and "+0.1 |" in line  # 0.20-0.22 vs 0.10-0.12: t = 12 on 4 df
    assert "| not run |" in next(l for l in text.splitlines() if l.startswith("| missing |"))


def paired_state(a, b, margin=0.0, alpha=0.05):
    """The verdict as scipy's paired t-test gives it."""
    a = [x - margin for x in a]
    if stats.ttest_rel(a, b, alternative="greater").pvalue < alpha:
        return HOLDS
    return FAILS if stats.ttest_rel(a, b, alternative="less").pvalue < alpha else INCONCLUSIVE


def test_paired_greater_tests_the_differences_per_model():
    """Two metrics of the same six models: each model is a little higher on one, far apart between models. Welch
    sees the spread between models and cannot decide; the paired test (scipy's ttest_rel) decides."""
    high = [0.419, 0.577, 0.387, 0.647, 0.493, 0.542]  # Liu et al.'s Table 1, open class, by language
    low = [0.392, 0.558, 0.310, 0.600, 0.403, 0.491]  # closed class
    rows = rows_for("m", "x", high, metric="open") + rows_for("m", "x", low, metric="closed")
    spec = {"kind": "greater", "a": {"metric": "open"}, "b": {"metric": "closed"}}
    assert one(spec, rows).state == INCONCLUSIVE == welch_state(high, low)
    v = one({**spec, "paired": True}, rows)
    assert v.state == HOLDS == paired_state(high, low)
    assert v.p == pytest.approx(stats.ttest_rel(high, low, alternative="greater").pvalue)
    for margin in (0.05, 0.1):  # mean difference 0.0518: undecided at 0.05, fails at 0.1
        assert one({**spec, "paired": True, "margin": margin}, rows).state == paired_state(high, low, margin)
    # a model measured on one side only is left out; one model twice on a side cannot be paired
    assert one({**spec, "paired": True}, rows[:5] + rows[6:]).sides[0].n == 5
    twice = rows + [ResultRow(metric="open", value=0.5, task="upos", test_lang="x", split="test", seed=0,
                              extra={"condition": "m"})]
    assert "several rows of one seed" in one({**spec, "paired": True}, twice).test


def test_paired_monotone_steps_are_paired_tests():
    levels = {0: [0.50, 0.70, 0.60], 1: [0.52, 0.73, 0.61], 2: [0.55, 0.74, 0.65]}
    rows = [r for level, v in levels.items() for r in rows_for("m", "x", v, permutation=level)]
    spec = {"kind": "increasing", "by": "permutation", "levels": [0, 1, 2], "paired": True}
    # every model rises at each step (by 0.01-0.04), the models lie 0.2 apart
    assert [paired_state(levels[b], levels[a]) for a, b in [(0, 1), (1, 2)]] == [HOLDS, HOLDS]
    assert one(spec, rows).state == HOLDS
    assert one({**spec, "paired": False}, rows).state == INCONCLUSIVE == welch_state(levels[1], levels[0])


def test_paired_is_refused_where_it_means_nothing():
    with pytest.raises(ConfigError, match="paired"):
        parse_findings([{"id": "f", "quote": "c", "section": "§1", "kind": "within", "a": {}, "b": {}, "tol": 0.1,
                         "paired": True}], "spec.yaml")


def test_paired_rows_match_on_language_unless_the_sides_differ_in_it():
    """One model scored in two languages on two metrics: open pairs with closed language by language; a claim
    across languages (src above tgt) pairs the model's two languages."""
    scores = (("open", 0.5), ("closed", 0.45))
    rows = [ResultRow(metric=m, value=v + s / 10 + (0.1 if lang == "src" else 0), task="retrieval", test_lang=lang,
                      seed=s) for s in range(3) for lang in ("src", "tgt") for m, v in scores]
    by_metric = one({"kind": "greater", "a": {"metric": "open"}, "b": {"metric": "closed"}, "paired": True}, rows)
    assert by_metric.state == HOLDS and "paired over 6 pairs" in by_metric.test
    by_lang = one({"kind": "greater", "where": {"metric": "open"}, "a": {"test_lang": "src"},
                   "b": {"test_lang": "tgt"}, "paired": True}, rows)
    assert by_lang.state == HOLDS and "paired over 3 pairs" in by_lang.test


def test_paired_models_match_on_each_languages_test_set():
    """Two encoders (two artifacts) on four languages' test sets, one seed: matched by language, as a paper reads
    its per-language table."""
    multi, mono = [0.94, 0.93, 0.65, 0.81], [0.93, 0.91, 0.56, 0.70]
    rows = [ResultRow(metric="f1", value=v, task="ner", test_lang=lang, seed=0, artifact=f"/w/{enc}",
                      extra={"encoder": enc}) for enc, vs in (("multi", multi), ("mono", mono))
            for lang, v in zip(("lv", "af", "mn", "yo"), vs)]
    v = one({"kind": "greater", "a": {"encoder": "multi"}, "b": {"encoder": "mono"}, "paired": True}, rows)
    assert v.state == paired_state(multi, mono) and "paired over 4 pairs" in v.test
    assert v.p == pytest.approx(stats.ttest_rel(multi, mono, alternative="greater").pvalue)


def test_paired_delta_matches_each_seeds_delta():
    """Δ = source − target per model, paired by seed across two conditions (each seed's two models share their
    data order): scipy's ttest_rel on the per-seed Δs."""
    dx, dy = [0.10, 0.30, 0.20], [0.05, 0.26, 0.14]
    rows = []
    for cond, deltas in (("x", dx), ("y", dy)):
        rows += rows_for(cond, "src", [0.9] * 3, artifact_tag=cond)
        rows += rows_for(cond, "tgt", [0.9 - d for d in deltas], artifact_tag=cond)
    spec = {"kind": "greater", "a": {"condition": "x"}, "b": {"condition": "y"},
            "delta": {"source": {"test_lang": "src"}, "target": {"test_lang": "tgt"}}}
    assert one(spec, rows).state == INCONCLUSIVE == welch_state(dx, dy)
    v = one({**spec, "paired": True}, rows)
    assert v.state == HOLDS == paired_state(dx, dy) and v.effect == pytest.approx(0.05)
