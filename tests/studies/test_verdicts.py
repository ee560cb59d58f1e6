"""Checks before a claim (learned, left_plateau, control, surface: pass, fail, missing data), the fifth verdict
'uninformative', Δ predicates against a hand computation, Holm against statsmodels' multipletests, the seeds
needed against statsmodels' power solvers, and a job's tags kept over a row's extras of another meaning."""
from __future__ import annotations

import json
import math
import sys
import types

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import TTestIndPower, TTestPower

from mbertlab.store.results import ResultRow
from mbertlab.analysis import artifact_facts as checks_module
from mbertlab.studies.report import with_tags
from mbertlab.studies.scorecard import (
    FAILS,
    HOLDS,
    INCONCLUSIVE,
    NOT_RUN,
    UNINFORMATIVE,
    evaluate_findings,
    parse_findings,
    scorecard_tables,
    verdict_counts,
)
from mbertlab.analysis.significance import holm, seeds_needed
from tests.analysis.test_plateau import _by_table


def row(value, cond, lang, seed, control="pretrained", artifact="", **extra) -> ResultRow:
    return ResultRow(metric="accuracy", value=value, task="xnli", test_lang=lang, split="test", seed=seed,
                     artifact=artifact, extra={"condition": cond, "control": control, **extra})


def grid(cond, src, tgt, control="pretrained"):
    return [r for s, (a, b) in enumerate(zip(src, tgt))
            for r in (row(a, cond, "src", s, control), row(b, cond, "tgt", s, control))]


ROWS = (grid("base", [0.80, 0.82, 0.84], [0.60, 0.61, 0.65]) + grid("deep", [0.85, 0.86, 0.88], [0.75, 0.74, 0.78])
        + grid("base", [0.50, 0.52, 0.51], [0.40, 0.41, 0.42], "random_init")
        + grid("deep", [0.50, 0.83, 0.51], [0.40, 0.41, 0.42], "random_init")
        + [row(0.34, c, lang, 0, "majority") for c in ("base", "deep") for lang in ("src", "tgt")])
LEARNED = {"kind": "learned", "select": {"test_lang": "src"}, "against": [{"control": "random_init"},
                                                                      {"control": "majority", "seed": None}]}


def one(spec: dict, rows=ROWS, workdir=None):
    return evaluate_findings(parse_findings([{"id": "f", "quote": "c", "section": "§1", **spec}], "s.yaml"),
                             rows, workdir)[0]


GREATER = {"kind": "greater", "where": {"control": "pretrained", "test_lang": "tgt"}, "a": {"condition": "deep"},
           "b": {"condition": "base"}}


def test_learned_passes_fails_and_needs_its_rows():
    only_base = {**GREATER, "b": {"condition": "base"}, "a": {"condition": "base", "seed": [0, 1, 2]}}
    v = one({**only_base, "checks": [LEARNED]})
    assert v.checks[0].passed and v.state != UNINFORMATIVE
    # deep's source [0.85, 0.86, 0.88] against its random-init control's [0.50, 0.83, 0.51]: every seed is above
    # its own control by 3 points or more (a fixed 2-point margin passed it), but a Welch test cannot tell them
    # apart beyond a 2-point margin: its seeds do not show that deep learned more than the control
    deep, control = np.array([0.85, 0.86, 0.88]), [0.50, 0.83, 0.51]
    p = stats.ttest_ind(deep - 0.02, control, equal_var=False, alternative="greater").pvalue
    v = one({**GREATER, "checks": [{**LEARNED, "margin": 0.02}]})
    assert p > 0.05 and v.state == UNINFORMATIVE and v.checks[0].passed is False and v.p is None
    assert "condition=deep (src): 0.8633 vs control=random_init 0.6133 (+0.25, needs > 0.02" in str(v.checks[0])
    assert f"p={p:.3g}" in v.checks[0].text and v.test == "not judged: learned failed (see checks)"
    # no such control: the check cannot be evaluated, so the verdict means nothing either
    v = one({**GREATER, "checks": [{**LEARNED, "against": [{"control": "nothing"}]}]})
    assert v.state == UNINFORMATIVE and v.checks[0].passed is None and "no rows for the control" in v.checks[0].text
    assert v.test == "not judged: learned not evaluated (see checks)"
    # missing claim rows win: not run
    assert one({**GREATER, "a": {"condition": "none"}, "checks": [LEARNED]}).state == NOT_RUN


def test_learned_against_one_majority_value_is_a_one_sample_test_with_the_test_sets_error():
    """Seeds [0.40, 0.41, 0.40] against the majority label's 0.34 by 2 points: the seeds alone separate them,
    but 300 test items give each accuracy a binomial error of about 2.8 points, which every seed shares."""
    model = [0.40, 0.41, 0.40]
    rows = [row(v, "base", "src", s) for s, v in enumerate(model)] + [row(0.34, "base", "src", 0, "majority")]
    check = {"kind": "learned", "select": {}, "against": [{"control": "majority", "seed": None}], "margin": 0.02}
    claim = {"kind": "above", "select": {"condition": "base", "control": "pretrained"}, "value": 0.3}
    v = one({**claim, "checks": [check]}, rows)
    p = stats.ttest_1samp(model, 0.34 + 0.02, alternative="greater").pvalue
    assert v.checks[0].passed and p < 0.05 and f"p={p:.3g}" in v.checks[0].text
    v = one({**claim, "checks": [{**check, "n_test": 300}]}, rows)
    m = np.mean(model)
    se = math.sqrt(np.var(model, ddof=1) / 3 + m * (1 - m) / 300 + 0.34 * 0.66 / 300)
    p = stats.t.sf((m - 0.34 - 0.02) / se, 2)
    assert v.state == UNINFORMATIVE and f"p={p:.3g}" in v.checks[0].text and p > 0.05


