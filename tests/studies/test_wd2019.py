"""The wd2019 study (Wu & Dredze 2019): its test scale runs end to end and renders the paper's tables;
overlap and correlations agree with independent computations; the freeze levels mean what the paper's do;
an existing HF encoder directory replaces pretraining."""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
import pytest

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.kinds import job_hash
from mbertlab.studies.published import load_published
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import run_study, study_jobs, study_status
from mbertlab.studies.spec import load_spec
from tests.studies.checked import plateau_gaps

LANGS = ("src", "s75", "s25", "fake", "far")
TASKS = ("xnli", "mldoc", "ner", "upos", "parse")


@pytest.fixture(scope="module")
def run(run_test_scale):
    return run_test_scale("wd2019")


def test_test_scale_runs_every_part_of_the_grid(run):
    spec, ctx = run
    assert {s.state for s in study_status(spec, ctx.store)} == {"done"}
    rows = ctx.results.query(study="wd2019")
    main = {"xnli": "accuracy", "mldoc": "accuracy", "ner": "f1_repaired", "upos": "accuracy", "parse": "las_nopunct"}
    scored = {(r.task, r.mode, r.test_lang) for r in rows if r.split == "test" and r.metric == main.get(r.task)}
    for task in TASKS:
        for mode in ("finetune", "majority"):
            assert {(task, mode, l) for l in LANGS + ("avg",)} <= scored, (task, mode)
    for task in ("upos", "parse"):  # the strategy tasks at test scale
        assert {(task, m, "avg") for m in ("freeze", "feature")} <= scored
    transfers = [j for j in study_jobs(spec) if j.kind == "transfer"]
    freeze = sorted({j.config.freeze_layers for j in transfers if j.config.mode == "freeze"})
    assert freeze == [1, 2]  # layers 0 and 0-1 of a 2-layer encoder
    gold = [j for j in transfers if j.config.gold_upos]
    assert len(gold) == 1 and gold[0].tag("upos_input") == "gold"
    langid = [r for r in rows if r.task == "langid"]
    expected = [(mode, layer) for mode in ("probe", "random_init") for layer in range(3)]
    assert sorted((r.mode, r.extra["layer"]) for r in langid) == expected
    # every zero-shot model is selected on the source dev set (no target data); an in-language one on its own
    for job in transfers:
        if job.config.mode != "majority":
            train = job.config.train[0].lang
            assert train == "src" or job.tag("strategy") == "in-language"
            assert [(f.lang, f.split) for f in job.config.evaluate if f.split == "dev"] == [(train, "dev")]


