"""Generated languages: the embedded default data, so every path of mbertlab runs with no download."""
from __future__ import annotations

from pathlib import Path

from mbertlab.data.generate.build import generate_into, preset_config
from mbertlab.data.generate.config import GenerateConfig
from mbertlab.store.artifacts import Artifact, ArtifactStore

__all__ = ["GenerateConfig", "build_generated", "generate_into", "preset_config"]


def build_generated(config: GenerateConfig, store: ArtifactStore) -> Artifact:
    return store.build("generate", config, lambda out: generate_into(config, Path(out)))
