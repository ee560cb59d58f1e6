"""`study plan`'s passes over each language's text: the sample's estimate before anything is built against the
token ids the built shards hold, and the warning above PASSES_WARN."""
from __future__ import annotations

import numpy as np
import pytest

from mbertlab.pretrain.cost import tokens_processed
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext, topological
from mbertlab.pretrain.cost import passes
from mbertlab.studies.plan import plan_study
from mbertlab.studies.plan_warnings import PASSES_WARN
from mbertlab.studies.runner import build_job, study_jobs
from mbertlab.studies.spec import load_spec


def test_passes_before_building_match_the_built_shards(tmp_path):
    """quick at test scale (alpha 0: each language half the tokens): passes = tokens / 2 / the language's ids."""
    spec = load_spec("quick", "test")
    store = ArtifactStore(tmp_path)
    job = next(j for j in study_jobs(spec) if j.kind == "pretrain")
    planned = next(p for p in plan_study(spec, store).pretrains if p.label == job.label)
    ctx = RunContext(store, ResultsDB(tmp_path / "results.db"), "quick")
    built = {}
    for j in topological([job.inputs[0]]):
        built[j] = build_job(j, [built[i] for i in j.inputs], ctx)
    shards = built[job.inputs[0]].path
    for lang in job.inputs[0].config.languages:
        ids = np.load(shards / f"{lang}.train.ids.npy").shape[0]
        expected = tokens_processed(job.config) / 2 / ids
        assert planned.passes[lang] == pytest.approx(expected, rel=0.15), lang
    after = next(p for p in plan_study(spec, store).pretrains if p.label == job.label)
    for lang in job.inputs[0].config.languages:  # from the built shards: exact
        ids = np.load(shards / f"{lang}.train.ids.npy").shape[0]
        assert after.passes[lang] == pytest.approx(tokens_processed(job.config) / 2 / ids, rel=1e-9)


def test_passes_share_tokens_as_the_loop_samples_and_resolve_epochs():
    from mbertlab.pretrain.config import PretrainConfig

    text = {"big": 9000.0, "small": 1000.0}
    uniform = PretrainConfig(steps=100, batch_size=10, seq_len=10)  # 10,000 tokens, half each
    assert passes(uniform, text) == pytest.approx({"big": 5000 / 9000, "small": 5.0})
    by_size = uniform.model_copy(update={"alpha": 1.0})
    assert passes(by_size, text) == pytest.approx({"big": 1.0, "small": 1.0})
    floored = by_size.model_copy(update={"epochs": 2.0, "min_steps": 50})  # 2 epochs = 200 steps > 50
    assert passes(floored, text) == pytest.approx({"big": 2.0, "small": 2.0})
    floored = by_size.model_copy(update={"epochs": 2.0, "min_steps": 1000})  # the floor: 10 passes
    assert passes(floored, text) == pytest.approx({"big": 10.0, "small": 10.0})


def test_plan_warns_above_the_passes_threshold(tmp_path):
    store = ArtifactStore(tmp_path)
    assert not [w for w in plan_study(load_spec("quick", "test"), store).warnings if "passes" in w]
    spec = load_spec("quick", "test", ["pretrain.steps=4000"])  # about 130 passes
    (warning,) = [w for w in plan_study(spec, store).warnings if "passes" in w]
    assert f"more than {PASSES_WARN} times" in warning and "2 pretrainings" in warning
