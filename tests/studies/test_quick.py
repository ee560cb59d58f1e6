"""The built-in studies: every spec validates; the quick study's test scale runs end to end."""
from __future__ import annotations

from pathlib import Path

import pytest

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import run_study, study_jobs, study_status
from mbertlab.studies.spec import SCALES, builtin_specs, load_spec, read_spec_data

REPO = Path(__file__).resolve().parents[2]


def test_every_builtin_spec_validates_at_every_scale():
    assert "quick" in builtin_specs()
    assert SCALES == ("test", "lab", "gpu", "paper")
    for name in builtin_specs():
        for scale in SCALES:
            if (name, scale) == ("quick", "paper"):  # quick has no paper scale: asking for one is an error
                with pytest.raises(ConfigError, match="not defined"):
                    load_spec(name, scale)
                continue
            spec = load_spec(name, scale)
            assert spec.scale == scale and study_jobs(spec), (name, scale)


def test_quick_gpu_scale_is_larger_than_lab_with_more_seeds_and_leaves_the_device_to_the_run():
    lab, gpu = (load_spec("quick", scale).settings for scale in ("lab", "gpu"))
    assert len(gpu.seeds) > len(lab.seeds)
    big, small = gpu.pretrain["model"], lab.pretrain["model"]
    assert big["layers"] > small["layers"] and big["hidden"] > small["hidden"]
    tokens = lambda p: p["steps"] * p["batch_size"] * p["seq_len"]  # noqa: E731
    assert tokens(gpu.pretrain) > tokens(lab.pretrain)
    raw = read_spec_data(builtin_specs()["quick"])["scales"]["gpu"]
    assert "device" not in str(raw)
    pretrains = [j for j in study_jobs(load_spec("quick", "gpu")) if j.kind == "pretrain"]
    assert len(pretrains) == len(gpu.seeds) * len(gpu.conditions)


def test_study_list_names_the_five_papers_and_quick_one_line_each():
    import os
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "mbertlab", "study", "list"], capture_output=True, text=True,
                         env={**os.environ, "COLUMNS": "200"}, check=True).stdout
    rows = [line for line in out.splitlines() if line.startswith("│")]
    assert [row.split("│")[1].strip() for row in rows] == ["k2020", "liu2020", "lms2023", "quick", "wd2019", "wd2020"]
    assert all(":" not in row.split("│")[3] for row in rows)  # the lead, not the whole description


def test_quick_test_scale_end_to_end(tmp_path):
    spec = load_spec("quick", "test")
    ctx = RunContext(ArtifactStore(tmp_path), ResultsDB(tmp_path / "results.db"), "quick")
    run_study(spec, ctx, jobs=1)
    assert {s.state for s in study_status(spec, ctx.store)} == {"done"}
    rows = ctx.results.query(study="quick")
    transfers = [j for j in study_jobs(spec) if j.kind == "transfer"]
    # two conditions x (majority + pretrained + random init) x two tasks; each scores source and target
    assert len(transfers) == 12
    assert {(r.task, r.test_lang) for r in rows if r.metric in ("accuracy", "f1")} == {
        (t, l) for t in ("upos", "ner") for l in ("src", "fake", "unigram")}
    assert len([r for r in rows if r.task == "retrieval" and r.metric == "mrr"]) == 4
    md, html = write_report(spec, ctx)
    text = md.read_text()
    header = "| condition | target | source (src) | zero-shot target | Δ | random init: target | majority: target |"
    assert header in text
    assert "| fake script | fake |" in text and "—" not in text.split("## Versions")[0]
    page = html.read_text()
    assert page.count("<table>") == 3 and page.count("data:image/png;base64,") == 2


def test_k2020_lab_test_scale_runs_on_shared_data(tmp_path, shared_data):
    spec = load_spec(REPO / "studies" / "k2020-lab.yaml", "test")
    ctx = RunContext(ArtifactStore(tmp_path), ResultsDB(tmp_path / "results.db"), "k2020-lab")
    run_study(spec, ctx, jobs=1)
    rows = ctx.results.query(study="k2020-lab")
    assert {(r.task, r.test_lang) for r in rows if r.metric in ("accuracy", "f1")} == {
        (t, l) for t in ("upos", "ner", "xnli") for l in ("en", "fake_en", "es")}
    # the enfake-es B-BERT (K et al. Table 1) is fine-tuned on Fake-English alone, and tested on es
    planned = [j for j in study_jobs(spec) if j.kind == "transfer" and j.tag("condition") == "Fake-English → Spanish"]
    assert {(j.config.train[0].lang, tuple(f.lang for f in j.config.evaluate)) for j in planned} == {
        ("fake_en", ("fake_en", "es"))}
    assert {(r.train_lang, r.test_lang) for r in rows if r.mode == "finetune" and r.train_lang != "en"} == {
        ("fake_en", "fake_en"), ("fake_en", "es")}
    assert {r.test_lang for r in rows if r.task == "retrieval"} == {"fake_en"}  # lexicons are from en
    md, _ = write_report(spec, ctx)
    text = md.read_text()
    assert "| Fake-English | fake_en |" in text and "| fake_en → es | Fake-English → Spanish | es |" in text
    assert "| fake_en → es (paper) | enfake-es |" in text
    taskdata = next((tmp_path / "taskdata").glob("[0-9a-f]*"))
    for task, name, texts in (("upos", "test.tsv", 1), ("xnli", "train.tsv", 2)):  # the labels stay as they are
        lines = (taskdata / "fake_en" / task / name).read_text().splitlines()
        fake = "".join(c for line in lines for c in line.split("\t")[:texts])
        assert fake and not set(fake) & set("abcdefghijklmnopqrstuvwxyz")
    # XNLI: English dev [0, 2000) to train, [2000, 2490) to test; the targets' [2000, 2490) only
    lines = {(lang, split): (taskdata / lang / "xnli" / f"{split}.tsv").read_text().splitlines()
             for lang, split in (("en", "train"), ("en", "test"), ("es", "test"))}
    dev = (shared_data / "xnli" / "xtreme" / "dev-en.tsv").read_text(encoding="utf-8").splitlines()
    assert len(dev) == 2490 and lines["en", "train"] == dev[:2000] and lines["en", "test"] == dev[2000:]
    assert len(lines["es", "test"]) == 490


def test_missing_data_files_are_one_error_each(tmp_path):
    import pytest

    from mbertlab.errors import ConfigError

    with pytest.raises(ConfigError) as err:
        study_jobs(load_spec(REPO / "studies" / "k2020-lab.yaml", overrides=[f"data.root={tmp_path}"]))
    lines = str(err.value).splitlines()
    assert len(lines) == 20 and all("no such file" in l for l in lines)
    assert not list(tmp_path.iterdir())


def test_a_learning_rate_grid_is_selected_on_the_source_dev_file():
    def evaluated(overrides):
        jobs = [j for j in study_jobs(load_spec("quick", "test", overrides)) if j.kind == "transfer"
                and j.config.mode == "finetune"]
        return {tuple((f.lang, f.split) for f in j.config.evaluate) for j in jobs}

    assert evaluated([]) == {(("src", "test"), ("fake", "test")), (("src", "test"), ("unigram", "test"))}
    grid = evaluated(["finetune.lr=[0.001, 0.003]"])
    assert grid == {(("src", "dev"), ("src", "test"), ("fake", "test")),
                    (("src", "dev"), ("src", "test"), ("unigram", "test"))}