def test_transfers_keeps_an_equality_of_two_chance_level_targets_from_holding():
    """k2020's overlap claim on lab numbers: two targets at chance are within 3 points of each other (TOST
    holds), but neither is above its random-init control's target, so the equality says nothing about
    transfer."""
    shared, fake, noise = [0.332, 0.342, 0.322], [0.328, 0.338, 0.318], [0.333, 0.335, 0.331]
    rows = [row(v, c, lang, s, ctl) for c, lang, vals, ctl in [("shared", "tgt", shared, "pretrained"),
                                                              ("fake", "tgt_fake", fake, "pretrained"),
                                                              ("shared", "tgt", noise, "random_init"),
                                                              ("fake", "tgt_fake", noise, "random_init")]
            for s, v in enumerate(vals)]
    within = {"kind": "within", "tol": 0.03, "where": {"control": "pretrained"},
              "a": {"condition": "shared", "test_lang": "tgt"}, "b": {"condition": "fake", "test_lang": "tgt_fake"}}
    assert one(within, rows).state == HOLDS
    check = {"kind": "transfers", "against": {"control": "random_init"}, "margin": 0.02}
    v = one({**within, "checks": [check]}, rows)
    p = max(stats.ttest_ind(np.array(x) - 0.02, noise, equal_var=False, alternative="greater").pvalue
            for x in (shared, fake))
    assert v.state == UNINFORMATIVE and v.checks[0].passed is False and f"p={p:.3g}" in v.checks[0].text
    # targets that transfer: the same claim is judged
    up = [r if r.extra["control"] == "random_init" else row(r.value + 0.3, r.extra["condition"], r.test_lang,
                                                            r.seed) for r in rows]
    v = one({**within, "checks": [check]}, up)
    assert v.checks[0].passed and v.state == HOLDS and "weakest: " in v.checks[0].text


def test_transfers_on_a_delta_claim_checks_the_target_it_selects():
    """A Δ claim's sides select both source and target: `select` picks the target (base's [0.60, 0.61, 0.65]
    against its random-init target's [0.40, 0.41, 0.42]; deep's seed-1 random-init source 0.83 is not read)."""
    delta = {"source": {"test_lang": "src"}, "target": {"test_lang": "tgt"}}
    claim = {"kind": "greater", "where": {"control": "pretrained"}, "delta": delta, "a": {"condition": "base"},
             "b": {"condition": "deep"}}
    check = {"kind": "transfers", "select": {"test_lang": "tgt"}, "against": {"control": "random_init"},
             "margin": 0.1}
    v = one({**claim, "checks": [check]})
    p = stats.ttest_ind(np.array([0.60, 0.61, 0.65]) - 0.1, [0.40, 0.41, 0.42], equal_var=False,
                        alternative="greater").pvalue
    assert v.checks[0].passed and f"p={p:.3g}" in v.checks[0].text and "condition=base" in v.checks[0].text
    v = one({**claim, "checks": [{**check, "margin": 0.25}]})
    assert v.checks[0].passed is False and v.state == UNINFORMATIVE
    assert one({**claim, "checks": [{**check, "against": {"control": "none"}}]}).checks[0].passed is None


@pytest.mark.parametrize("means, passed, words", [
    ((0.995, 0.998), False, "at the ceiling"), ((0.995, 0.90), True, "room to move"),
    ((0.34, 0.335), False, "at chance"), ((0.34, 0.60), True, "room to move")])
def test_headroom_finds_scores_stuck_at_a_bound(means, passed, words):
    rows = [row(m + d, c, "tgt", s) for c, m in zip(("a", "b"), means) for s, d in enumerate((-0.001, 0, 0.001))]
    check = {"kind": "headroom", "chance": 1 / 3, "distance": 0.01}
    v = one({"kind": "greater", "a": {"condition": "a"}, "b": {"condition": "b"}, "checks": [check]}, rows)
    assert v.checks[0].passed is passed and words in v.checks[0].text
    assert (v.state == UNINFORMATIVE) is not passed


def test_control_is_present_and_separated():
    check = {"kind": "control", "against": {"control": "random_init"}, "margin": 0.2}
    v = one({**GREATER, "checks": [check]})  # target 0.62 / 0.757 vs random 0.41: base's gap 0.21 > 0.2
    assert v.checks[0].passed and "control=base" not in v.checks[0].text
    v = one({**GREATER, "checks": [{**check, "margin": 0.25}]})
    assert v.state == UNINFORMATIVE and "0.62 vs control=random_init 0.41" in v.checks[0].text
    assert one({**GREATER, "checks": [{**check, "against": {"control": "nothing"}}]}).checks[0].passed is None


def test_bound_checks_the_mean_of_the_rows_it_selects():
    """wd2020's 'adding vocabulary adds nothing' means something only where training size itself is significant:
    the univariate p-value of training size at most 0.05 (its rows picked by overriding the finding's filters)."""
    lr = ResultRow(metric="lr_p_value", value=0.4, task="ner", mode="lr", extra={"added": "vocab"})
    fits = [ResultRow(metric="p_value:size", value=p, task="ner", mode="univariate") for p in (0.01, 0.03)]
    claim = {"kind": "above", "test": "direct", "value": 0.05, "where": {"task": "ner", "metric": "lr_p_value",
                                                                          "added": "vocab"}, "select": {}}
    check = {"kind": "at_most", "value": 0.05, "select": {"metric": "p_value:size", "mode": "univariate",
                                                           "added": None}}
    v = one({**claim, "checks": [check]}, [lr, *fits])
    assert v.state == HOLDS and v.checks[0].passed and "0.02 ≤ 0.05" in v.checks[0].text
    v = one({**claim, "checks": [{**check, "value": 0.01}]}, [lr, *fits])
    assert v.state == UNINFORMATIVE and v.checks[0].passed is False and "fails" in v.checks[0].text
    assert one({**claim, "checks": [{**check, "kind": "at_least", "value": 0.01}]}, [lr, *fits]).checks[0].passed
    assert one({**claim, "checks": [check]}, [lr]).checks[0].passed is None  # no fit rows: not evaluated


