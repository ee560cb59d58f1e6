"""The liu2020 study: every scale validates with the paper's grid; the test scale runs end to end and
renders the paper's tables and the scorecard; the plan keeps the comparison controlled."""
from __future__ import annotations

import time

import pytest

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import run_study, study_jobs, study_status
from mbertlab.studies.spec import load_spec

MODELS = ("BERT", "word2vec (skip-gram)", "word2vec (CBOW)", "GloVe")


def test_every_scale_plans_the_whole_grid():
    for scale in ("test", "lab", "paper"):
        spec = load_spec("liu2020", scale)
        s = spec.settings
        jobs = study_jobs(spec)
        per_seed = len(s.sizes) * (1 + len(s.static_methods)) + 1  # + the window model
        assert len([j for j in jobs if j.kind == "word_retrieval"]) == per_seed * len(s.seeds), scale
        assert len([j for j in jobs if j.kind == "transfer" and j.tag("method") != "majority"]) == \
            per_seed * len(s.seeds) * len(s.tasks)
    paper = load_spec("liu2020", "paper").settings
    assert [z.sentences for z in paper.sizes] == [200_000, 1_000_000] and paper.window == 20


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
    assert len(short) == len(s.seeds) and short[0].config.seq_len == s.window
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
        study_jobs(load_spec("liu2020", "test", ["target=fake"]))


def test_test_scale_end_to_end(tmp_path):
    spec = load_spec("liu2020", "test")
    ctx = RunContext(ArtifactStore(tmp_path), ResultsDB(tmp_path / "results.db"), "liu2020")
    start = time.perf_counter()
    run_study(spec, ctx, jobs=1)
    print(f"liu2020 test scale: {time.perf_counter() - start:.1f} s")
    assert {st.state for st in study_status(spec, ctx.store)} == {"done"}
    rows = ctx.results.query(study="liu2020")
    retrieval = [r for r in rows if r.task == "retrieval" and r.metric == "mrr"]
    assert len(retrieval) == 2 * 4 + 1
    assert all(0 < r.value <= 1 and r.extra["pairs"] > 0 for r in retrieval)
    assert {r.mode for r in retrieval} == {"static", "contextual"}
    xnli = [r for r in rows if r.task == "xnli" and r.metric == "accuracy" and r.split == "test"]
    assert {r.test_lang for r in xnli} == {"src", "same"}
    assert {r.mode for r in xnli} == {"feature", "majority"}
    md, _ = write_report(spec, ctx)
    text = md.read_text()
    assert "| Model | MRR 200k | P@1 200k | MRR 1000k | P@1 1000k |" in text
    assert "| Model | NOUN | VERB | ADJ | ADV | open | closed |" in text
    assert "| Model | Window | MRR | P@1 | XNLI same |" in text
    assert "| Model | Size | src (train language) | same (zero-shot) | Δ |" in text
    for model in MODELS:
        assert f"| {model} | 0." in text  # every model has retrieval numbers
    assert "| BERT (w = 4) | " in text
    tables = text.split("### Reproduction scorecard")[0]
    assert "—" not in tables.replace("| majority label | — |", "").replace("| — |", "")
    card = text.split("### Reproduction scorecard")[1].split("## Notes")[0]
    assert card.strip().endswith(", 0 not run")  # every finding has rows at test scale
    for finding in ("data-size-bert", "window-lowers-mrr", "bert-beats-word2vec-xnli", "bert-beats-glove-xnli"):
        assert f"| {finding} |" in card
