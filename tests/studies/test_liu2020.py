"""The liu2020 study: every scale validates with the paper's grid; the test scale runs end to end and renders
the paper's tables (Table 1's numbers beside ours) and a scorecard of the paper's claims whose verdicts follow
from the rows by scipy's / statsmodels' tests; published.yaml's numbers are the paper's."""
from __future__ import annotations

import re
from itertools import pairwise

import pytest
from scipy import stats
from statsmodels.stats.weightstats import ttost_ind

from mbertlab.errors import ConfigError
from mbertlab.studies.published import load_published
from mbertlab.studies.report import study_rows, write_report
from mbertlab.studies.runner import spec_section, study_jobs, study_status
from mbertlab.studies.spec import builtin_specs, load_spec, read_spec_data
from tests.conftest import REPO, SHARED_DATA, local_encoder
from tests.studies.checked import plateau_gaps

MODELS = ("BERT", "word2vec (skip-gram)", "word2vec (CBOW)", "GloVe")
PAPER = SHARED_DATA.parent / "papers" / "liu2020-what-makes-multilingual-bert-multilingual.txt"


def test_every_scale_plans_the_whole_grid():
    for scale in ("test", "lab", "paper"):
        spec = load_spec("liu2020", scale)
        s = spec.settings
        jobs = study_jobs(spec)
        per_seed = len(s.sizes) * (1 + len(s.static_methods)) + len(s.window_sizes)  # + the window models
        figure4 = 2 * len(s.word2vec_windows)  # skip-gram and CBOW at each longer window, retrieval only
        assert len([j for j in jobs if j.kind == "word_retrieval"]) == (per_seed + figure4) * len(s.seeds), scale
        retrieval_only = {"lab": 3}.get(scale, 0)  # the lab's CBOW at both sizes and the 200k short-window BERT
        assert len([j for j in jobs if j.kind == "transfer" and j.tag("method") != "majority"]) == \
            (per_seed - retrieval_only) * len(s.seeds) * len(s.tasks), scale
    paper = load_spec("liu2020", "paper").settings
    assert [z.sentences for z in paper.sizes] == [200_000, 1_000_000] and paper.window == 20
    assert paper.window_sizes == ["200k", "1000k"] and paper.pretrain["model"]["hidden"] == 768
    assert paper.word2vec_windows == [128, 256]


def test_lab_runs_xnli_on_every_model_an_xnli_claim_reads_and_gpu_on_all():
    def models(scale, kind):  # (method, size, window, seed) of the grid's models a stage kind scores
        return {(j.tag("method"), j.tag("size"), j.tag("window"), j.tag("seed")) for j in
                study_jobs(load_spec("liu2020", scale)) if j.kind == kind and j.tag("method") != "majority"
                and j.tag("window") in ("full", "short")}

    def xnli_models(scale):
        return models(scale, "transfer")

    def retrieval_models(scale):
        return models(scale, "word_retrieval")

    lab = xnli_models("lab")
    assert {(m, z, w) for m, z, w, _ in retrieval_models("lab") - lab} == {
        ("word2vec (CBOW)", "200k", "full"), ("word2vec (CBOW)", "1000k", "full"), ("BERT", "200k", "short")}
    assert xnli_models("gpu") == retrieval_models("gpu")
    for f in read_spec_data(builtin_specs()["liu2020"])["findings"]:
        if (f.get("where") or {}).get("task") != "xnli":
            continue
        for side in (f["a"], f["b"]):
            want = {**f["where"], **side}
            methods = want["method"] if isinstance(want.get("method"), list) else [want.get("method")]
            for method in methods:
                read = {m for m in lab if m[0] == method and m[1] == want.get("size", m[1])
                        and m[2] == want.get("window", m[2])}
                assert len(read) == 3, (f["id"], method)  # three seeds of the model the claim reads


def test_retrieval_only_must_name_a_model():
    with pytest.raises(ConfigError, match=r"retrieval_only: \{'method': 'CBOW'\} names no model"):
        load_spec("liu2020", "lab", overrides=["retrieval_only=[{method: CBOW}]"])


