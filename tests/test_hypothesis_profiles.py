"""The hypothesis profiles of tests/conftest.py: `ci` draws the same cases on every run; `explore` draws 20x more."""
from __future__ import annotations

import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import examples


def _draws() -> list[int]:
    seen: list[int] = []

    @settings(max_examples=50)
    @given(st.integers())
    def draw(x):
        seen.append(x)

    draw()
    return seen


@pytest.mark.skipif(os.environ.get("HYPOTHESIS_PROFILE", "ci") != "ci", reason="checks the default profile")
def test_the_ci_profile_draws_the_same_cases_every_run_and_keeps_no_database():
    assert settings.default.derandomize and settings.default.database is None and settings.default.print_blob
    first = _draws()
    assert len(set(first)) > 10 and _draws() == first
    assert examples(1000) == 1000


def test_the_explore_profile_draws_twenty_times_as_many_new_cases():
    settings.load_profile("explore")
    try:
        assert not settings.default.derandomize and settings.default.max_examples == 2000
        assert examples(1000) == 20000
        assert _draws() != _draws()  # fresh random cases each run
    finally:
        settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
