from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# cuBLAS's deterministic mode is read when cuBLAS starts, so it is set before any test touches a GPU (a test that
# set it itself would find it already read); on the CPU it changes nothing.
os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("MBERTLAB_SHARED_DATA", REPO.parent / "shared" / "data"))
# Generated data for tests that read no XNLI or MLDoc: the default task sets (9,000 NLI pairs and 3,500 documents a
# language, sized for the lab's test noise) took 43 of the 44 s of generating the quick preset at 200 sentences.
NO_TASKS = {"nli": {"train": 3, "dev": 3, "test": 3}, "mldoc": {"train": 4, "dev": 4, "test": 4}}

# Hypothesis: `ci` (the default) draws the same cases on every run, so a test passes or fails by the code, not by
# chance; `explore` (HYPOTHESIS_PROFILE=explore, before a release) draws 20x as many new ones. docs/reliability.md
settings.register_profile("ci", derandomize=True, database=None, print_blob=True)
# explore's parent is hypothesis's own default, not the profile loaded now (hypothesis loads a derandomized one of
# its own where the CI variable is set)
settings.register_profile("explore", parent=settings.get_profile("default"), derandomize=False,
                          max_examples=20 * settings.get_profile("default").max_examples, database=None,
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


def examples(n: int) -> int:
    """A test's own number of hypothesis cases, scaled as the profile scales the default (20x under explore)."""
    return n * settings.default.max_examples // settings.get_profile("default").max_examples


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data`: real public data. Tests that use it say so by taking this fixture."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data not found at {SHARED_DATA} (set MBERTLAB_SHARED_DATA)")
    return SHARED_DATA


def pytest_configure(config):
    """Under pytest-xdist (`make test` runs one worker per core) each worker gets its share of the cores, and so
    do the stages and CLI subprocesses it starts (they read MBERTLAB_THREADS): two workers of two threads each on
    two cores measured 13x slower optimiser steps than one thread each."""
    workers = os.environ.get("PYTEST_XDIST_WORKER_COUNT")
    if workers and "MBERTLAB_THREADS" not in os.environ:
        from mbertlab.runtime import cpu_count

        os.environ["MBERTLAB_THREADS"] = str(max(1, cpu_count() // int(workers)))
    config.addinivalue_line("markers", "cuda: runs on a CUDA GPU (every other test is kept on the CPU)")


@pytest.fixture(autouse=True)
def _cpu_unless_marked_cuda(request, monkeypatch):
    """On a GPU machine `device: auto` would send the CPU suite to the GPU, where its bitwise CPU results cannot
    hold: tests not marked `cuda` see no GPU, in this process and in the processes they start."""
    if request.node.get_closest_marker("cuda"):
        return
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    try:
        import torch
    except ImportError:
        return
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)


@pytest.fixture(autouse=True, scope="session")
def _torch_threads():
    """Tests run on 2 cores; keep torch from oversubscribing them when it is imported."""
    try:
        import torch
    except ImportError:
        return
    from mbertlab.runtime import default_threads

    torch.set_num_threads(max(1, min(2, default_threads())))


def local_encoder(out: Path, languages, vocab_size: int, layers: int = 2, hidden: int = 32, heads: int = 2) -> Path:
    """A random BERT saved as a Hugging Face directory stands in for a released encoder such as mBERT: its
    WordPiece vocabulary learned from the shared raw text of `languages`, no file of ours beside the weights."""
    from transformers import AutoTokenizer

    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    tok = out.parent / f"{out.name}-tokenizer"
    tok.mkdir(parents=True)
    train_tokenizer_into(TokenizerConfig(kind="wordpiece", vocab_size=vocab_size, languages=list(languages)),
                         {l: SHARED_DATA / "raw_text" / f"{l}.txt" for l in languages}, tok)
    tokenizer = AutoTokenizer.from_pretrained(tok)
    new_model(ModelShape(layers=layers, hidden=hidden, heads=heads), len(tokenizer)).save_pretrained(out)
    tokenizer.save_pretrained(out)
    return out
