"""Pretraining, distillation (live teachers, the top-k cache, a student of the cache) and the balance measure
run on the device their config names: every model, batch and dev batch there (tests/simulated_device.py), and
meta.json says what ran. CUDA-only behaviour (bf16 autocast, exact resume with CUDA RNG states) is tested where
a GPU is present and reported as skipped elsewhere."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.loop import build_pretrain, pretrain_into
from mbertlab.runtime import processor_name
from mbertlab.store.artifacts import ArtifactStore, external
from tests.simulated_device import assert_ran_on_device, simulated_device

TINY = {"model": {"layers": 1, "hidden": 16, "heads": 2, "max_positions": 32}, "batch_size": 8, "seq_len": 16,
        "steps": 3, "checkpoint_every": 2, "warmup": 1, "eval_batches": 1}


def needs_cuda(test):
    """Runs on the GPU (tests/conftest.py keeps the others on the CPU), skipped without one."""
    return pytest.mark.cuda(pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")(test))


def run(shards: Path, out: Path, **keys) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    pretrain_into(PretrainConfig.model_validate({**TINY, **keys}), shards, out)
    return out


@pytest.fixture(scope="module")
def teachers(tmp_path_factory, pair_shards) -> dict[str, str]:
    root = tmp_path_factory.mktemp("device-teachers")
    return {"src": str(run(pair_shards, root / "a", seed=1)), "fake": str(run(pair_shards, root / "b", seed=2))}


def test_the_simulated_device_fails_a_tensor_left_on_the_cpu(monkeypatch):
    """The checker itself: a forgotten `.to(device)` fails, as it would on CUDA."""
    from mbertlab.runtime import resolve_device

    with simulated_device(monkeypatch) as sim:
        layer = torch.nn.Linear(4, 2).to(resolve_device("cuda"))
        layer(torch.ones(3, 4).to(resolve_device("cuda")))
        with pytest.raises(RuntimeError, match="same device"):
            layer(torch.ones(3, 4))
    assert len(sim.violations) == 1


@pytest.mark.parametrize("layout", [{}, {"layout": "pairs", "nsp": True}], ids=["stream", "pairs+nsp"])
def test_pretraining_runs_every_model_and_batch_on_the_configured_device(monkeypatch, tmp_path, pair_shards,
                                                                         layout):
    with simulated_device(monkeypatch) as sim:
        run(pair_shards, tmp_path, device="cuda", **layout)  # dev scores and checkpoints at steps 2 and 3
    assert_ran_on_device(sim)
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 4  # 2 evaluations x 2 languages


def test_distillation_teachers_cache_and_students_run_on_the_configured_device(monkeypatch, tmp_path, pair_shards,
                                                                                teachers):
    from mbertlab.pretrain.balance import teacher_dev_mrr
    from mbertlab.pretrain.teacher_cache import cache_teacher_topk_into

    student = {"objective": "distill", "teachers": teachers, "device": "cuda"}
    (tmp_path / "cache").mkdir()
    with simulated_device(monkeypatch) as sim:
        run(pair_shards, tmp_path / "live", **student)
        cache_teacher_topk_into(PretrainConfig.model_validate({**TINY, **student}), pair_shards, tmp_path / "cache",
                                k=5)
        run(pair_shards, tmp_path / "cached", **student, teacher_cache=str(tmp_path / "cache"))
        mrr = teacher_dev_mrr(PretrainConfig.model_validate({**TINY, **student}), pair_shards)
    assert_ran_on_device(sim)
    assert set(mrr) == {"src", "fake"}
    assert json.loads((tmp_path / "cache" / "meta.json").read_text())["device"] == "meta:1"


def test_meta_json_records_the_resolved_precision_device_and_processor(tmp_path, src_shards):
    store = ArtifactStore(tmp_path)
    shards = external(src_shards)
    artifact = build_pretrain(store, PretrainConfig.model_validate({**TINY, "device": "cpu", "precision": "fp32"}),
                              shards)
    meta = artifact.meta
    assert (meta["device"], meta["precision"], meta["processor"]) == ("cpu", "fp32", processor_name())
    assert "gpu" not in meta and not (artifact.path / "runtime.json").exists()
    auto = build_pretrain(store, PretrainConfig.model_validate({**TINY, "steps": 2}), shards).meta
    assert auto["precision"] in ("bf16", "fp32")  # resolved, never "auto"


def test_the_device_setting_is_not_part_of_the_artifact(tmp_path, src_shards):
    store, shards = ArtifactStore(tmp_path), external(src_shards)
    first = build_pretrain(store, PretrainConfig.model_validate({**TINY, "device": "cpu"}), shards)
    again = build_pretrain(store, PretrainConfig.model_validate({**TINY, "device": "auto"}), shards)
    assert again.path == first.path and not again.fresh  # the same artifact, reused
    assert "device" not in json.loads((first.path / "config.json").read_text())


@needs_cuda
def test_bf16_autocast_on_cuda():
    from mbertlab.pretrain.model import autocast_for
    from mbertlab.runtime import resolve_device

    device = resolve_device("cuda")
    layer = torch.nn.Linear(8, 8).to(device)
    with autocast_for(PretrainConfig(precision="bf16"), device)():
        assert layer(torch.ones(2, 8, device=device)).dtype == torch.bfloat16
    assert torch.backends.cuda.matmul.allow_tf32


@needs_cuda
def test_a_killed_gpu_run_resumes_to_the_same_weights(monkeypatch, tmp_path, src_shards):
    """Deterministic kernels (docs/devices.md gives the tolerance without them): a run stopped after its step-2
    checkpoint (as a kill would leave it) and resumed ends with the weights of an uninterrupted run."""
    from safetensors.torch import load_file

    import os

    assert os.environ.get("CUBLAS_WORKSPACE_CONFIG") in (":4096:8", ":16:8")  # exported by tests/conftest.py
    torch.use_deterministic_algorithms(True, warn_only=False)
    try:
        keys = {"device": "cuda", "precision": "fp32", "steps": 4, "checkpoint_every": 2,
                "model": {**TINY["model"], "dropout": 0.1}}  # dropout draws from the CUDA generator
        whole = run(src_shards, tmp_path / "whole", **keys)
        part = run(src_shards, tmp_path / "part", **{**keys, "steps": 2})
        shutil.rmtree(part / "model")
        resumed = run(src_shards, part, **keys)
    finally:
        torch.use_deterministic_algorithms(False)
    a = load_file(str(whole / "model" / "model.safetensors"))
    b = load_file(str(resumed / "model" / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)


STEADY = {"steps": 6, "checkpoint_every": 6, "log_every": 3, "accumulation": 2, "device": "cuda"}
LOGGED = [0, 0, 1, 0, 0]  # between steps k and k+1 (k = 1..5): one read after step 3, its logged loss


@pytest.mark.parametrize("layout", [{}, {"layout": "pairs", "nsp": True}], ids=["stream", "pairs+nsp"])
def test_a_pretraining_step_reads_nothing_back_from_the_device_but_the_logged_loss(monkeypatch, tmp_path,
                                                                                    pair_shards, layout):
    from tests.simulated_device import reads_between_steps

    with simulated_device(monkeypatch) as sim, reads_between_steps(sim) as reads:
        run(pair_shards, tmp_path, **STEADY, **layout)
    assert reads == LOGGED, sim.host_reads


def test_a_distillation_step_reads_nothing_back_from_the_device_but_the_logged_loss(monkeypatch, tmp_path,
                                                                                     pair_shards, teachers):
    """Live teachers over rows of two languages, and a student of the top-k cache."""
    from mbertlab.pretrain.teacher_cache import cache_teacher_topk_into
    from tests.simulated_device import reads_between_steps

    student = {**STEADY, "objective": "distill", "teachers": teachers, "mixing": "within_batch", "hard_weight": 0.5}
    (tmp_path / "cache").mkdir()
    cache_teacher_topk_into(PretrainConfig.model_validate({**TINY, **student, "device": "cpu"}), pair_shards,
                            tmp_path / "cache", k=5)
    with simulated_device(monkeypatch) as sim, reads_between_steps(sim) as live:
        run(pair_shards, tmp_path / "live", **student)
    with simulated_device(monkeypatch) as sim, reads_between_steps(sim) as cached:
        run(pair_shards, tmp_path / "cached", **student, teacher_cache=str(tmp_path / "cache"))
    assert (live, cached) == (LOGGED, LOGGED), sim.host_reads


def test_log_every_is_not_part_of_the_artifact():
    """How often the loss is read back changes no weight, so it changes no hash (as the device)."""
    assert PretrainConfig(log_every=7).canonical_json() == PretrainConfig().canonical_json()
    assert PretrainConfig(log_every=7).log_every == 7
