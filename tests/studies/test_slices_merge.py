"""Slices built in separate workdirs, exported and merged, give the scorecard of one workdir that built all
(issue 52); a merge refuses rows of another spec version; `study plan --slices` lists the slices."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from mbertlab.cli.main import app
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.exchange import export_results, merge_results
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.report import scorecard
from mbertlab.papers.records import record_run, run_line
from mbertlab.studies.runner import run_log, run_study
from mbertlab.studies.slices import study_slicing
from mbertlab.studies.spec import load_spec

# quick's design at its smallest: one condition, two seeds (a slice each), UPOS only, no controls; a claim whose
# verdict needs both seeds and a check that reads the pretrainings' dev losses and shard ids from the artifacts.
TINY = {
    "include": "quick",
    "name": "tiny",
    "scale": "test",
    "controls": [],
    "retrieval": False,
    "tasks": ["upos"],
    "findings": [{"id": "learns-source", "kind": "above", "value": 0.05, "quote": "a tiny encoder learns UPOS",
                  "section": "§0",
                  "where": {"task": "upos", "metric": "accuracy", "split": "test", "test_lang": "src"},
                  "checks": [{"kind": "left_plateau", "nats": 0.01}]}],
    "scales": {"test": {"conditions": [{"name": "fake script", "target": "fake"}], "seeds": [0, 1],
                        "data": {"set": {"sentences": {"train": 200, "dev": 30, "test": 30}}},
                        "pretrain": {"steps": 6, "checkpoint_every": 6, "warmup": 2},
                        "finetune": {"max_train_sentences": 40, "max_eval_sentences": 20}}},
}


@pytest.fixture()
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump(TINY), encoding="utf-8")
    return path


def _ctx(workdir: Path) -> RunContext:
    return RunContext(ArtifactStore(workdir), ResultsDB(workdir / "results.db"), "tiny")


def _card(spec, ctx) -> list:
    return [(t.title, t.as_text_rows()) for t in scorecard(spec, ctx)]


@pytest.mark.slow
def test_two_slices_merged_score_as_one_workdir(tiny, tmp_path):
    spec = load_spec(tiny)
    names = [s.name for s in study_slicing(spec).slices]
    assert names == ["seed0", "seed1"]
    exports = []
    for name in names:
        ctx = _ctx(tmp_path / f"machine-{name}")
        run_study(spec, ctx, only=study_slicing(spec).get(name).jobs, slice_name=name)
        assert {r.seed for r in ctx.results.query(task="upos")} == {int(name[-1])}  # this slice only
        export_results(spec, ctx, tmp_path / f"export-{name}", name)
        shutil.rmtree(ctx.store.workdir)  # nothing but the export leaves the machine
        exports.append(tmp_path / f"export-{name}")
    parts = json.loads((exports[0] / "manifest.json").read_text())["parts"]
    assert [(p["slice"], p["complete"]) for p in parts] == [("seed0", True)] and parts[0]["stages_built"] > 0
    half = _ctx(tmp_path / "half")
    merge_results(spec, half, exports[:1])
    with pytest.raises(ConfigError, match="stages not built"):
        record_run(spec, half, tmp_path / "record-half")
    run = record_run(spec, half, tmp_path / "record-half", partial=True)  # the slices built so far
    assert run["slices"] == ["seed0"] and 0 < run["stages_built"] < run["stages"] and len(run["parts"]) == 1
    assert f"{run['stages_built']} of {run['stages']} stages (whole slices: seed0)" in run_line(run)
    merged = _ctx(tmp_path / "merged")
    merge_results(spec, merged, exports)
    whole = _ctx(tmp_path / "whole")
    run_study(spec, whole)
    card = _card(spec, merged)
    assert card == _card(spec, whole)
    text = json.dumps(card)
    assert "not evaluated" not in text and "not run" not in text  # the check read the merged artifacts
    assert len(merged.results.query()) == len(whole.results.query())
    merge_results(spec, merged, exports)  # twice is once
    assert len(merged.results.query()) == len(whole.results.query())
    assert [p["slice"] for p in run_log(merged.store.workdir, spec)] == ["seed0", "seed1"]  # each slice's run once
    run = record_run(spec, merged, tmp_path / "record")  # every slice merged: a whole record, timed by its slices
    assert "slices" not in run and len(run["parts"]) == 2 and f"tiny (test): {run['stages']} stages," in run_line(run)
    rows = [json.loads(line) for line in (exports[0] / "rows.jsonl").read_text().splitlines()]
    assert {"stage", "hash", "machine", "gpu", "commit"} <= set(rows[0]["provenance"])
    assert not any((exports[0] / "artifacts" / "pretrain").glob("*/model"))  # the weights stay behind

    other = load_spec(tiny, overrides=["pretrain.steps=7"])  # another spec version: other pretraining hashes
    with pytest.raises(ConfigError, match="not stages of tiny .test. as this spec builds them"):
        merge_results(other, _ctx(tmp_path / "refused"), exports)
    assert not (tmp_path / "refused" / "pretrain").exists()  # refused whole: nothing copied


def test_plan_lists_the_slices_and_the_run_builds_one(tiny, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["--workdir", str(tmp_path), "study", "plan", str(tiny), "--slices"],
                           env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "seed0" in result.output and "seed1" in result.output and "2 slices" in result.output
    result = runner.invoke(app, ["--workdir", str(tmp_path), "study", "run", str(tiny), "--slice", "seed3"])
    assert result.exit_code != 0 and "no such slice" in str(result.exception or result.output)


def test_named_groups_cut_conditions_and_a_job_of_two_slices_waits_for_the_merge():
    from mbertlab.studies.jobs import Job
    from mbertlab.studies.slices import SliceSettings, slicing
    from mbertlab.tokenizers.shards import ShardsConfig

    def job(kind, tags, *inputs):
        return Job(kind, ShardsConfig(languages=[kind + "".join(tags.values())]), inputs, kind, tuple(tags.items()))

    data = job("data", {})
    a0 = job("pre", {"condition": "a", "seed": "0"}, data)
    b0 = job("pre", {"condition": "b", "seed": "0"}, data)
    a1 = job("pre", {"condition": "a", "seed": "1"}, data)
    major = job("majority", {"condition": "b"}, data)
    both = job("regress", {}, a0, a1)
    cut = slicing([data, a0, b0, a1, major, both], SliceSettings(groups={"g1": ["a"], "g2": ["b"]}), "spec")
    assert [(s.name, [j.kind + j.tag("condition") + j.tag("seed") for j in s.jobs]) for s in cut.slices] == [
        ("g1-seed0", ["data", "prea0"]), ("g1-seed1", ["data", "prea1"]),
        ("g2-seed0", ["data", "preb0", "majorityb"])]
    assert cut.after_merge == [both]
    with pytest.raises(ConfigError, match="condition 'b' .* is in no group"):
        slicing([data, b0], SliceSettings(groups={"g1": ["a"]}), "spec")