def test_figure_4_trains_word2vec_with_longer_windows_on_the_small_data():
    jobs = study_jobs(load_spec("liu2020", "lab"))
    grid = {j.tag("window"): j for j in jobs if j.kind == "static" and j.tag("size") == "200k"
            and j.tag("seed") == "0" and j.config.static.method == "word2vec_sg"}
    assert {w: j.config.static.window for w, j in grid.items()} == {"full": 5, "128": 128, "256": 256}
    # the same text, tokenizer and settings as the grid's word2vec: only the window differs
    base = grid["full"].config.static.model_dump()
    for w in ("128", "256"):
        assert grid[w].inputs == grid["full"].inputs
        assert {k: v for k, v in grid[w].config.static.model_dump().items() if v != base[k]} == {"window": int(w)}
    assert not any(j.kind == "transfer" and j.tag("window") in ("128", "256") for j in jobs)  # Figure 4: MRR only
    assert len(load_spec("liu2020", "lab").settings.seeds) >= 3  # claims on differences need 3 seeds


def test_plan_is_controlled():
    spec = load_spec("liu2020", "lab")
    s = spec.settings
    jobs = study_jobs(spec)
    tokenizers = {j for j in jobs if j.kind == "tokenizer"}
    assert len(tokenizers) == 1  # one vocabulary for every model and size
    statics = [j for j in jobs if j.kind == "static"]
    assert {j.config.static.dim for j in statics} == {s.pretrain["model"]["hidden"]}
    assert all(j.inputs[0] in tokenizers for j in statics)
    pretrains = [j for j in jobs if j.kind == "pretrain"]
    full = [j for j in pretrains if j.tag("window") == "full"]
    short = [j for j in pretrains if j.tag("window") == "short"]
    assert len(short) == len(s.seeds) * 2 and {j.config.seq_len for j in short} == {s.window}
    assert {j.tag("size") for j in short} == {"200k", "1000k"}
    # each window model reads the same shards as the full model of its size
    shards = {(j.tag("size"), j.tag("seed")): j.inputs[0] for j in full}
    assert all(j.inputs[0] == shards[(j.tag("size"), j.tag("seed"))] for j in short)
    tokens = {j.config.batch_size * j.config.seq_len for j in full + short}
    assert len(tokens) == 1  # same tokens per step
    evaluation = {j.inputs[-1] for j in jobs if j.kind in ("transfer", "word_retrieval")}
    assert len(evaluation) == 1  # one XNLI / lexicon / text for every model
    sizes = {j.tag("size"): j.inputs[0].inputs[1].config.sentences.train for j in full}
    assert sizes == {z.name: z.sentences for z in s.sizes}


def test_bad_settings_are_config_errors():
    with pytest.raises(ConfigError, match="window"):
        study_jobs(load_spec("liu2020", "test", ["window=12"]))  # not shorter than seq_len 12
    with pytest.raises(ConfigError, match="static.dim"):
        load_spec("liu2020", "test", ["static.dim=8"])
    with pytest.raises(ConfigError, match="unknown language"):
        study_jobs(load_spec("liu2020", "test", ["targets=[fake]"]))
    with pytest.raises(ConfigError, match="window_sizes"):
        load_spec("liu2020", "test", ["window_sizes=[500k]"])


def _line_numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"(?<![\w.])\d+\.\d+", line)]


def test_published_numbers_are_table_1_of_the_paper():
    """Each Table 1 row of published.yaml equals the numbers of that row in the paper's text, in column order."""
    text = PAPER.read_text(encoding="utf-8")
    table = text[text.index("Table 1: MRR by part-of-speech tag"):text.index("## 2.5")]
    published = load_published("liu2020")
    columns = ["de", "es", "ar", "fr", "ru", "tr", "avg"]
    assert published.rows("Table 1") == ["Closed", "Open", "Noun", "Verb", "Adv.", "Adj."]
    for row in published.rows("Table 1"):
        block = re.search(rf"<td>{re.escape(row)}</td>(.*?)</tr>", table, re.S).group(1)
        assert _line_numbers(re.sub(r"<.*?>", " ", block)) == \
            [published.number("Table 1", row, c).value for c in columns], row
    assert published.number("Table 1", "Adj.", "avg").value == 0.491  # the paper's best open class
    figures = [n for n in published.numbers if n.table.startswith("Figure")]
    assert figures and all(n.value is None and "figure" in n.note for n in figures)