def _artifact(workdir, stage, name, inputs=(), files=None):
    d = workdir / stage / name
    d.mkdir(parents=True)
    (d / "inputs.json").write_text(json.dumps([{"stage": p.parent.name, "hash": p.name, "path": str(p)}
                                               for p in inputs]))
    for path, text in (files or {}).items():
        (d / path).parent.mkdir(parents=True, exist_ok=True)
        (d / path).write_text(text) if isinstance(text, str) else np.save(d / path, text)
    return d


def _pretrained(tmp_path, losses: dict[str, float], selection: str = "uniform"):
    ids = {"src": np.array([3, 3, 3, 4, 5, 5, 6, 7], np.uint16), "tgt": np.array([8, 9, 9, 9, 9, 10], np.uint16)}
    files = {f"{l}.train.ids.npy": v for l, v in ids.items()}
    files |= {"shards.json": json.dumps({"languages": list(ids), "vocab_size": 12}),
              "tokenizer/mbertlab_tokenizer.json": json.dumps({"specials": 3})}
    shards = _artifact(tmp_path, "shards", "s1", files=files)
    metrics = "".join(json.dumps({"step": step, "lang": l, "loss": loss + (10 - step)}) + "\n"
                      for step in (5, 10) for l, loss in losses.items())
    pretrain = _artifact(tmp_path, "pretrain", "p1", [shards], {"metrics.jsonl": metrics,
                                                                 "config.json": json.dumps({"selection": selection})})
    transfer = _artifact(tmp_path, "transfer", "t1", [pretrain])
    every = np.bincount(np.concatenate(list(ids.values())), minlength=12)
    weights = np.maximum(every, 1) ** -0.5 if selection == "rare" else np.ones(12)
    free = {l: _by_table(np.bincount(v, minlength=12) * weights / (np.bincount(v, minlength=12) * weights).sum(), 3)
            for l, v in ids.items()}  # nats: the joint table of (answer, shown token), by scipy
    return transfer, free


def test_left_plateau_reads_the_final_dev_loss_against_the_context_free_loss(tmp_path):
    """The unigram entropies are 1.494 (src) and 0.868 (tgt); a predictor that ignores context but reads a shown
    token sits below them (1.406, 0.814): a dev loss between the two is still on the plateau."""
    transfer, free = _pretrained(tmp_path, {"src": 0.5, "tgt": 0.75})
    rows = [row(0.7, "base", "tgt", s, artifact=f"/elsewhere/transfer/{transfer.name}") for s in range(3)]
    plateau = {"kind": "above", "select": {"condition": "base"}, "value": 0.5, "checks":
               [{"kind": "left_plateau", "nats": 0.1}]}
    v = one(plateau, rows, tmp_path)  # the rows' paths resolve under the workdir
    assert round(free["src"], 3) == 1.406 and round(free["tgt"], 3) == 0.814
    gap = free["tgt"] - 0.75  # 0.064 < 0.1, though 0.118 below tgt's unigram entropy
    assert v.state == UNINFORMATIVE and v.checks[0].passed is False
    assert f"tgt: dev loss 0.750 vs context-free {free['tgt']:.3f} nats ({gap:.3f} below" in v.checks[0].text
    shutil_tmp = tmp_path / "b"
    transfer, free = _pretrained(shutil_tmp, {"src": 0.5, "tgt": 0.5})
    rows = [row(0.7, "base", "tgt", s, artifact=str(transfer)) for s in range(3)]
    v = one(plateau, rows, shutil_tmp)
    assert v.checks[0].passed and v.state == HOLDS
    assert f"{min(free['src'], free['tgt']) - 0.5:.3f} below" in v.checks[0].text
    (transfer.parent.parent / "pretrain" / "p1" / "metrics.jsonl").unlink()
    assert one(plateau, rows, shutil_tmp).checks[0].passed is None


def test_left_plateau_under_rare_token_selection(tmp_path):
    """Selection ∝ count^-0.5 (over every language's tokens) changes which tokens are asked, so the plateau."""
    transfer, free = _pretrained(tmp_path, {"src": 0.5, "tgt": 0.5}, "rare")
    rows = [row(0.7, "base", "tgt", s, artifact=str(transfer)) for s in range(3)]
    v = one({"kind": "above", "select": {"condition": "base"}, "value": 0.5,
             "checks": [{"kind": "left_plateau", "nats": 0.1}]}, rows, tmp_path)
    assert f"context-free {free['tgt']:.3f} nats" in v.checks[0].text and round(free["tgt"], 3) != 0.814


def test_surface_baseline_within_a_margin_of_chance(tmp_path, monkeypatch):
    data = _artifact(tmp_path, "generate", "g1", files={"xnli/src.train.tsv": "x", "xnli/tgt.test.tsv": "y"})
    config = {"task": "xnli", "train": [{"lang": "src", "split": "train", "path": "xnli/src.train.tsv"}],
              "evaluate": [{"lang": "tgt", "split": "test", "path": "xnli/tgt.test.tsv"}]}
    transfer = _artifact(tmp_path, "transfer", "t1", [data], {"config.json": json.dumps(config)})
    rows = [row(0.5, "base", "tgt", s, artifact=str(transfer)) for s in range(3)]
    seen = []
    for accuracy, passed in [(0.36, True), (0.93, False)]:
        def fake(train, test, accuracy=accuracy):
            seen.append((train.name, test.name))
            return accuracy
        monkeypatch.setitem(sys.modules, "mbertlab.analysis.surface",
                            types.SimpleNamespace(surface_baseline_accuracy=fake))
        checks_module._surface_accuracy.cache_clear()
        v = one({"kind": "above", "select": {"condition": "base"}, "value": 1 / 3,
                 "checks": [{"kind": "surface", "chance": 1 / 3, "margin": 0.05}]}, rows, tmp_path)
        assert v.checks[0].passed is passed and f"surface-only accuracy {accuracy:.3f} on xnli/tgt.test.tsv" in str(
            v.checks[0])
    assert seen == [("src.train.tsv", "tgt.test.tsv")] * 2
    assert v.state == UNINFORMATIVE