def test_overlap_matches_an_independent_count(run):
    """p_type / p_token per task (§5.4: the source's training set vs each target's test set), recomputed from
    the raw files (CoNLL-U FORM column, XNLI's two sentence columns) and the tokenizer's own token ids (not its
    piece strings), with the test scale's caps of 60 training and 20 test examples."""
    import csv

    from tokenizers import Tokenizer

    spec, ctx = run
    rows = [r for r in ctx.results.query(study="wd2019") if r.mode == "overlap"]
    assert {r.task for r in rows} == set(TASKS) and {r.split for r in rows} == {"test"}
    pretrain = next((ctx.store.workdir / "pretrain").glob("[0-9a-f]*"))
    tok = Tokenizer.from_file(str(pretrain / "model" / "tokenizer.json"))
    data = next((ctx.store.workdir / "generate").glob("[0-9a-f]*"))
    specials = {0, 1, 2, 3, 4}  # [PAD] [UNK] [CLS] [SEP] [MASK]

    def conllu(lang, split, cap):
        sentences, words = [], []
        for line in (data / lang / "ud" / f"{split}.conllu").read_text().splitlines():
            cols = line.split("\t")
            if not line.strip() and words:
                sentences.append(" ".join(words))
                words = []
            elif len(cols) == 10 and cols[0].isdigit():
                words.append(cols[1])
        return (sentences + ([" ".join(words)] if words else []))[:cap]

    def xnli(lang, split, cap):
        with (data / "xnli" / f"{lang}.{split}.tsv").open() as f:
            pairs = list(csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[:cap]
        return [p[k] for p in pairs for k in ("sentence1", "sentence2")]

    def ids(texts):
        return [i for t in texts for i in tok.encode(t, add_special_tokens=False).ids if i not in specials]

    for task, read in (("upos", conllu), ("parse", conllu), ("xnli", xnli)):
        source = set(ids(read("src", "train", 60)))
        for lang in LANGS[1:]:
            target = ids(read(lang, "test", 20))
            p_type = len(set(target) & source) / len(set(target))
            p_token = sum(i in source for i in target) / len(target)
            got = {r.metric: r.value for r in rows if r.task == task and r.test_lang == lang}
            assert got == pytest.approx({"p_type": p_type, "p_token": p_token}), (task, lang)
    values = {(r.task, r.test_lang): r.value for r in rows if r.metric == "p_type"}
    assert all(values[(t, l)] == 0.0 for t in TASKS for l in ("fake", "far"))  # a disjoint script shares none
    assert all(values[(t, "s75")] > values[(t, "s25")] > 0.0 for t in TASKS)


def test_the_distant_target_alone_differs_in_word_order(run):
    """Table 6's order needs a structurally distant target: `far` (verb-final, postpositions, adjectives after
    the noun) is the one whose objects, case markers and adjectives sit on the other side of their heads,
    counted here by hand from the generated treebanks; every other target keeps the source's order."""
    spec, ctx = run
    rows = {r.test_lang: r.value for r in ctx.results.query(study="wd2019", mode="word_order",
                                                           metric="word_order_distance")}
    assert rows["far"] > 0.1 and all(rows[lang] == 0.0 for lang in LANGS[1:-1])
    data = next((ctx.store.workdir / "generate").glob("[0-9a-f]*"))

    def share_before(lang, split, deprel):
        before = total = 0
        for line in (data / lang / "ud" / f"{split}.conllu").read_text().splitlines():
            cols = line.split("\t")
            if len(cols) == 10 and cols[0].isdigit() and cols[7] == deprel:
                before += int(cols[0]) < int(cols[6])
                total += 1
        return before / total

    for deprel, src, far in (("obj", 0.0, 1.0), ("case", 1.0, 0.0), ("amod", 1.0, 0.0)):
        assert (share_before("src", "train", deprel), share_before("far", "test", deprel)) == (src, far), deprel


def test_correlations_match_scipy_on_the_rows(run):
    """Pearson r per task recomputed with scipy from results.db rows (overlap rows x fine-tune-all scores)."""
    from scipy import stats

    spec, ctx = run
    rows = ctx.results.query(study="wd2019")
    overlap = {(r.task, r.test_lang): r.value for r in rows if r.mode == "overlap" and r.metric == "p_token"}
    main = {"ner": "f1_repaired", "upos": "accuracy", "parse": "las_nopunct"}  # the paper repairs NER (§5.1)
    finetune = [j for j in study_jobs(spec) if j.kind == "transfer" and j.tag("strategy") == "fine-tune all"
                and not j.config.gold_upos]
    assert len(finetune) == 5
    artifacts = {j.config.task: str(ctx.store.workdir / "transfer" / job_hash(j, ctx.store)) for j in finetune}
    assert all(json.loads(Path(a, "config.json").read_text())["task"] == t for t, a in artifacts.items())
    correl = {(r.task, r.metric): r for r in rows if r.mode == "correlate" and r.extra["overlap"] == "p_token"}
    checked = 0
    for task, metric in main.items():
        scores = {r.test_lang: r.value for r in rows if r.artifact == artifacts[task] and r.metric == metric
                  and r.split == "test"}
        xs = [overlap[(task, l)] for l in LANGS[1:]]
        ys = [scores[l] for l in LANGS[1:]]
        if np.ptp(ys) == 0:
            assert (task, "pearson_r") not in correl  # undefined r: no row, never a made-up value
            continue
        assert correl[(task, "pearson_r")].value == pytest.approx(stats.pearsonr(xs, ys).statistic)
        assert correl[(task, "pearson_r")].extra["n"] == len(LANGS) - 1
        checked += 1
    assert checked >= 1 and ("pooled", "pearson_r") in correl


def test_report_has_the_papers_tables_and_scorecard(run):
    spec, ctx = run
    md, html = write_report(spec, ctx)
    text = md.read_text()
    for header in ("| task | metric | model | src (source) | s75 | s25 | fake | far | avg |",
                   "| strategy | POS src | Parsing src | POS avg | Parsing avg |",
                   "| model | src (source) | s75 | s25 | fake | far | avg |",
                   "| layer | pretrained encoder | random init | paper (mBERT, Fig. 2) |",
                   "| task | target | p_type | p_token | zero-shot |",
                   "| task | r (p_type) | null 95th pct (p_type) | r (p_token) | null 95th pct (p_token) | n |"):
        assert header in text, header
    for row in ("| fine-tune all |", "| freeze 0 |", "| freeze 0-1 |", "| feature-based |", "| 0 (embeddings) |",
                "| encoder + gold UPOS |", "| Parsing | LAS (no punctuation) | encoder, fine-tune all |"):
        assert row in text, row
    # the paper's rows sit under ours with published.yaml's numbers (its English under src, its Average under avg)
    published = load_published("wd2019")
    xnli = published.number("Table 3", "Zero-shot cross-lingual transfer: mBERT", "en").value
    xnli_avg = published.number("Table 3", "Zero-shot cross-lingual transfer: mBERT", "Average").value
    dashes = "— | " * (len(LANGS) - 1)
    assert f"| XNLI (paper) | accuracy | mBERT, fine-tune all (Table 3) | {xnli:g} | {dashes}{xnli_avg:g} |" in text
    las = {m: published.number("Table 6", "AVER", f"{m} LAS").value for m in ("mBERT(Z)", "mBERT(Z+POS)")}
    assert f"| encoder + gold UPOS (paper, mBERT(Z+POS)) | 82.2 | {dashes}{las['mBERT(Z+POS)']:g} |" in text
    assert f"| Δ (paper) | +0.9 | {dashes}{las['mBERT(Z+POS)'] - las['mBERT(Z)']:+.1f} |" in text
    assert "| fine-tune all (paper) | 97.1 | 81.3 | 84.3 | 54.2 |" in text  # Tables 5 and 6
    # in-language rows (Tables 2, 4, 5, 6's mBERT(S)): each target's cell is its own in-language run's score, the
    # source's the zero-shot run's, avg the mean over the targets; the paper's in-language row stands under ours
    rows = ctx.results.query(study="wd2019")
    jobs = [j for j in study_jobs(spec) if j.kind == "transfer" and j.tag("strategy") == "in-language"]
    assert {(j.config.task, j.config.train[0].lang) for j in jobs} == {
        (t, l) for t in ("mldoc", "ner", "upos", "parse") for l in LANGS[1:]}
    for job in jobs:
        lang = job.config.train[0].lang
        assert [(f.lang, f.split) for f in job.config.evaluate] == [(lang, "dev"), (lang, "test")]
    where = {j.config.train[0].lang: str(ctx.store.workdir / "transfer" / job_hash(j, ctx.store))
             for j in jobs if j.config.task == "upos"}
    own = {l: next(r.value for r in rows if r.artifact == a and r.metric == "accuracy" and r.split == "test")
           for l, a in where.items()}
    line = next(l for l in text.splitlines() if l.startswith("| POS | accuracy | encoder, in-language |"))
    assert line.split(" | ")[4:] == [f"{100 * own[l]:.1f}" for l in LANGS[1:]] + \
        [f"{100 * np.mean(list(own.values())):.1f} |"]
    paper = [published.number("Table 4", "In language supervised learning: mBERT", c).value
             for c in ("en", "Average (-en,-zh)")]
    assert f"| NER (paper) | entity F1 | mBERT, in-language (Table 4) | {paper[0]:g} | {dashes}{paper[1]:g} |" \
        in text
    page = html.read_text()
    assert page.count("<table>") == 8 and page.count("data:image/png;base64,") == 2  # Fig. 2 and Fig. 3
    assert "Dependency parsing by word-order distance from src" in text  # Table 6's order


def _card(text: str) -> dict[str, list[str]]:
    card = text.split("### Reproduction scorecard")[1].split("\n\n")[1]
    return {line.split(" | ")[0].strip("| "): line.split(" | ") for line in card.splitlines()[2:]}


def _pick(rows, selection: dict) -> list[float]:
    """The rows matching every filter: a ResultRow column, else a tag or extra key; a list means any of."""
    columns = {f.name for f in fields(ResultRow)}
    out = []
    for r in rows:
        got = {k: getattr(r, k) if k in columns else r.extra.get(k) for k in selection}
        if all(str(got[k]) in map(str, v if isinstance(v, list) else [v]) for k, v in selection.items()):
            out.append(r.value)
    return out


def _side(rows, selection: dict, unit: str | None) -> list[float]:
    """A side's samples: its rows' values, or with `unit: seed` each seed's mean of them (one sample a seed)."""
    if unit != "seed":
        return _pick(rows, selection)
    by_seed: dict = {}
    for r in rows:
        if _pick([r], selection):
            by_seed.setdefault(r.seed, []).append(r.value)
    return [sum(v) / len(v) for _, v in sorted(by_seed.items())]


def _expected(finding: dict, rows) -> str:
    """A finding's verdict recomputed with scipy (Welch one-sided t-tests; TOST as two of them; one-sample t-tests
    per level for `above`) from the rows, independently of studies/scorecard.py."""
    from scipy import stats

    if finding["kind"] == "untested":
        return "not run"
    where = finding.get("where", {})
    if finding["kind"] == "above":
        by = finding["by"]
        chosen = [r for r in rows if by in r.extra and _pick([r], {**where, **finding.get("select", {})})]
        levels = sorted({r.extra[by] for r in chosen})
        sides = [_pick(rows, {**where, by: level}) for level in levels]
        if not sides:
            return "not run"
        if min(map(len, sides)) < 3:
            return "inconclusive"
        up = [stats.ttest_1samp(v, finding["value"], alternative="greater").pvalue < 0.05 for v in sides]
        down = [stats.ttest_1samp(v, finding["value"], alternative="less").pvalue < 0.05 for v in sides]
        return "holds" if all(up) else "does not hold" if any(down) else "inconclusive"
    if finding["kind"] == "greater" and "by" in finding:  # a above b at every level
        by = finding["by"]
        levels = sorted({r.extra[by] for r in rows if by in r.extra and _pick([r], {**where, **finding["a"]})})
        flat = {k: v for k, v in finding.items() if k != "by"}
        parts = [_expected({**flat, "where": {**where, by: level}}, rows) for level in levels]
        return "not run" if not parts or "not run" in parts else "holds" if set(parts) == {"holds"} else \
            "does not hold" if "does not hold" in parts else "inconclusive"
    a, b = (_side(rows, {**where, **finding[side]}, finding.get("unit")) for side in ("a", "b"))
    if not a or not b:
        return "not run"
    if min(len(a), len(b)) < 3:
        return "inconclusive"
    if finding["kind"] == "within":
        from statsmodels.stats.weightstats import ttost_ind

        tol = finding["tol"]
        if ttost_ind(a, b, -tol, tol, usevar="unequal")[0] < 0.05:
            return "holds"
        above = stats.ttest_ind([x - tol for x in a], b, equal_var=False, alternative="greater").pvalue < 0.05
        below = stats.ttest_ind([x + tol for x in a], b, equal_var=False, alternative="less").pvalue < 0.05
        return "does not hold" if above or below else "inconclusive"
    if stats.ttest_ind(a, b, equal_var=False, alternative="greater").pvalue < 0.05:
        return "holds"
    return "does not hold" if stats.ttest_ind(a, b, equal_var=False, alternative="less").pvalue < 0.05 \
        else "inconclusive"


def _three_seeds(rows) -> list:
    """The test run's rows as if three seeds had run: each value plus a fixed pseudo-random shift per seed."""
    import random

    out = []
    for seed in (0, 1, 2):
        for r in rows:
            key = f"{r.artifact}|{r.metric}|{r.test_lang}|{r.extra.get('layer')}|{seed}"
            shift = random.Random(key).uniform(-0.02, 0.02)
            out.append(replace(r, seed=seed, value=r.value + shift, extra={**r.extra, "seed": str(seed)}))
    return out


def test_scorecard_verdicts_follow_from_the_rows(run):
    """Every verdict the report prints, and every verdict over the same rows at three seeds, equals one
    recomputed from the rows with scipy and statsmodels; the findings are the paper's quoted claims."""
    from mbertlab.studies.report import study_rows
    from mbertlab.studies.runner import spec_section
    from mbertlab.studies.scorecard import evaluate_findings, parse_findings

    spec, ctx = run
    findings = spec_section(spec, "findings")
    assert len(findings) == 31 and not any(f.get("own") for f in findings)
    text = write_report(spec, ctx)[0].read_text()
    card, rows = _card(text), study_rows(spec, ctx)
    assert set(card) == {f["id"] for f in findings}
    # 10 pretraining steps leave no encoder off the MLM plateau (by scipy): every claim with rows is uninformative
    assert max(plateau_gaps(ctx.store.workdir).values()) < 0.1
    for f in findings:  # one seed: a difference is never decided; absent rows are 'not run'
        expected = _expected(f, rows)
        assert card[f["id"]][2] == ("uninformative" if expected != "not run" and f.get("checks") else expected), f["id"]
    assert {card[i][2] for i in ("competitive-with-best-published", "finetune-beats-feature-xnli",
                                 "freeze-helps-pos", "overlap-mldoc")} == {"not run"}
    assert card["gold-upos-helps-las"][2] == "uninformative" and "left_plateau failed" in card["gold-upos-helps-las"][4]
    counts = Counter(card[f["id"]][2] for f in findings)
    assert (f"{counts['holds']} holds, {counts['does not hold']} does not hold, {counts['inconclusive']} inconclusive, "
            f"{counts['uninformative']} uninformative, {counts['not run']} not run (of the paper's claims)") in text
    # the predicates themselves (checks left out, no Holm correction) over the rows as if three seeds had run
    three = _three_seeds(rows)
    unchecked = [{k: v for k, v in f.items() if k != "checks"} for f in findings]
    verdicts = {v.id: v.state for v in evaluate_findings(parse_findings(unchecked, "wd2019"), three, correct=False)}
    expected = {f["id"]: _expected(f, three) for f in findings}
    assert verdicts == expected
    assert {"holds", "does not hold", "not run"} <= set(expected.values())  # both directions are exercised


def test_hf_encoder_directory_replaces_pretraining(run, tmp_path):
    """The test run's pretrained model as an 'existing HF encoder': no pretraining, same overlap numbers."""
    _, first = run
    model = next((first.store.workdir / "pretrain").glob("[0-9a-f]*")) / "model"
    encoder = tmp_path / "encoder"
    encoder.mkdir()
    for f in model.iterdir():
        (encoder / f.name).write_bytes(f.read_bytes())
    sets = [f"encoder={encoder}", "pretrain={}", "tokenizer={}", "tasks=[upos]", "strategies=[finetune]",
            "gold_upos=false", "langid=null"]
    spec = load_spec("wd2019", "test", sets)
    jobs = study_jobs(spec)
    assert {j.kind for j in jobs} == {"generate", "hf_encoder", "transfer", "overlap", "correlate"}
    ctx = RunContext(ArtifactStore(tmp_path / "work"), ResultsDB(tmp_path / "results.db"), "wd2019")
    run_study(spec, ctx, jobs=1)
    hf = next((tmp_path / "work" / "hf_encoder").glob("[0-9a-f]*"))
    assert (hf / "model").resolve() == encoder.resolve()
    ours = {(r.test_lang, r.metric): r.value for r in ctx.results.query() if r.mode == "overlap"}
    theirs = {(r.test_lang, r.metric): r.value for r in first.results.query()
              if r.mode == "overlap" and r.task == "upos"}
    assert ours == theirs and len(ours) == 2 * (len(LANGS) - 1)
    assert {r.test_lang for r in ctx.results.query() if r.task == "upos" and r.split == "test"} == set(LANGS) | {"avg"}
    # a changed encoder directory is a different artifact
    before = next(j for j in jobs if j.kind == "hf_encoder")
    (encoder / "config.json").write_text((encoder / "config.json").read_text() + "\n")
    after = next(j for j in study_jobs(load_spec("wd2019", "test", sets)) if j.kind == "hf_encoder")
    assert before.config.fingerprint != after.config.fingerprint


def test_freeze_levels_follow_depth_and_freeze_the_papers_layers():
    """k in {0, L/4, L/2, 3L/4}; 'freeze 0-k' freezes the embeddings and transformer layers 1..k only."""
    from transformers import BertConfig, BertModel

    from mbertlab.papers.wd2019.design import freeze_levels
    from mbertlab.transfer.encoder import Features

    paper = load_spec("wd2019", "paper")
    assert freeze_levels(paper.settings, 12) == [0, 3, 6, 9]
    assert freeze_levels(load_spec("wd2019", "lab", ["freeze=null"]).settings, 4) == [0, 1, 2, 3]
    assert freeze_levels(load_spec("wd2019", "gpu").settings, 12) == [0, 3, 6, 9]  # the lab's cut left at lab
    lab = [j for j in study_jobs(load_spec("wd2019", "lab")) if j.kind == "transfer" and j.tag("freeze")]
    assert {(j.tag("strategy"), j.tag("paper_n")) for j in lab} == {("freeze 0-1", "3"), ("freeze 0-2", "6")}
    job = next(j for j in study_jobs(paper) if j.kind == "transfer" and j.tag("strategy") == "freeze 0-3")
    encoder = BertModel(BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=12, num_attention_heads=1,
                                   intermediate_size=8), add_pooling_layer=False)
    Features(encoder, "freeze", freeze_layers=job.config.freeze_layers)
    trainable = [any(p.requires_grad for p in layer.parameters()) for layer in encoder.encoder.layer]
    assert not any(p.requires_grad for p in encoder.embeddings.parameters())
    assert trainable == [False] * 3 + [True] * 9


