"""CLI: generate commands (thin: parse, call one library function, print)."""
from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""
