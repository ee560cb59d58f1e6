"""The k2020 study (K et al. 2020): its test scale runs end to end, every factor reaches the stage configs,
the report has the paper's factor tables, and its numbers and verdicts follow from results.db rows."""
from __future__ import annotations

import json
import re
import statistics
from pathlib import Path

import pytest

from mbertlab.errors import ConfigError
from mbertlab.formats.xnli import read_xnli
from mbertlab.studies.kinds import job_hash
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import study_jobs, study_status
from mbertlab.studies.spec import load_spec


@pytest.fixture(scope="module")
def k2020(run_test_scale):
    spec, ctx = run_test_scale("k2020")
    md, html = write_report(spec, ctx)
    return spec, ctx, md.read_text()


def _jobs(spec, kind, condition):
    return [j for j in study_jobs(spec) if j.kind == kind and j.tag("condition") == condition]


def _rows(ctx, **where):
    return [r for r in ctx.results.query(study="k2020") if all(getattr(r, k) == v for k, v in where.items())]


def test_every_factor_reaches_the_stage_configs():
    spec = load_spec("k2020", "lab")
    base = _jobs(spec, "pretrain", "Fake-English")[0].config
    assert base.permute == {} and (base.model.layers, base.model.heads, base.model.hidden) == (4, 2, 128)
    for name, p in (("permuted p=0.25", 0.25), ("permuted p=0.5", 0.5), ("permuted p=1", 1.0)):
        assert {j.config.permute["fake"] for j in _jobs(spec, "pretrain", name)} == {p}
    shapes = {"depth 1/4": (1, 2, 128), "depth 1/2": (2, 2, 128), "heads 1/2": (4, 1, 128), "heads x2": (4, 4, 128),
              "hidden 1/2": (4, 2, 64), "hidden x2": (4, 2, 256)}
    for name, shape in shapes.items():
        m = _jobs(spec, "pretrain", name)[0].config.model
        assert (m.layers, m.heads, m.hidden) == shape, name
    nsp, pairs = _jobs(spec, "pretrain", "sentence pairs + NSP")[0].config, \
        _jobs(spec, "pretrain", "sentence pairs without NSP")[0].config
    assert (nsp.layout, nsp.nsp, pairs.layout, pairs.nsp) == ("pairs", True, "pairs", False)
    markers = _jobs(spec, "pretrain", "language markers")[0]
    assert markers.config.markers and markers.inputs[0].inputs[0].config.markers
    assert _jobs(spec, "tokenizer", "char tokens")[0].config.kind == "char"
    assert _jobs(spec, "tokenizer", "word tokens")[0].config.kind == "word"
    assert _jobs(spec, "tokenizer", "Fake-English")[0].config.kind == "wordpiece"
    # lab: two seeds per condition, three for the unigram target, which has no XNLI files (NER only, with
    # its random-init control); characters see as many tokens per step as word pieces
    assert len(_jobs(spec, "pretrain", "depth 1/4")) == 2 and len(_jobs(spec, "pretrain", "unigram corpus")) == 3
    char = _jobs(spec, "pretrain", "char tokens")[0].config
    assert char.seq_len * char.batch_size == base.seq_len * base.batch_size
    unigram = _jobs(spec, "transfer", "unigram corpus")
    assert {(j.config.task, j.config.mode) for j in unigram} == {("ner", "finetune"), ("ner", "random_init")}
    mixed = [j for j in _jobs(spec, "transfer", "Fake-English")
             if j.config.task == "xnli" and j.config.mode == "finetune"][0].config.evaluate
    assert [(f.lang, f.path, f.hypothesis_path) for f in mixed][2:] == [
        ("src-fake", "xnli/src.test.tsv", "xnli/fake.test.tsv"),
        ("fake-src", "xnli/fake.test.tsv", "xnli/src.test.tsv")]


def test_conditions_without_overrides_plan_the_spec_settings():
    """The quick study's stage configs are the spec's keys exactly (its artifact hashes do not move)."""
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.tokenizers.train import TokenizerConfig

    spec = load_spec("quick", "lab")
    s = spec.settings
    for job in study_jobs(spec):
        if job.kind == "pretrain":
            assert job.config == PretrainConfig.model_validate({**s.pretrain, "seed": job.config.seed})
        if job.kind == "tokenizer":
            assert job.config == TokenizerConfig.model_validate({**s.tokenizer, "languages": job.config.languages})


