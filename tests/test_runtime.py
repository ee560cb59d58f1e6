"""The device and precision settings: the resolver, their reach through a study's jobs, and which hashes they
enter (device: none; a pinned precision: every one it reaches, since bf16 and fp32 give different numbers)."""
from __future__ import annotations

import pytest
import torch

from mbertlab.errors import ConfigError
from mbertlab.runtime import resolve_device


def test_cpu_and_auto_without_a_gpu_resolve_to_the_cpu():
    assert resolve_device("cpu") == torch.device("cpu")
    if not torch.cuda.is_available():
        assert resolve_device("auto") == torch.device("cpu")


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the message shown where no GPU is visible")
def test_cuda_without_a_gpu_is_a_one_line_config_error():
    with pytest.raises(ConfigError, match="needs a CUDA GPU"):
        resolve_device("cuda:0")


def test_a_bad_device_value_is_rejected_by_name():
    with pytest.raises(ConfigError, match="key 'device'"):
        resolve_device("gpu")
    from mbertlab.config import parse_config
    from mbertlab.transfer.config import TransferConfig

    with pytest.raises(ConfigError, match="key 'device'"):
        parse_config(TransferConfig, {"task": "upos", "train": [], "evaluate": [], "device": "gpu0"})


def test_a_spec_device_reaches_every_stage_that_runs_a_model_and_no_hash(tmp_path):
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.studies.kinds import job_hash
    from mbertlab.studies.runner import study_jobs
    from mbertlab.studies.spec import load_spec

    store = ArtifactStore(tmp_path)
    plain = study_jobs(load_spec("quick", "test"))
    placed = study_jobs(load_spec("quick", "test", ["device=cuda:1"]))
    devices = {j.kind: j.config.device for j in placed if "device" in type(j.config).model_fields}
    assert {"pretrain", "transfer"} <= set(devices) and set(devices.values()) == {"cuda:1"}
    assert [job_hash(j, store) for j in placed] == [job_hash(j, store) for j in plain]
    with pytest.raises(ConfigError, match="key 'device'"):
        load_spec("quick", "test", ["device=tpu"])


def _precisions(config) -> list[str]:
    """Every `precision` in a config tree (its own and its sub-configs')."""
    from mbertlab.config import Config

    found = [config.precision] if "precision" in type(config).model_fields else []
    for name in type(config).model_fields:
        if isinstance(sub := getattr(config, name), Config):
            found += _precisions(sub)
    return found


@pytest.mark.parametrize("study, scale", [(study, scale) for study in ["quick", "k2020", "wd2019", "wd2020",
                                                                         "liu2020", "lms2023"]
                                          for scale in ("lab", "test") if (study, scale) != ("quick", "lab")])
def test_lab_and_test_scales_pin_the_precision_of_every_stage_that_runs_a_model(study, scale):
    """quick's lab scale alone is left at auto (bf16 keeps it within 10 minutes: test_k2020 checks it is)."""
    from mbertlab.studies.runner import study_jobs
    from mbertlab.studies.spec import load_spec

    spec = load_spec(study, scale)
    assert spec.precision == "fp32"
    found = {p for job in study_jobs(spec) for p in _precisions(job.config)}
    assert found and "auto" not in found, (study, scale, found)


def test_a_pinned_precision_enters_the_hash_of_every_job_it_reaches(tmp_path):
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.studies.kinds import job_hash
    from mbertlab.studies.runner import study_jobs
    from mbertlab.studies.spec import load_spec

    store = ArtifactStore(tmp_path)
    pinned = study_jobs(load_spec("quick", "test"))
    auto = study_jobs(load_spec("quick", "test", ["precision=auto"]))
    for a, b in zip(pinned, auto):
        assert a.kind == b.kind
        reached = bool(_precisions(a.config)) or any(_precisions(i.config) for i in a.inputs)
        if a.kind in ("pretrain", "transfer"):
            assert reached
        if not reached and not a.inputs:
            assert job_hash(a, store) == job_hash(b, store)
        if a.kind in ("pretrain", "transfer"):
            assert job_hash(a, store) != job_hash(b, store), a.kind
    with pytest.raises(ConfigError, match="key 'precision'"):
        load_spec("quick", "test", ["precision=fp16"])