def pick(rows, selection: dict) -> list[float]:
    """Values of the rows matching every filter (a column, else a tag in extra; a list means any of)."""
    def ok(row, key, wanted):
        got = getattr(row, key) if key in row.__dataclass_fields__ else row.extra.get(key)
        return any(str(got) == str(w) for w in (wanted if isinstance(wanted, list) else [wanted]))
    return [r.value for r in rows if all(ok(r, k, v) for k, v in selection.items())]


def welch_verdict(a: list[float], b: list[float], margin: float = 0.0, alpha: float = 0.05) -> str:
    """mean(a) − mean(b) > margin by scipy's one-sided Welch tests, with >= 3 values a side."""
    if not a or not b:
        return "not run"
    if min(len(a), len(b)) < 3:
        return "inconclusive"
    if stats.tvar(a) == stats.tvar(b) == 0:
        return "holds" if stats.tmean(a) - stats.tmean(b) > margin else "does not hold"
    shifted = [x - margin for x in a]
    if stats.ttest_ind(shifted, b, equal_var=False, alternative="greater").pvalue < alpha:
        return "holds"
    return "does not hold" if stats.ttest_ind(shifted, b, equal_var=False, alternative="less").pvalue < alpha \
        else "inconclusive"


def tost_verdict(a: list[float], b: list[float], tol: float, alpha: float = 0.05) -> str:
    """|mean(a) − mean(b)| <= tol by statsmodels' TOST; outside it by a one-sided Welch test beyond ±tol."""
    if not a or not b:
        return "not run"
    if min(len(a), len(b)) < 3:
        return "inconclusive"
    if ttost_ind(a, b, -tol, tol, usevar="unequal")[0] < alpha:
        return "holds"
    beyond = welch_verdict(a, b, tol, alpha) == "holds" or welch_verdict(b, a, tol, alpha) == "holds"
    return "does not hold" if beyond else "inconclusive"


def expected_verdict(finding: dict, rows) -> str:
    """A spec finding's verdict computed from the rows by scipy / statsmodels (greater, within, monotone)."""
    where, alpha, kind = finding.get("where", {}), finding.get("alpha", 0.05), finding["kind"]
    if kind == "untested":
        return "not run"
    if kind == "greater":
        return welch_verdict(pick(rows, {**where, **finding["a"]}), pick(rows, {**where, **finding["b"]}),
                             finding.get("margin", 0.0), alpha)
    if kind == "within":
        return tost_verdict(pick(rows, {**where, **finding["a"]}), pick(rows, {**where, **finding["b"]}),
                            finding["tol"], alpha)
    assert kind in ("increasing", "decreasing"), kind
    sign = 1 if kind == "increasing" else -1
    sides = [[sign * v for v in pick(rows, {**where, **finding.get("select", {}), finding["by"]: level})]
             for level in finding["levels"]]
    if not all(sides):
        return "not run"
    steps = [welch_verdict(b, a, finding.get("margin", 0.0), alpha) for a, b in pairwise(sides)]
    return "holds" if set(steps) == {"holds"} else "does not hold" if "does not hold" in steps else "inconclusive"


def scorecard_rows(md: str, title: str = "Reproduction scorecard") -> dict[str, list[str]]:
    section = md.split(f"### {title}\n")[1].split("\n### ")[0].split("\n## ")[0]
    lines = [l for l in section.splitlines() if l.startswith("| ")][1:]  # below the header
    return {cells[0]: cells for cells in (l.strip("| ").split(" | ") for l in lines)}


@pytest.fixture(scope="module")
def study(run_test_scale):
    spec, ctx = run_test_scale("liu2020")
    md, _ = write_report(spec, ctx)
    return spec, ctx, md.read_text()


def test_test_scale_runs_every_model(study):
    spec, ctx, _ = study
    assert {st.state for st in study_status(spec, ctx.store)} == {"done"}
    rows = ctx.results.query(study="liu2020")
    retrieval = [r for r in rows if r.task == "retrieval" and r.metric == "mrr"]
    assert len(retrieval) == 2 * 4 + 2 + 4  # 2 sizes x 4 models + the window model at both sizes + Figure 4's
    assert all(0 < r.value <= 1 and r.extra["pairs"] > 0 for r in retrieval)
    assert {r.mode for r in retrieval} == {"static", "contextual"}
    xnli = [r for r in rows if r.task == "xnli" and r.metric == "accuracy" and r.split == "test"]
    assert {r.test_lang for r in xnli} == {"src", "same"}
    assert {r.mode for r in xnli} == {"feature", "majority"}