def test_uninformative_is_counted_apart():
    findings = parse_findings([
        {"id": "a", "quote": "q", "section": "§1", **GREATER, "checks": [{**LEARNED, "margin": 0.05}]},
        {"id": "b", "quote": "q", "section": "§1", **GREATER},
        {"id": "c", "quote": "q", "section": "§1", "kind": "untested", "why": "no data"}], "s.yaml")
    verdicts = evaluate_findings(findings, ROWS)
    assert verdict_counts(verdicts) == {HOLDS: 1, FAILS: 0, INCONCLUSIVE: 0, UNINFORMATIVE: 1, NOT_RUN: 1}
    (table,) = scorecard_tables(verdicts)
    assert table.note.startswith("1 holds, 0 does not hold, 0 inconclusive, 1 uninformative, 1 not run")
    assert "learned failed: " in table.as_text_rows()[0][4] and table.as_text_rows()[1][4] == "—"


def test_delta_predicates_test_source_minus_target_per_model():
    base = [0.80 - 0.60, 0.82 - 0.61, 0.84 - 0.65]  # by hand: Δ per seed
    deep = [0.85 - 0.75, 0.86 - 0.74, 0.88 - 0.78]
    delta = {"source": {"test_lang": "src"}, "target": {"test_lang": "tgt"}}
    v = one({"kind": "greater", "where": {"control": "pretrained"}, "delta": delta, "a": {"condition": "base"},
             "b": {"condition": "deep"}})
    assert v.sides[0].values == pytest.approx(base) and v.sides[1].values == pytest.approx(deep)
    t = stats.ttest_ind(base, deep, equal_var=False, alternative="greater")
    assert v.p == pytest.approx(t.pvalue) and v.state == (HOLDS if t.pvalue < 0.05 else INCONCLUSIVE)
    assert v.effect == pytest.approx(np.mean(base) - np.mean(deep))
    v = one({"kind": "decreasing", "where": {"control": "pretrained"}, "delta": delta, "by": "condition",
             "levels": ["base", "deep"]})
    assert v.p == pytest.approx(t.pvalue)
    tol = 0.05
    v = one({"kind": "within", "tol": tol, "where": {"control": "pretrained"}, "delta": delta,
             "a": {"condition": "base"}, "b": {"condition": "deep"}})
    diff, se = np.mean(base) - np.mean(deep), math.sqrt(np.var(base, ddof=1) / 3 + np.var(deep, ddof=1) / 3)
    df = se ** 4 / ((np.var(base, ddof=1) / 3) ** 2 / 2 + (np.var(deep, ddof=1) / 3) ** 2 / 2)
    low = diff - stats.t.ppf(0.95, df) * se
    assert v.state == (FAILS if low > tol else INCONCLUSIVE)


def test_holm_equals_statsmodels():
    rng = np.random.default_rng(0)
    for m in (1, 2, 5, 30):
        p = list(rng.uniform(0, 0.2, m))
        assert holm(p) == pytest.approx(list(multipletests(p, method="holm")[1]))


def test_holm_over_a_studys_claims_demotes_what_the_correction_cannot_keep():
    rows = [ResultRow("accuracy", v, seed=i, extra={"cell": c}) for c, vals in
            {"a": [0.50, 0.52, 0.54], "b": [0.45, 0.50, 0.52], "c": [0.10, 0.11, 0.12]}.items()
            for i, v in enumerate(vals)]
    specs = [{"id": "ab", "kind": "greater", "a": {"cell": "a"}, "b": {"cell": "b"}, "alpha": 0.2},
             {"id": "ac", "kind": "greater", "a": {"cell": "a"}, "b": {"cell": "c"}}]
    findings = parse_findings([{"quote": "q", "section": "§1", **s} for s in specs], "s.yaml")
    raw, adjusted = evaluate_findings(findings, rows, correct=False), evaluate_findings(findings, rows)
    p = [stats.ttest_ind([0.50, 0.52, 0.54], b, equal_var=False, alternative="greater").pvalue
         for b in ([0.45, 0.50, 0.52], [0.10, 0.11, 0.12])]
    assert [v.p for v in raw] == pytest.approx(p)
    expected = multipletests(p, method="holm")[1]
    assert [v.p_adj for v in adjusted] == pytest.approx(list(expected))
    assert raw[0].state == (HOLDS if p[0] < 0.2 else INCONCLUSIVE)
    assert adjusted[0].state == (HOLDS if expected[0] < 0.2 else INCONCLUSIVE)
    assert adjusted[1].state == HOLDS


@pytest.mark.parametrize("d, alpha", [(0.3, 0.05), (1.0, 0.05), (2.5, 0.01), (-0.8, 0.05)])
def test_seeds_needed_equal_statsmodels_power_solvers(d, alpha):
    two = TTestIndPower().solve_power(effect_size=abs(d), alpha=alpha, power=0.8, alternative="larger")
    one_sample = TTestPower().solve_power(effect_size=abs(d), alpha=alpha, power=0.8, alternative="larger")
    assert seeds_needed(d, alpha) == max(2, math.ceil(two))
    assert seeds_needed(d, alpha, two_sample=False) == max(2, math.ceil(one_sample))
    assert seeds_needed(0.0, alpha) is None