def test_a_transfer_config_left_at_auto_keeps_the_hash_it_had_before_precision_existed():
    from mbertlab.config import parse_config
    from mbertlab.transfer.config import TransferConfig

    files = {"task": "upos", "train": [{"lang": "en", "path": "x"}], "evaluate": [{"lang": "en", "path": "x"}]}
    assert "precision" not in parse_config(TransferConfig, files).model_dump(mode="json")
    assert parse_config(TransferConfig, {**files, "precision": "fp32"}).model_dump(mode="json")["precision"] == "fp32"


def test_the_features_run_the_encoder_in_the_precision_they_are_given():
    from transformers import BertConfig, BertModel

    from mbertlab.transfer.encoder import Features

    torch.manual_seed(0)
    encoder = BertModel(BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                   intermediate_size=64), add_pooling_layer=False).eval()
    ids, mask = torch.randint(0, 50, (2, 7)), torch.ones(2, 7, dtype=torch.long)
    with torch.no_grad():
        direct = encoder(input_ids=ids, attention_mask=mask).last_hidden_state
        fp32 = Features(encoder, "probe", -1, precision="fp32")(ids, mask)
        bf16 = Features(encoder, "probe", -1, precision="bf16")(ids, mask)
    assert torch.equal(fp32, direct)
    assert not torch.equal(bf16, direct) and torch.allclose(bf16, direct, atol=0.1)


def test_placing_a_plan_keeps_every_cells_own_tags():
    """A job several cells share is placed once but keeps each cell's tags (report tables select by them)."""
    from mbertlab.studies.designs import get_design
    from mbertlab.studies.runner import placed_plan
    from mbertlab.studies.spec import load_spec

    spec = load_spec("k2020", "test", ["device=cpu"])
    raw, placed = get_design("k2020").plan(spec), placed_plan(spec)
    assert len(raw) == len(placed) > len(set(raw))  # the plan has shared jobs
    assert [(j.kind, j.tags, j.label) for j in raw] == [(j.kind, j.tags, j.label) for j in placed]
    assert {j.config.device for j in placed if "device" in type(j.config).model_fields} == {"cpu"}


@pytest.mark.parametrize("capability, avx512_bf16, native", [("AVX2", False, False), ("AVX512", False, False),
                                                             ("AVX512", True, True), ("AMX", False, True)])
def test_auto_is_bf16_only_on_a_cpu_with_native_bf16(monkeypatch, capability, avx512_bf16, native):
    """Plain AVX512 (Skylake-X, Cascade Lake) has no bf16 instructions: auto stays fp32 there."""
    from mbertlab.runtime import CPU_BF16_ENV, bf16_supported, resolve_precision

    monkeypatch.delenv(CPU_BF16_ENV, raising=False)  # `make test` reruns some tests with it set
    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    assert bf16_supported() is native
    assert resolve_precision("auto", torch.device("cpu")) == ("bf16" if native else "fp32")
    assert resolve_precision("fp32", torch.device("cpu")) == "fp32"


@pytest.mark.parametrize("capability, avx512_bf16", [("AVX2", False), ("AMX", True)])
@pytest.mark.parametrize("forced", ["0", "1"])
def test_the_environment_variable_forces_the_cpus_answer(monkeypatch, capability, avx512_bf16, forced):
    """MBERTLAB_CPU_BF16 makes either kind of CPU resolve `auto` as the other kind does, down to the autocast:
    a matmul under `auto` comes out in bf16 exactly when it is 1."""
    from mbertlab.runtime import autocast_factory, resolve_precision

    monkeypatch.setattr(torch.backends.cpu, "get_cpu_capability", lambda: capability)
    monkeypatch.setattr(torch.cpu, "_is_avx512_bf16_supported", lambda: avx512_bf16)
    monkeypatch.setenv("MBERTLAB_CPU_BF16", forced)
    cpu = torch.device("cpu")
    precision = resolve_precision("auto", cpu)
    assert precision == {"0": "fp32", "1": "bf16"}[forced]
    with autocast_factory(cpu, precision)():
        out = torch.ones(2, 8) @ torch.ones(8, 8)
    assert out.dtype == {"0": torch.float32, "1": torch.bfloat16}[forced]
    assert resolve_precision("fp32", cpu) == "fp32"  # a pinned precision is not touched


def test_a_bad_forced_answer_is_a_one_line_config_error(monkeypatch):
    from mbertlab.runtime import resolve_precision

    monkeypatch.setenv("MBERTLAB_CPU_BF16", "yes")
    with pytest.raises(ConfigError, match="MBERTLAB_CPU_BF16: expected 0 or 1, got 'yes'"):
        resolve_precision("auto", torch.device("cpu"))
