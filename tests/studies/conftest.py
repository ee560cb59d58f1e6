"""Shared fixture: a built-in study run at its test scale in a fresh workdir, once per test module."""
from __future__ import annotations

import pytest

from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.runner import run_study
from mbertlab.studies.spec import load_spec


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