def test_report_has_the_papers_tables_and_table_1_beside_ours(study):
    spec, ctx, text = study
    assert "| Model | MRR 200k | P@1 200k | MRR 1000k | P@1 1000k |" in text
    assert "| Model | NOUN | VERB | ADJ | ADV | open | closed |" in text
    assert text.count("| Model | Window | MRR | P@1 | XNLI same |") == 2  # 200k and 1000k
    assert "| Model | Size | src (train language) | same (zero-shot) | Δ |" in text
    for model in MODELS:
        assert f"| {model} | 0." in text  # every model has retrieval numbers
    assert "| BERT (w = 4) | " in text
    # Figure 4: word2vec's MRR by window on the small data, each cell its retrieval row
    rows = study_rows(spec, ctx)
    for method in ("word2vec (skip-gram)", "word2vec (CBOW)"):
        for window, label in (("full", "5 (the grid's)"), ("128", "128"), ("256", "256")):
            mrr = [r.value for r in rows if r.task == "retrieval" and r.metric == "mrr"
                   and r.extra.get("method") == method and r.extra.get("size") == "200k"
                   and r.extra.get("window") == window]
            assert len(mrr) == 1 and f"| {method} | {label} | {mrr[0]:.3f} |" in text
    for figure in ("Figure 1a / 1b", "Figure 2a / 2b", "Figure 3", "Figure 4", "Table 1"):
        assert f"Mirrors the paper's {figure}" in text
    paper_line = next(l for l in text.splitlines() if l.startswith("| BERT (paper) |"))
    cells = [float(c) for c in paper_line.strip("| ").split(" | ")[1:]]
    published = load_published("liu2020")
    assert cells == [published.number("Table 1", row, "avg").value
                     for row in ("Noun", "Verb", "Adj.", "Adv.", "Open", "Closed")]
    assert cells == [0.480, 0.394, 0.491, 0.440, 0.511, 0.459]  # Table 1's avg column, read off the paper
    tables = text.split("### Reproduction scorecard")[0]
    assert "—" not in tables.replace("| majority label | — |", "").replace("| — |", "")


def test_scorecard_verdicts_follow_from_the_rows(study):
    spec, ctx, text = study
    findings = spec_section(spec, "findings")
    card = scorecard_rows(text)
    paper = [f for f in findings if not f.get("own")]
    assert set(card) == {f["id"] for f in paper}
    rows = study_rows(spec, ctx)
    # 10 pretraining steps leave every BERT on the MLM plateau (by scipy): each claim with rows is uninformative
    assert max(plateau_gaps(ctx.store.workdir).values()) < 0.1
    for f in paper:
        expected = expected_verdict(f, rows)
        assert card[f["id"]][2] == ("uninformative" if expected != "not run" and f.get("checks") else expected), f["id"]
        assert f"“{f['quote']}”" in card[f["id"]][1] and f["section"] in card[f["id"]][1]
    # one seed at test scale: every tested claim has its rows (undecided by one seed) and fails its plateau check;
    # untested ones are not run
    tested = [f for f in paper if f["kind"] != "untested"]
    assert all(expected_verdict(f, rows) == "inconclusive" for f in tested)
    assert all(card[f["id"]][2] == "uninformative" and "left_plateau failed" in card[f["id"]][4] for f in tested)
    untested = len(paper) - len(tested)
    assert f"0 holds, 0 does not hold, 0 inconclusive, {len(tested)} uninformative, {untested} not run (of the " \
           "paper's claims)" in text
    ids = {f["id"] for f in paper}
    assert {"abstract-data-size", "abstract-window", "conclusion-longer-dependency", "conclusion-massive-data",
            "conclusion-static-not-the-same", "window-helps-small-data", "open-over-closed"} <= ids


