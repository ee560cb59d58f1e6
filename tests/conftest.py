from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("MBERTLAB_SHARED_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """`../shared/data`: real public data. Tests that use it say so by taking this fixture."""
    if not SHARED_DATA.is_dir():
        pytest.fail(f"shared data not found at {SHARED_DATA} (set MBERTLAB_SHARED_DATA)")
    return SHARED_DATA


@pytest.fixture(autouse=True, scope="session")
def _torch_threads():
    """Tests run on 2 cores; keep torch from oversubscribing them when it is imported."""
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
