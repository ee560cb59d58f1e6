from __future__ import annotations

from pathlib import Path

import pytest

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.tokenizers.shards import ShardsConfig, write_shards_into
from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into
from tests.conftest import NO_TASKS


def make_shards(root: Path, languages: list[str], train_sentences: int = 3000, markers: bool = False) -> Path:
    gen = root / "gen"
    if not gen.exists():
        generate_into(preset_config("quick", 0, {"sentences": {"train": train_sentences, "dev": 200, "test": 10},
                                                   "tasks": NO_TASKS}), gen)
    tok, shards = root / "tok", root / "shards"
    tok.mkdir(exist_ok=True)
    shards.mkdir(exist_ok=True)
    files = {l: gen / l / "text" / "train.txt" for l in languages}
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=languages, markers=markers),
                         files, tok)
    texts = {l: {s: gen / l / "text" / f"{s}.txt" for s in ("train", "dev")} for l in languages}
    write_shards_into(ShardsConfig(languages=languages), tok, texts, shards)
    return shards


@pytest.fixture(scope="session")
def src_shards(tmp_path_factory) -> Path:
    return make_shards(tmp_path_factory.mktemp("src"), ["src"])


@pytest.fixture(scope="session")
def pair_shards(tmp_path_factory) -> Path:
    return make_shards(tmp_path_factory.mktemp("pair"), ["src", "fake"])


@pytest.fixture(scope="session")
def marker_shards(tmp_path_factory) -> Path:
    return make_shards(tmp_path_factory.mktemp("markers"), ["src", "fake"], train_sentences=800, markers=True)


@pytest.fixture(scope="session")
def shared_vocabulary_shards(tmp_path_factory) -> Path:
    """src and `same` (half of the word forms shared); the generated data is in the parent's gen/."""
    return make_shards(tmp_path_factory.mktemp("same"), ["src", "same"])
