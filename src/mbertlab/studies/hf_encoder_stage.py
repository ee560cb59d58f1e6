"""Stage kind `hf_encoder`: an existing Hugging Face encoder directory (e.g. mBERT) standing in for a
pretraining artifact, so every downstream stage (transfer, langid, overlap) reads it as `<artifact>/model`.

The job's config carries the directory's fingerprint (`store.artifacts.external`: path, names, sizes and
modification times of its files), taken when the study is planned, so a changed or different encoder is a
different artifact and `job_hash` still predicts every directory without building anything. The artifact
holds a symlink `model -> <directory>` and the encoder's shape, never a copy of the weights.
"""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import Artifact, external
from mbertlab.studies.jobs import Job, RunContext


class HfEncoderConfig(Config):
    path: str = Field(description="Absolute path of the Hugging Face encoder directory.")
    fingerprint: str = Field(description="Hash of the directory's files when the study was planned.")


def encoder_layers(directory: str | Path) -> int:
    """num_hidden_layers of an HF encoder directory (read from config.json, without loading weights)."""
    path = Path(directory) / "config.json"
    if not path.is_file():
        raise ConfigError(f"{directory}: not a Hugging Face encoder directory (no config.json)")
    layers = json.loads(path.read_text(encoding="utf-8")).get("num_hidden_layers")
    if not isinstance(layers, int) or layers < 1:
        raise ConfigError(f"{path}: key 'num_hidden_layers': expected a positive integer, got {layers!r}")
    return layers


def hf_encoder_job(directory: str | Path, key: str, tags=()) -> Job:
    """`key` names the spec key the path came from, for the error when the directory is missing."""
    root = Path(directory).expanduser()
    if not root.is_dir():
        raise ConfigError(f"key '{key}': no such encoder directory {root}")
    encoder_layers(root)
    root = root.resolve()
    config = HfEncoderConfig(path=str(root), fingerprint=external(root).hash)
    return Job("hf_encoder", config, (), label=f"hf encoder {root.name}", tags=tuple(tags))


def hf_encoder_into(config: HfEncoderConfig, out: Path) -> None:
    now = external(config.path).hash
    if now != config.fingerprint:
        raise ConfigError(f"{config.path}: the encoder directory changed since the study was planned; plan again")
    (out / "model").symlink_to(config.path, target_is_directory=True)
    info = {"path": config.path, "num_hidden_layers": encoder_layers(config.path)}
    (out / "encoder.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def _build_hf_encoder(config: HfEncoderConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("hf_encoder", config, lambda out: hf_encoder_into(config, Path(out)), inputs)

