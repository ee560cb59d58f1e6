"""What every command module shares: the global options and small output helpers."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import typer
from rich.console import Console


@dataclass
class CliState:
    workdir: Path
    debug: bool


def state(ctx: typer.Context) -> CliState:
    """The global options (`--workdir`, `--debug`), from any (sub)command's context."""
    root = ctx.find_root().obj
    return root if isinstance(root, CliState) else CliState(Path("mbertlab-work"), False)


def plain_console(stderr: bool = False) -> Console:
    """A console that never reads Rich markup: printed labels, names and paths come from users and files,
    and `[/x]` in one of them would otherwise raise MarkupError (or `[red]` vanish from the output)."""
    return Console(stderr=stderr, markup=False)