def test_an_inconclusive_verdict_says_how_many_seeds_would_decide_it():
    v = one({**GREATER, "a": {"condition": "deep", "control": "random_init", "test_lang": "src"},
             "b": {"condition": "base", "control": "random_init", "test_lang": "src"}, "where": {}})
    a, b = [0.50, 0.83, 0.51], [0.50, 0.52, 0.51]
    pooled = math.sqrt((np.var(a, ddof=1) + np.var(b, ddof=1)) / 2)
    d = (np.mean(a) - np.mean(b)) / pooled
    assert v.state == INCONCLUSIVE
    assert v.needed == math.ceil(TTestIndPower().solve_power(effect_size=d, alpha=0.05, power=0.8,
                                                             alternative="larger"))
    (table,) = scorecard_tables([v])
    assert table.as_text_rows()[0][7] == str(v.needed)


def test_seeds_needed_are_those_that_decide_a_claim_after_holm():
    """Three claims: the one with the smallest p is held to α / 3 by Holm, the next to α / 2; their seeds needed
    are statsmodels' at those levels (at α they would be too few once corrected). A claim with two seeds a side
    (no p yet) is held to α / 4, the strictest level of the family it would join."""
    vals = {"a": [0.50, 0.53, 0.56], "b": [0.46, 0.52, 0.54], "c": [0.40, 0.47, 0.55], "d": [0.45, 0.50, 0.52],
            "e": [0.60, 0.64], "f": [0.50, 0.55]}
    rows = [ResultRow("accuracy", v, seed=i, extra={"cell": c}) for c, vs in vals.items() for i, v in enumerate(vs)]
    pairs = {"ab": ("a", "b"), "ac": ("a", "c"), "ad": ("a", "d"), "ef": ("e", "f")}
    findings = parse_findings([{"id": k, "quote": "q", "section": "§1", "kind": "greater", "a": {"cell": x},
                                "b": {"cell": y}} for k, (x, y) in pairs.items()], "s.yaml")
    verdicts = {v.id: v for v in evaluate_findings(findings, rows)}
    p = {k: stats.ttest_ind(vals[x], vals[y], equal_var=False, alternative="greater").pvalue
         for k, (x, y) in pairs.items() if k != "ef"}
    assert all(verdicts[k].state == INCONCLUSIVE for k in pairs)
    for rank, k in enumerate(sorted(p, key=p.get)):
        x, y = pairs[k]
        d = (np.mean(vals[x]) - np.mean(vals[y])) / math.sqrt((np.var(vals[x], ddof=1) + np.var(vals[y], ddof=1)) / 2)
        level = 0.05 / (3 - rank)
        solved = TTestIndPower().solve_power(effect_size=d, alpha=level, power=0.8, alternative="larger")
        assert verdicts[k].needed == max(2, math.ceil(solved)), (k, level)
        if rank < 2:  # at α alone, fewer
            assert seeds_needed(d, 0.05) < verdicts[k].needed
    d = (0.62 - 0.525) / math.sqrt((np.var(vals["e"], ddof=1) + np.var(vals["f"], ddof=1)) / 2)
    solved = TTestIndPower().solve_power(effect_size=d, alpha=0.05 / 4, power=0.8, alternative="larger")
    assert verdicts["ef"].p is None and verdicts["ef"].needed == max(2, math.ceil(solved))


def test_a_jobs_tags_are_never_overwritten_by_a_rows_extras():
    """wd2020 with checkpoint selection: the row records the selected step as `checkpoint`, the job is tagged
    `checkpoint: final`, and every finding selects `checkpoint: final`."""
    tags = {"checkpoint": "final", "condition": "base"}
    merged = with_tags({"checkpoint": 750, "epochs": 2}, tags)
    assert merged == {"checkpoint": "final", "condition": "base", "epochs": 2, "row checkpoint": 750}
    assert with_tags({"checkpoint": "final"}, tags) == tags
    rows = [ResultRow("f1", 0.5 + i / 100, seed=i, extra=with_tags({"checkpoint": step}, tags))
            for i, step in enumerate([750, 1000, 500])]
    v = one({"kind": "above", "where": {"checkpoint": "final"}, "select": {}, "value": 0.4}, rows)
    assert v.sides[0].n == 3  # before the fix only the run whose best step was the last one was selected


def test_greater_at_every_level_of_a_factor():
    """wd2019's 'preserved in all layers': the pretrained probe above the random-init one at every layer."""
    acc = {("pretrained", 0): [0.95, 0.96, 0.97], ("random_init", 0): [0.80, 0.81, 0.82],
           ("pretrained", 1): [0.90, 0.91, 0.95], ("random_init", 1): [0.89, 0.90, 0.91]}
    rows = [ResultRow("accuracy", v, seed=i, extra={"control": c, "layer": layer})
            for (c, layer), vals in acc.items() for i, v in enumerate(vals)]
    v = one({"kind": "greater", "by": "layer", "a": {"control": "pretrained"}, "b": {"control": "random_init"}},
            rows)
    p = [stats.ttest_ind(acc["pretrained", layer], acc["random_init", layer], equal_var=False,
                         alternative="greater").pvalue for layer in (0, 1)]
    assert len(v.sides) == 4 and "smallest: control=pretrained, layer=1" in v.test
    assert v.state == (HOLDS if max(p) < 0.05 else INCONCLUSIVE) and v.p == pytest.approx(max(p))
    assert v.effect == pytest.approx(np.mean(acc["pretrained", 1]) - np.mean(acc["random_init", 1]))
    v = one({"kind": "greater", "by": "layer", "levels": [0], "a": {"control": "pretrained"},
             "b": {"control": "random_init"}}, rows)
    assert v.state == HOLDS and v.p == pytest.approx(p[0])