def test_spec_errors_name_the_key():
    with pytest.raises(ConfigError, match="unknown language"):
        study_jobs(load_spec("wd2019", "test", ["targets=[nope]"]))
    with pytest.raises(ConfigError, match="freeze"):
        study_jobs(load_spec("wd2019", "test", ["freeze=[0, 2]"]))
    with pytest.raises(ConfigError, match="encoder"):
        study_jobs(load_spec("wd2019", "test", ["encoder=/nonexistent/mbert", "pretrain={}", "tokenizer={}"]))
    with pytest.raises(ConfigError, match="pretrain"):
        load_spec("wd2019", "test", ["encoder=/tmp"])


def test_permutation_null_separates_a_real_correlation():
    from mbertlab.analysis.correlate import CorrelateConfig, correlations

    xs = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
    points = {("upos", "p_type"): (xs, [0.1, 0.3, 0.35, 0.6, 0.7, 0.9]),
              ("upos", "p_token"): (xs, [0.5, 0.1, 0.9, 0.2, 0.6, 0.3])}
    out = {(r["task"], r["overlap"]): r for r in correlations(CorrelateConfig(metrics={"upos": "accuracy"}), points)}
    strong, weak = out[("upos", "p_type")], out[("upos", "p_token")]
    assert strong["r"] == pytest.approx(np.corrcoef(xs, points[("upos", "p_type")][1])[0, 1])
    assert strong["r"] > strong["null95"] and weak["r"] < weak["null95"]
    assert out[("pooled", "p_type")]["r"] == pytest.approx(strong["r"])  # z-scoring one task keeps r


