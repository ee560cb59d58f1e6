"""Learning-rate schedules as pure functions of the step (1-based)."""
from __future__ import annotations

import math


def lr_at(step: int, base: float, warmup: int, total: int, kind: str) -> float:
    warm = min(1.0, step / warmup) if warmup > 0 else 1.0
    if kind == "constant" or step <= warmup:
        return base * warm
    if kind == "linear":
        return base * max(0.0, (total - step) / max(1, total - warmup))
    if kind == "inverse_sqrt":
        return base * math.sqrt(max(1, warmup) / step)
    raise ValueError(f"unknown schedule {kind!r}")