def test_learned_compares_each_language_with_its_own_control():
    """A probe per language against the majority label of that language (one run, seed 0): lo's 0.56 beats
    the pooled majority (0.45) but not its own (0.60)."""
    def probe(value, lang, seed, variant):
        return ResultRow("accuracy", value, train_lang=lang, test_lang=lang, seed=seed,
                         extra={"variant": variant, "transfer": "in-language"})

    rows = [probe(v, lang, s, "distilled") for s, (hi, lo) in enumerate([(0.9, 0.55), (0.92, 0.56), (0.91, 0.57)])
            for lang, v in (("hi", hi), ("lo", lo))]
    rows += [probe(0.30, "hi", 0, "majority"), probe(0.60, "lo", 0, "majority")]
    check = {"kind": "learned", "select": {"transfer": "in-language"}, "against": [{"variant": "majority"}]}
    v = one({"kind": "above", "select": {"variant": "distilled"}, "value": 0.5, "checks": [check]}, rows)
    assert v.state == UNINFORMATIVE and "(lo→lo): 0.56 vs variant=majority 0.6 (-0.04" in v.checks[0].text


def test_learned_compares_a_language_in_two_sets_with_its_own_sets_control():
    """One language probed in two sets: each set's probe against that set's random-init control, not their mean
    (pooled, set B's 0.80 would sit at the mean control 0.80 and fail; set A's 0.95 would clear it by 0.15)."""
    def probe(value, seed, variant, group):
        # each run's selected epoch is no tag: set A's model rows chose set B's control's epoch
        epoch = {("distilled", "A"): 10, ("random init", "A"): 9}.get((variant, group), 10)
        return ResultRow("accuracy", value, train_lang="x", test_lang="x", seed=seed,
                         extra={"variant": variant, "set": group, "transfer": "in-language", "epoch": epoch})

    rows = [probe(v, s, "distilled", g) for s in range(3) for g, v in (("A", 0.95), ("B", 0.80))]
    rows += [probe(c, s, "random init", g) for s in range(3) for g, c in (("A", 0.90), ("B", 0.70))]
    rows += [ResultRow("accuracy", 0.2, train_lang="x", test_lang="x", seed=0,
                       extra={"variant": "majority", "set": g, "transfer": "in-language", "epoch": 0}) for g in "AB"]
    check = {"kind": "learned", "select": {"transfer": "in-language"}, "margin": 0.02,
             "against": [{"variant": "majority"}, {"variant": "random init"}]}
    v = one({"kind": "above", "select": {"variant": "distilled"}, "value": 0.5, "checks": [check]}, rows)
    assert v.checks[0].passed, v.checks[0].text
    assert "0.95 vs variant=random init 0.9 (+0.05" in v.checks[0].text  # the lowest: set A against its own
    swapped = [probe(0.80 if r.extra["set"] == "A" else 0.95, r.seed, "distilled", r.extra["set"])
               if r.extra["variant"] == "distilled" else r for r in rows]
    v = one({"kind": "above", "select": {"variant": "distilled"}, "value": 0.5, "checks": [check]}, swapped)
    assert v.state == UNINFORMATIVE and "0.8 vs variant=random init 0.9 (-0.1" in v.checks[0].text


def test_learned_tests_the_seeds_together_when_rows_carry_a_seed_tag():
    """A study's rows carry their stage's tags, the seed among them (`with_tags`): a model of 3 seeds against a
    random-init control of 3 seeds is one test of 3 against 3 (Welch, computed here with scipy), not three
    groups of one, which no test can decide (lms2023's lab run was left 'needs >= 3 seeds a side (n = 1)')."""
    def probe(value, seed, variant):
        return ResultRow("accuracy", value, train_lang="x", test_lang="x", seed=seed,
                         extra={"variant": variant, "transfer": "in-language", "seed": str(seed)})

    model, control = [0.95, 0.96, 0.94], [0.80, 0.84, 0.82]
    rows = [probe(v, s, "distilled") for s, v in enumerate(model)]
    rows += [probe(v, s, "random init") for s, v in enumerate(control)]
    check = {"kind": "learned", "select": {"transfer": "in-language"}, "margin": 0.02,
             "against": [{"variant": "random init"}]}
    v = one({"kind": "above", "select": {"variant": "distilled"}, "value": 0.5, "checks": [check]}, rows)
    p = stats.ttest_ind(np.array(model) - 0.02, control, equal_var=False, alternative="greater").pvalue
    assert v.checks[0].passed and f"p={p:.3g}" in v.checks[0].text, v.checks[0].text
    close = [probe(v, s, "distilled") for s, v in enumerate([0.83, 0.85, 0.81])] + rows[3:]
    v = one({"kind": "above", "select": {"variant": "distilled"}, "value": 0.5, "checks": [check]}, close)
    assert v.checks[0].passed is False and "needs >= 3" not in v.checks[0].text, v.checks[0].text


def test_learned_skips_a_side_that_is_the_control_itself():
    """K et al.'s "above random": the model's target against its random-init control's. The random-init side is
    the baseline, not a model that had to learn its task: only the pretrained side is checked (before, the
    control was held to beat itself and the majority label, and such a claim could never be judged)."""
    above_random = {"kind": "greater", "where": {"test_lang": "tgt", "condition": "base"},
                    "a": {"control": "pretrained"}, "b": {"control": "random_init"}}
    v = one({**above_random, "checks": [{**LEARNED, "margin": 0.02}]})
    assert v.checks[0].passed, v.checks[0].text
    assert "control=pretrained" in v.checks[0].text and v.state == HOLDS  # 0.62 ± 0.03 vs 0.41 ± 0.01
    # the pretrained side still fails where it did not learn: its src at the random-init control's
    def unlearn(r):
        base_src = r.extra["control"] == "pretrained" and r.test_lang == "src" and r.extra["condition"] == "base"
        return row(0.51, "base", "src", r.seed) if base_src else r

    unlearned = [unlearn(r) for r in ROWS]
    v = one({**above_random, "checks": [{**LEARNED, "margin": 0.02}]}, unlearned)
    assert v.state == UNINFORMATIVE and "control=pretrained (src): 0.51 vs control=random_init 0.51" in v.checks[0].text
    # a finding whose every side is a control has no model to check
    v = one({"kind": "above", "select": {"control": "random_init", "condition": "base", "test_lang": "tgt"},
             "value": 0.3, "checks": [LEARNED]})
    assert v.checks[0].passed is None and "every side is a control" in v.checks[0].text


