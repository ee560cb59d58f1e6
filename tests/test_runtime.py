"""The device setting: its resolver, its reach through a study's jobs, and its absence from every hash."""
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
