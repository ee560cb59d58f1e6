"""What every command module shares: the global options and small output helpers."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer


@dataclass
class CliState:
    workdir: Path
    debug: bool


def state(ctx: typer.Context) -> CliState:
    """The global options (`--workdir`, `--debug`), from any (sub)command's context."""
    root = ctx.find_root().obj
    return root if isinstance(root, CliState) else CliState(Path("mbertlab-work"), False)