def test_real_task_files_with_an_existing_encoder(run, tmp_path, shared_data):
    """The paper's setting on real files (../shared/data): en -> es, de with an existing encoder directory;
    XNLI trained on part of the English dev set (the shared data has no MultiNLI train file)."""
    import yaml

    _, first = run
    encoder = next((first.store.workdir / "pretrain").glob("[0-9a-f]*")) / "model"
    ud, ner, xnli = "ud/", "ner/", "xnli/xtreme/"
    spec_file = tmp_path / "wd2019-real.yaml"
    spec_file.write_text(yaml.safe_dump({
        "name": "wd2019-real", "design": "wd2019", "seeds": [0], "langid": {"sentences": 20},
        "finetune": {"epochs": 1, "batch_size": 16, "max_train_sentences": 60,
                                                  "max_eval_sentences": 20, "lstm_hidden": 16},
        "data": {"kind": "files", "root": str(shared_data), "languages": {
            "en": {"text": "raw_text/en.txt", "tasks": {
                "upos": {"train": {"path": ud + "en_partut-ud-train.conllu"},
                         "dev": {"path": ud + "en_partut-ud-dev.conllu"},
                         "test": {"path": ud + "en_partut-ud-test.conllu"}},
                "ner": {"train": {"path": ner + "conll2003/eng.train"}, "dev": {"path": ner + "conll2003/eng.testa"},
                        "test": {"path": ner + "conll2003/eng.testb"}},
                "xnli": {"train": {"path": xnli + "dev-en.tsv", "end": 2000},
                         "dev": {"path": xnli + "dev-en.tsv", "start": 2000}}}},
            "es": {"text": "raw_text/es.txt", "tasks": {
                "upos": {"test": {"path": ud + "es_gsd-ud-test.conllu"}},
                "ner": {"test": {"path": ner + "conll2002/esp.testb"}},
                "xnli": {"test": {"path": xnli + "dev-es.tsv"}}}},
            "de": {"text": "raw_text/de.txt", "tasks": {
                "upos": {"test": {"path": ud + "de_gsd-ud-test.conllu"}},
                "xnli": {"test": {"path": xnli + "dev-de.tsv"}}}}}},
        "source": "en", "encoder": str(encoder),
        "tasks": ["xnli", "ner", "upos"], "strategy_tasks": ["upos"], "strategies": ["finetune", "feature"],
        "gold_upos": False}))
    spec = load_spec(spec_file)
    jobs = study_jobs(spec)
    assert "pretrain" not in {j.kind for j in jobs} and sum(j.kind == "task_files" for j in jobs) == 1
    ctx = RunContext(ArtifactStore(tmp_path / "work"), ResultsDB(tmp_path / "results.db"), "wd2019-real")
    run_study(spec, ctx, jobs=1)
    rows = ctx.results.query()
    tested = {(r.task, r.test_lang) for r in rows if r.split == "test" and r.mode == "finetune"}
    assert tested == {("xnli", l) for l in ("es", "de", "avg")} | {("ner", "en"), ("ner", "es")} | \
        {("upos", l) for l in ("en", "es", "de", "avg")}
    # the English XNLI rows: dev = examples 2000.. of the file, selected on; no English test set listed
    xnli_en = {r.split for r in rows if r.task == "xnli" and r.test_lang == "en" and r.metric == "accuracy"}
    assert xnli_en == {"dev"}
    assert {(r.task, r.test_lang) for r in rows if r.mode == "overlap"} == \
        {("xnli", "es"), ("xnli", "de"), ("ner", "es"), ("upos", "es"), ("upos", "de")}
    assert {r.extra["layer"] for r in rows if r.task == "langid"} == {0, 1, 2}
    # a missing file is named with its spec key before anything runs
    spec_file.write_text(spec_file.read_text().replace("es_gsd-ud-test", "es_missing-test"))
    with pytest.raises(ConfigError, match=r"data.languages.es.tasks.upos.test"):
        study_jobs(load_spec(spec_file))