def _ols_rows(wiki_slope: float, seed: int = 0) -> list[ResultRow]:
    """coef rows as the regress stage writes them (each with its fit's two-sided p), from statsmodels' OLS on
    15 points: F1 on WikiSize alone (univariate), then on WikiSize and training size (multivariate)."""
    import statsmodels.api as sm

    rng = np.random.default_rng(seed)
    size = rng.uniform(8, 14, 15)
    wiki = size + rng.normal(0, 0.7, 15)
    f1 = 0.05 * size + wiki_slope * wiki + rng.normal(0, 0.05, 15)
    out = []
    for mode, x in (("univariate", wiki[:, None]), ("multivariate", np.column_stack([wiki, size]))):
        fit = sm.OLS(f1, sm.add_constant(x)).fit()
        out.append(ResultRow("coef:wikisize", float(fit.params[1]), task="ner", mode=mode,
                             extra={"p_value": float(fit.pvalues[1]), "t": float(fit.tvalues[1]),
                                    "df": float(fit.df_resid)}))
    return out


SIGN_CHANGE = {"kind": "below", "test": "fit", "value": 0.0, "where": {"task": "ner", "mode": "multivariate"},
               "select": {"metric": "coef:wikisize"}, "before": {"mode": "univariate"}}


def test_a_slopes_sign_is_decided_by_its_fits_p_value_and_joins_holm():
    """wd2020's 'the slope of WikiSize changes sign': the multivariate slope below 0 and the univariate one above
    it, each by its fit's one-sided p (scipy's t on statsmodels' t-value and residual df), the larger deciding."""
    rows = _ols_rows(-0.04)
    uni, multi = rows
    assert uni.value > 0 > multi.value
    v = one(SIGN_CHANGE, rows)
    p = max(stats.t.sf(uni.extra["t"], uni.extra["df"]), stats.t.cdf(multi.extra["t"], multi.extra["df"]))
    assert v.state == (HOLDS if p < 0.05 else INCONCLUSIVE) and v.p == pytest.approx(p) and v.p_adj is not None
    # 'direct' read the sign alone: a slope of the right sign with p ≈ 0.5 held
    flat = [uni, ResultRow("coef:wikisize", -0.001, task="ner", mode="multivariate", extra={"p_value": 0.9})]
    assert one({**SIGN_CHANGE, "test": "direct", "before": None}, flat).state == HOLDS
    v = one(SIGN_CHANGE, flat)
    assert v.state == INCONCLUSIVE and v.p == pytest.approx(0.45)  # the nearer one-sided p: 0.9 / 2 the other way


def test_a_sign_change_fails_when_the_slope_before_already_had_the_new_sign():
    """The lab's univariate WikiSize slope was already negative: no change of sign, whatever the multivariate."""
    before = ResultRow("coef:wikisize", -0.03, task="ner", mode="univariate", extra={"p_value": 0.002})
    after = ResultRow("coef:wikisize", -0.02, task="ner", mode="multivariate", extra={"p_value": 0.01})
    v = one(SIGN_CHANGE, [before, after])
    assert v.state == FAILS and v.p == pytest.approx(0.001)
    assert one({**SIGN_CHANGE, "before": None}, [before, after]).state == HOLDS  # the sign alone
    assert one(SIGN_CHANGE, [after]).state == NOT_RUN
    with pytest.raises(Exception, match="value must be 0"):
        one({**SIGN_CHANGE, "value": 0.1}, [after])


def test_within_at_every_level_tests_each_level_apart():
    """k2020's Table 7: six deep narrow architectures, each 'comparable' to the base-shaped one. Pooled as if
    they were seeds, five at the base and one 8 points below sit within 3 points on average; tested apart, the
    one that is not comparable fails (TOST: its interval wholly outside ±3 points)."""
    gaps = {"d6": 0.0, "d8": 0.005, "d12": -0.005, "d6h3": 0.0, "d8h3": 0.005, "far": -0.08}
    rows = [row(0.60 + g + d, arch, "tgt", s) for arch, g in gaps.items() for s, d in enumerate((-0.01, 0, 0.01))]
    rows += [row(0.60 + d, "base", "tgt", s) for s, d in enumerate((-0.01, 0, 0.01))]
    pooled = {"kind": "within", "tol": 0.03, "a": {"condition": list(gaps)}, "b": {"condition": "base"}}
    assert one(pooled, rows).state == HOLDS
    v = one({**pooled, "by": "condition"}, rows)
    assert v.state == FAILS and "largest: condition=far" in v.test and v.effect == pytest.approx(-0.08)
    se = math.sqrt(2 * np.var([-0.01, 0, 0.01], ddof=1) / 3)
    half = stats.t.ppf(0.95, 4) * se  # far's 90% interval, by hand: wholly below -0.03
    assert -0.08 + half < -0.03 and f"[{-0.08 - half:+.4g}, {-0.08 + half:+.4g}] vs ±0.03" in v.test
    assert one({**pooled, "by": "condition", "levels": ["d6", "d8"]}, rows).state == HOLDS