def test_the_verdict_checker_decides_with_three_seeds():
    """The independent checker above is itself a test oracle: on rows with 3 seeds it reaches each state."""
    from mbertlab.store.results import ResultRow

    def rows(method, values):
        return [ResultRow(metric="mrr", value=v, task="retrieval", seed=i, extra={"method": method, "size": "1000k",
                                                                                 "window": "full"})
                for i, v in enumerate(values)]
    data = rows("BERT", [0.30, 0.31, 0.32]) + rows("GloVe", [0.10, 0.12, 0.11]) + rows("CBOW", [0.29, 0.35, 0.25])
    finding = next(f for f in load_spec_findings() if f["id"] == "big-data-bert-beats-glove-mrr")
    assert expected_verdict(finding, data) == "holds"
    assert expected_verdict({**finding, "a": {"method": "GloVe"}, "b": {"method": "BERT"}}, data) == "does not hold"
    assert expected_verdict({**finding, "b": {"method": "CBOW"}}, data) == "inconclusive"


def load_spec_findings() -> list[dict]:
    return spec_section(load_spec("liu2020", "lab"), "findings")


def test_real_text_with_muse_and_a_released_encoder_end_to_end(tmp_path, shared_data):
    """Real text and MUSE dictionaries (the paper's data kind): joint pretraining over English and every target,
    each size a cap on every language's text, retrieval en → each target on the largest size's text with POS
    classes from the English UPOS file, and a released encoder (a Hugging Face directory) as a reference row."""
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import ResultsDB
    from mbertlab.studies.jobs import RunContext
    from mbertlab.studies.runner import run_study

    enc = local_encoder(tmp_path / "released", ("en", "es", "de"), vocab_size=800, layers=1)
    path = tmp_path / "real.yaml"
    text = f"""
name: liu-real
design: liu2020
precision: fp32
data:
  kind: files
  root: {shared_data}
  languages:
    en: {{text: [raw_text/en.txt], tasks: {{upos: {{train: udpos_xtreme/train-en.tsv}}}}}}
    es: {{text: [raw_text/es.txt], lexicon: muse/en-es.txt}}
    de: {{text: [raw_text/de.txt], lexicon: muse/en-de.txt}}
source: en
targets: [es, de]
sizes: [{{name: small, sentences: 150}}, {{name: large, sentences: 300}}]
window: null
seeds: [0]
static_methods: [word2vec_sg]
static: {{epochs: 1, min_count: 1}}
tasks: []
encoder: {enc}
tokenizer: {{kind: word, vocab_size: 3000}}
pretrain: {{model: {{layers: 1, hidden: 32, heads: 2}}, steps: 10, batch_size: 8, seq_len: 16}}
retrieval: {{sentences: 300}}
"""
    path.write_text(text, encoding="utf-8")
    spec = load_spec(path, "lab")
    jobs = study_jobs(spec)
    retrieval = [j for j in jobs if j.kind == "word_retrieval"]
    # (BERT + word2vec) x 2 sizes + the released encoder, each to es and de
    assert sorted((j.tag("method"), j.tag("size"), j.config.target) for j in retrieval) == sorted(
        [(m, z, t) for m in ("BERT", "word2vec (skip-gram)") for z in ("small", "large") for t in ("es", "de")]
        + [("released encoder", "", t) for t in ("es", "de")])
    large = {j.inputs[2].key for j in retrieval}  # every model read on the largest size's text
    assert len(large) == 1 and {j.inputs[2].kind for j in retrieval} == {"corpus"}
    assert {j.config.treebank for j in retrieval} == {"{lang}/upos/train.tsv"}
    corpora = {j.tag("size"): j.inputs[0].inputs[1] for j in jobs if j.kind == "pretrain"}
    assert {z: [l.max_sentences for l in c.config.languages] for z, c in corpora.items()} == \
        {"small": [150] * 3, "large": [300] * 3}
    assert {j.inputs[0].kind for j in retrieval if j.tag("method") == "released encoder"} == {"hf_encoder"}

    ctx = RunContext(ArtifactStore(tmp_path / "work"), ResultsDB(tmp_path / "work" / "results.db"), "liu-real")
    run_study(spec, ctx, jobs=1)
    rows = ctx.results.query(task="retrieval", metric="mrr")
    assert len(rows) == len(retrieval) and {r.test_lang for r in rows} == {"es", "de"}
    assert all(0 < r.value <= 1 for r in rows)
    assert ctx.results.query(task="retrieval", metric="mrr_NOUN")  # POS classes read from the English UPOS TSV
    md = write_report(spec, ctx, tmp_path / "report")[0].read_text(encoding="utf-8")
    assert "| Model | Target | MRR small |" in md and "Released encoder released (reference)" in md

    path.write_text(text.replace("tasks: []", "tasks: [xnli]"), encoding="utf-8")
    with pytest.raises(ConfigError, match="word retrieval only"):
        load_spec(path, "lab")