def test_k2020_test_scale_runs_and_stages_built_what_was_asked(k2020):
    spec, ctx, _ = k2020
    assert {s.state for s in study_status(spec, ctx.store)} == {"done"}
    shallow = _jobs(spec, "pretrain", "depth 1/4")[0]
    model_dir = ctx.store.workdir / "pretrain" / job_hash(shallow, ctx.store) / "model"
    assert json.loads((model_dir / "config.json").read_text())["num_hidden_layers"] == 1
    xnli = {(r.test_lang, r.mode) for r in _rows(ctx, task="xnli", metric="accuracy", split="test")}
    assert {("src", "finetune"), ("fake", "finetune"), ("same", "finetune"), ("same_fake", "finetune"),
            ("src-fake", "finetune"), ("fake-src", "finetune"), ("fake", "majority")} <= xnli
    unigram = _rows(ctx, task="ner", metric="f1", split="test", test_lang="unigram")
    assert sorted((r.mode, r.seed) for r in unigram) == [(m, s) for m in ("finetune", "random_init") for s in (0, 1, 2)]


def test_mixed_pairs_read_premise_and_hypothesis_from_different_languages(k2020):
    spec, ctx, _ = k2020
    row = _rows(ctx, task="xnli", metric="accuracy", test_lang="fake-src", mode="finetune")[0]
    out = Path(row.artifact)
    data = next((ctx.store.workdir / "generate").glob("[0-9a-f]*"))
    written = list(read_xnli(out / "predictions" / "xnli.fake-src.test.tsv"))
    fake, src = list(read_xnli(data / "xnli/fake.test.tsv")), list(read_xnli(data / "xnli/src.test.tsv"))
    assert written and [(p.premise, p.hypothesis) for p in written] == \
        [(a.premise, b.hypothesis) for a, b in zip(fake, src)][:len(written)]
    assert row.value == pytest.approx(sum(w.label == g.label for w, g in zip(written, fake)) / len(written))


def _table(md: str, title: str) -> list[list[str]]:
    block = md.split(f"### {title}", 1)[1].split("###", 1)[0]
    return [[c.strip() for c in line.strip("|").split("|")] for line in block.splitlines() if line.startswith("|")]


def test_report_has_the_paper_factor_tables_with_numbers_from_the_rows(k2020):
    spec, ctx, md = k2020
    header = ["XNLI source (src)", "XNLI target", "XNLI Δ"]
    perm = _table(md, "Word-order similarity: share p of the target's word pieces permuted in pretraining")
    assert perm[0] == ["p", "condition", "target", *header]
    assert [r[:3] for r in perm[2:]] == [["0", "Fake-English", "fake"], ["0.25", "permuted p=0.25", "fake"],
                                         ["0.5", "permuted p=0.5", "fake"], ["1", "permuted p=1", "fake"]]
    for line in perm[2:]:
        job = [j for j in _jobs(spec, "transfer", line[1]) if j.config.mode == "finetune"][0]
        art = str(ctx.store.workdir / "transfer" / job_hash(job, ctx.store))
        value = {r.test_lang: r.value for r in _rows(ctx, artifact=art, metric="accuracy", split="test")}
        assert line[3:] == [f"{100 * value['src']:.1f}", f"{100 * value['fake']:.1f}",
                            f"{100 * (value['src'] - value['fake']):.1f}"]
    assert [r[0] for r in _table(md, "Depth (attention heads and hidden size fixed)")[2:]] == ["1", "2", "4"]
    assert [r[0] for r in _table(md, "Multi-head attention (depth and hidden size fixed)")[2:]] == ["1", "2", "4"]
    assert [r[0] for r in _table(md, "Total parameters: hidden size (depth and heads fixed)")[2:]] == \
        ["64", "128", "256"]
    assert [r[:2] for r in _table(md, "Tokenization")[2:]] == [["char", "char tokens"], ["wordpiece", "Fake-English"],
                                                               ["word", "word tokens"]]
    assert [r[0] for r in _table(md, "Next-sentence prediction (sentence-pair inputs)")[2:]] == \
        ["with NSP", "without NSP"]
    assert [r[0] for r in _table(md, "Language identity markers")[2:]] == ["without", "with"]
    unigram = _table(md, "Word-frequency similarity: unigram target corpus")
    assert unigram[0][-3:] == ["NER source (src)", "NER target", "NER Δ"] and "±" in unigram[3][-1]
    overlap = _table(md, "Table 1 analogue: word-piece overlap (one target language, shared or disjoint script)")
    assert [r[:3] for r in overlap[2:]] == [["shared", "shared script", "same"], ["fake", "fake script", "same_fake"]]
    mixed = _table(md, "XNLI with premise and hypothesis in different languages (fine-tuned on src pairs)")
    assert mixed[0] == ["condition", "premise", "hypothesis", "XNLI accuracy"]
    assert [r[1:3] for r in mixed[2:]] == [["src", "src"], ["fake", "fake"], ["src", "fake"], ["fake", "src"]]


