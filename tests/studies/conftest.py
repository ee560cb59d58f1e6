"""Shared fixtures: a built-in study run at its test scale in a fresh workdir, once per test module; the folder of
the papers' full text."""
from __future__ import annotations

from pathlib import Path

import pytest

from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.runner import run_study
from mbertlab.studies.spec import load_spec
from tests.conftest import SHARED_DATA


@pytest.fixture(scope="module")
def run_test_scale(tmp_path_factory):
    """Call with a study name; returns (spec, RunContext) after every stage of its test scale ran serially."""
    def run(name: str):
        tmp = tmp_path_factory.mktemp(name)
        spec = load_spec(name, "test")
        ctx = RunContext(ArtifactStore(tmp), ResultsDB(tmp / "results.db"), name)
        run_study(spec, ctx, jobs=1)
        return spec, ctx
    return run


@pytest.fixture(scope="session")
def papers_dir() -> Path:
    """../shared/papers beside the shared data; a failure, never a skip, when it is not there."""
    folder = SHARED_DATA.parent / "papers"
    if not folder.is_dir():
        pytest.fail(f"the papers' text not found at {folder} (set MBERTLAB_SHARED_DATA to ../shared/data)")
    return folder