def test_the_real_text_spec_pairs_english_with_every_muse_language():
    """studies/liu2020-real.yaml: every shared MUSE pair, read from ../shared/data, at lab and test scale."""
    lab = load_spec(REPO / "studies" / "liu2020-real.yaml", "lab")
    assert lab.settings.targets == ["es", "de", "ru", "hi", "ar", "zh"]
    jobs = study_jobs(lab)
    retrieval = [j for j in jobs if j.kind == "word_retrieval"]
    # per seed: 2 sizes x (BERT, 3 static, window BERT) + Figure 4's 2 word2vec x 2 windows, each to 6 targets
    assert len(retrieval) == 3 * (2 * 5 + 4) * 6
    assert all(j.inputs[1].kind == "taskdata" and j.inputs[2].kind == "corpus" for j in retrieval)
    assert not [j for j in jobs if j.kind == "transfer"]
    test = study_jobs(load_spec(REPO / "studies" / "liu2020-real.yaml", "test"))
    assert {j.config.target for j in test if j.kind == "word_retrieval"} == {"es", "de"}


def test_a_committed_record_renders_the_report_and_verdicts_of_the_workdir(study, tmp_path):
    """papers/records.py on this run: rows, the checks' facts and the run log, replayed with the artifacts gone,
    give the workdir's own tables and verdicts (issue 51); a record of a half-built study is refused."""
    import json

    from mbertlab.papers.records import read_record, record_run, recorded_report
    from mbertlab.report.tables import markdown_table
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import ResultsDB
    from mbertlab.studies.designs import get_design
    from mbertlab.studies.jobs import RunContext
    from mbertlab.studies.report import scorecard, study_verdicts

    spec, ctx, _ = study
    run = record_run(spec, ctx, tmp_path / "rec")
    assert run["stages"] == len(study_jobs(spec)) and run["parts"][0]["stages_built"] == run["stages"]
    assert run["parts"][0]["precision"] == "fp32" and run["parts"][0]["wall_s"] > 0
    rows, answers, _ = read_record(tmp_path / "rec")
    assert len(rows) == len(study_rows(spec, ctx)) and all(r["artifact"].count("/") == 1 for r in rows)
    assert any(k.startswith("plateau|") for k in answers) and any(k.startswith("surface|") for k in answers)
    live = get_design(spec.design).report(spec, ctx.store, ctx.results).tables + scorecard(spec, ctx)
    report, verdicts = recorded_report(spec, tmp_path / "rec")
    assert [markdown_table(t) for t in report.tables] == [markdown_table(t) for t in live]
    assert [(v.id, v.state, v.test, v.checks) for v in verdicts] == [(v.id, v.state, v.test, v.checks)
                                                            for v in study_verdicts(spec, ctx)]
    # a record lacking what a check reads: the check is not evaluated, said so, never passed
    (tmp_path / "rec" / "facts.json").write_text(json.dumps({k: v for k, v in answers.items()
                                                             if not k.startswith("plateau|")}))
    _, blind = recorded_report(spec, tmp_path / "rec")
    plateau = [c for v in blind for c in v.checks if c.name == "left_plateau"]
    assert plateau and all(c.passed is None and "not in the recorded run" in c.text for c in plateau)
    empty = RunContext(ArtifactStore(tmp_path / "empty"), ResultsDB(tmp_path / "empty" / "results.db"), spec.name)
    with pytest.raises(ConfigError, match="stages not built"):
        record_run(spec, empty, tmp_path / "rec2")
    assert not (tmp_path / "rec2").exists()
