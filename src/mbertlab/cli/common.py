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


def device_option():
    """`--device` of every command that runs a model (the configs' `device` key)."""
    return typer.Option(None, "--device", help="Where models run: auto (the GPU when there is one), cpu, cuda "
                        "(this rank's GPU) or cuda:N. Not part of any artifact's hash.")


def device_overrides(overrides: list[str], device: str | None) -> list[str]:
    """`--set` overrides plus `device=...` when `--device` was given."""
    return [*overrides, f"device={device}"] if device else list(overrides)


def plain_console(stderr: bool = False) -> Console:
    """A console that never reads Rich markup: printed labels, names and paths come from users and files,
    and `[/x]` in one of them would otherwise raise MarkupError (or `[red]` vanish from the output)."""
    return Console(stderr=stderr, markup=False)