def test_overlap_and_correlate_name_missing_inputs(run, tmp_path):
    from mbertlab.errors import DataError
    from mbertlab.analysis.correlate import CorrelateConfig, task_points
    from mbertlab.analysis.overlap import task_pieces
    from mbertlab.transfer.adapter import adapter_for
    from mbertlab.transfer.config import DataFile
    from mbertlab.transfer.task_table import TASKS

    _, ctx = run
    folders = (ctx.store.workdir / "transfer").glob("[0-9a-f]*")
    configs = {p: json.loads((p / "config.json").read_text()) for p in folders}
    transfer = next(p for p, c in configs.items() if c["mode"] == "finetune" and c["train"][0]["lang"] == "src")
    missing = DataFile(lang="s25", split="test", path="missing.conllu")
    tokenizer = type("Tok", (), {"all_special_tokens": []})()
    with pytest.raises(DataError, match="missing.conllu.*no such s25 test file"):
        task_pieces(tokenizer, adapter_for("upos"), [missing], None, tmp_path)
    # a target the transfer tested but whose score is missing is an error, not a silently dropped point
    scores = json.loads((transfer / "scores.json").read_text())
    del scores["selected"]["scores"]["s25.test"]
    broken = tmp_path / "transfer"
    broken.mkdir()
    (broken / "config.json").write_text((transfer / "config.json").read_text())
    (broken / "scores.json").write_text(json.dumps(scores))
    tested = configs[transfer]["task"]
    overlap = {l: {"p_type": 0.5, "p_token": 0.5} for l in ("s75", "s25", "fake")}
    config = CorrelateConfig(metrics={name: task.metric for name, task in TASKS.items()})
    with pytest.raises(DataError, match="no test score for target 's25'"):
        task_points(config, {tested: overlap}, [broken])
    with pytest.raises(DataError, match=f"no overlap statistics of task '{tested}'"):
        task_points(config, {}, [transfer])