def test_rises_checks_that_a_manipulation_took_effect():
    """lms2023's Appendix C: teachers on 10, 50 and 100 share points. Their MRR flat from 50 to 100 (the lab's
    'flat from 500 to 5,000 sentences') makes a claim about corpus size uninformative; rising, it is judged."""
    def teacher(size, values):
        return [ResultRow("mlm_mrr", v, test_lang="a100", seed=s, extra={"variant": f"HL {size}", "appendix": "C"})
                for s, v in enumerate(values)]

    def rows(top):
        return (teacher(10, [0.30, 0.31, 0.32]) + teacher(50, [0.40, 0.41, 0.42]) + teacher(100, top)
                + [ResultRow("mlm_mrr", 0.5 + s / 100, test_lang="a100", seed=s,
                             extra={"variant": "student", "appendix": "C"}) for s in range(3)])
    check = {"kind": "rises", "select": {"variant": None}, "by": "variant", "levels": ["HL 10", "HL 50", "HL 100"],
             "margin": 0.01}
    claim = {"kind": "above", "where": {"appendix": "C"}, "select": {"variant": "student"}, "value": 0.3,
             "checks": [check]}
    flat = [0.40, 0.42, 0.41]
    v = one(claim, rows(flat))
    p = stats.ttest_ind(np.array(flat) - 0.01, [0.40, 0.41, 0.42], equal_var=False, alternative="greater").pvalue
    assert v.state == UNINFORMATIVE and "variant HL 50 → HL 100: +0" in v.checks[0].text
    assert f"p={p:.3g}" in v.checks[0].text
    v = one(claim, rows([0.50, 0.52, 0.51]))
    assert v.checks[0].passed and v.state == HOLDS and "weakest step: " in v.checks[0].text
    one_seed = [r for r in rows([0.50, 0.52, 0.51]) if r.seed == 0]
    v = one(claim, one_seed)
    assert v.checks[0].passed and "by the means" in v.checks[0].text


def test_learned_skips_the_baselines_it_names():
    """k2020's XNLI `learned` is against the majority label only: the random-init side of an "above random"
    claim is its baseline, named in `baselines`, and not held to the majority label (its source at chance here)."""
    rows = [r for r in ROWS if r.extra["control"] != "random_init"] + grid("base", [0.34, 0.35, 0.33],
                                                                           [0.33, 0.34, 0.32], "random_init")
    learned = {"kind": "learned", "select": {"test_lang": "src"}, "against": [{"control": "majority", "seed": None}]}
    above_random = {"kind": "greater", "where": {"test_lang": "tgt", "condition": "base"},
                    "a": {"control": "pretrained"}, "b": {"control": "random_init"}}
    v = one({**above_random, "checks": [learned]}, rows)
    assert v.state == UNINFORMATIVE and "control=random_init" in v.checks[0].text
    v = one({**above_random, "checks": [{**learned, "baselines": [{"control": "random_init"}]}]}, rows)
    assert v.checks[0].passed and v.state == HOLDS and "control=random_init" not in v.checks[0].text


def test_unit_seed_tests_the_seeds_means_not_the_rows_of_one_seed_as_samples():
    """lms2023's probe claims read rows per language and pair of one seed's models: as rows they were 60
    samples a side (pseudo-replication, a Welch df in the hundreds). With `unit: seed` each side is its seeds'
    means, and the test is scipy's Welch on those 3 against 3: a 5-point gap between two models whose seeds
    spread by 10 points holds over the rows and is inconclusive over the seeds."""
    seeds_a, seeds_b = [0.60, 0.70, 0.80], [0.55, 0.65, 0.75]
    wobble = [0.01 * ((i * 7) % 5 - 2) for i in range(20)]  # the languages of one seed vary a little
    rows = [ResultRow("accuracy", m + w, test_lang=f"l{i}", seed=s, extra={"variant": variant, "seed": str(s)})
            for variant, means in (("student", seeds_a), ("teacher", seeds_b))
            for s, m in enumerate(means) for i, w in enumerate(wobble)]
    claim = {"kind": "greater", "a": {"variant": "student"}, "b": {"variant": "teacher"}}
    assert one(claim, rows).state == HOLDS and one(claim, rows).sides[0].n == 60
    v = one({**claim, "unit": "seed"}, rows)
    assert v.state == INCONCLUSIVE and [s.n for s in v.sides] == [3, 3]
    means = [[sum(w + m for w in wobble) / 20 for m in ms] for ms in (seeds_a, seeds_b)]
    assert v.sides[0].values == pytest.approx(means[0]) and v.effect == pytest.approx(0.05)
    assert v.p == pytest.approx(stats.ttest_ind(*means, equal_var=False, alternative="greater").pvalue)
    apart = [r if r.extra["variant"] == "teacher" else
             ResultRow("accuracy", r.value + 0.3, test_lang=r.test_lang, seed=r.seed, extra=r.extra) for r in rows]
    assert one({**claim, "unit": "seed"}, apart).state == HOLDS  # a gap beyond the seeds' spread still holds


def test_a_majority_label_repeated_by_conditions_is_one_value():
    """k2020's majority label is one run, scored on the source test file that two conditions share: against its
    two equal rows (`condition: null` takes every condition's) the check is the one-sample test it is against one
    row, not a Welch test of 3 seeds against "2 seeds" that reads "needs >= 3 seeds a side"."""
    model = [0.40, 0.41, 0.42]
    rows = [row(v, "base", "src", s) for s, v in enumerate(model)]
    majority = [row(0.34, cond, "src", 0, "majority") for cond in ("base", "deep")]
    check = {"kind": "learned", "select": {}, "against": [{"control": "majority", "condition": None}],
             "margin": 0.02}
    claim = {"kind": "above", "select": {"condition": "base", "control": "pretrained"}, "value": 0.3}
    once, twice = (one({**claim, "checks": [check]}, rows + m) for m in (majority[:1], majority))
    p = stats.ttest_1samp(model, 0.34 + 0.02, alternative="greater").pvalue
    assert twice.checks[0].passed and f"p={p:.3g}" in twice.checks[0].text, twice.checks[0].text
    assert twice.checks[0].text == once.checks[0].text
