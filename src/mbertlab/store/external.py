"""Files made outside the store, standing in for artifacts: a Hugging Face encoder directory (e.g. mBERT) read
as a pretraining artifact (`<artifact>/model`), and a user's real task files (XNLI, MLDoc, NER, UD, text) read
as data under the generated layout's names (`store.layout`).

Neither is copied: the artifact holds symlinks. Each config records a fingerprint of what it links (the
encoder directory's `external` hash; each file's size and modification time) when the study is planned, so
a changed file is a different artifact, `job_hash` still predicts every directory without building
anything, and the build refuses anything that changed since.
"""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import external


class HfEncoderConfig(Config):
    path: str = Field(description="Absolute path of the Hugging Face encoder directory.")
    fingerprint: str = Field(description="Hash of the directory's files when the study was planned.")


class LinkedFile(Config):
    dest: str = Field(description="Path inside the artifact.")
    path: str = Field(description="Absolute path of the user's file.")
    size: int
    mtime_ns: int


class TaskFilesConfig(Config):
    files: list[LinkedFile] = Field(min_length=1)


def encoder_layers(directory: str | Path) -> int:
    """num_hidden_layers of an HF encoder directory (read from config.json, without loading weights)."""
    path = Path(directory) / "config.json"
    if not path.is_file():
        raise ConfigError(f"{directory}: not a Hugging Face encoder directory (no config.json)")
    layers = json.loads(path.read_text(encoding="utf-8")).get("num_hidden_layers")
    if not isinstance(layers, int) or layers < 1:
        raise ConfigError(f"{path}: key 'num_hidden_layers': expected a positive integer, got {layers!r}")
    return layers


def hf_encoder_config(directory: str | Path, key: str) -> HfEncoderConfig:
    """The encoder directory fingerprinted now; `key` names the spec key the path came from, for the error."""
    root = Path(directory).expanduser()
    if not root.is_dir():
        raise ConfigError(f"key '{key}': no such encoder directory {root}")
    encoder_layers(root)
    root = root.resolve()
    return HfEncoderConfig(path=str(root), fingerprint=external(root).hash)


def hf_encoder_into(config: HfEncoderConfig, out: Path) -> None:
    now = external(config.path).hash
    if now != config.fingerprint:
        raise ConfigError(f"{config.path}: the encoder directory changed since the study was planned; plan again")
    (out / "model").symlink_to(config.path, target_is_directory=True)
    info = {"path": config.path, "num_hidden_layers": encoder_layers(config.path)}
    (out / "encoder.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def linked_file(dest: str, path: Path, key: str) -> LinkedFile:
    """`key` names the spec key the path came from, for the error when the file is missing."""
    if not path.is_file():
        raise ConfigError(f"key '{key}': no such file {path}")
    stat = path.resolve().stat()
    return LinkedFile(dest=dest, path=str(path.resolve()), size=stat.st_size, mtime_ns=stat.st_mtime_ns)


def task_files_config(files: list[LinkedFile]) -> TaskFilesConfig:
    """The files in a fixed order (so the hash does not depend on the spec's), each name used once."""
    dests = [f.dest for f in files]
    if len(set(dests)) != len(dests):
        twice = sorted({d for d in dests if dests.count(d) > 1})
        raise ConfigError(f"task files: two files map to the same name ({twice})")
    return TaskFilesConfig(files=sorted(files, key=lambda f: f.dest))


def task_files_into(config: TaskFilesConfig, out: Path) -> None:
    for f in config.files:
        stat = Path(f.path).stat()
        if (stat.st_size, stat.st_mtime_ns) != (f.size, f.mtime_ns):
            raise ConfigError(f"{f.path}: the file changed since the study was planned; plan again")
        dest = out / f.dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(f.path)