def test_scorecard_verdicts_follow_from_the_rows(k2020):
    from statsmodels.stats.weightstats import ttost_ind

    spec, ctx, md = k2020
    card = {r[0]: r for r in _table(md, "Our own observations (not the paper's claims; not counted)")[2:]}
    assert set(card) == {"overlap-negligible-xnli", "overlap-negligible-ner", "permutation-xnli", "permutation-ner",
                         "unigram-random-init", "depth-integral", "depth-over-heads", "nsp-not-needed",
                         "markers-no-effect", "wordpiece-over-char", "mixed-pairs-harder"}
    # the test scale fine-tunes XNLI only (NER for the unigram target): the NER findings cannot be judged
    assert card["permutation-ner"][2] == card["overlap-negligible-ner"][2] == "not run"
    # one seed a condition: differences cannot be decided
    assert card["permutation-xnli"][2] == card["depth-integral"][2] == "inconclusive"
    assert "needs ≥ 3 seeds" in card["depth-integral"][3]
    pre = [r.value for r in _rows(ctx, task="ner", metric="f1", split="test", test_lang="unigram", mode="finetune")]
    rnd = [r.value for r in _rows(ctx, task="ner", metric="f1", split="test", test_lang="unigram", mode="random_init")]
    assert len(pre) == len(rnd) == 3
    tol = ((statistics.variance(pre) + statistics.variance(rnd)) / 2) ** 0.5  # k = 1
    if ttost_ind(pre, rnd, -tol, tol, usevar="unequal")[0] < 0.05:
        assert card["unigram-random-init"][2] == "holds"
    else:
        assert card["unigram-random-init"][2] in ("inconclusive", "does not hold")
    assert re.search(r"\d+ holds, \d+ does not hold, \d+ inconclusive, \d+ not run", md)


def _artifacts(spec, ctx, condition) -> set[str]:
    return {str(ctx.store.workdir / "transfer" / job_hash(j, ctx.store)) for j in _jobs(spec, "transfer", condition)}


def _spec(tmp_path, text: str):
    path = tmp_path / "k.yaml"
    path.write_text("include: k2020\n" + text, encoding="utf-8")
    return path


@pytest.mark.parametrize("text, message", [
    ("tables: [{title: T, factor: f, rows: [{level: a, condition: nowhere}]}]\n", "unknown condition 'nowhere'"),
    ("conditions: [{name: a, target: fake}, {name: b, target: fake}]\ntables: []\nfindings: []\n",
     "'a' and 'b' pretrain the same encoder"),
    ("tasks: [ner]\n", "mixed_pairs needs the xnli task"),
    ("tables: [{title: T, factor: f, key: pretrain.model.depth, rows: [{condition: Fake-English}]}]\n",
     "no setting 'depth'"),
    ("tables: [{title: T, factor: f, rows: [{condition: Fake-English}]}]\n", "needs a level"),
    ("conditions: [{name: a, target: fake, permute: 2}]\n", "permute"),
])
def test_condition_errors_name_the_key(tmp_path, text, message):
    with pytest.raises(ConfigError, match=re.escape(message)):
        study_jobs(load_spec(_spec(tmp_path, text), "lab"))
