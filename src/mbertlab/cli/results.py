"""CLI: results — list or export the scores in results.db."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import plain_console, state


def register(app: typer.Typer) -> None:
    app.command("results")(results)


def results(
    ctx: typer.Context,
    study: Optional[str] = typer.Option(None, help="Only rows of this study."),
    task: Optional[str] = typer.Option(None, help="Only rows of this task."),
    metric: Optional[str] = typer.Option(None, help="Only rows with this metric."),
    where: List[str] = typer.Option([], help="Column filter COLUMN=VALUE (repeatable)."),
    csv: Optional[str] = typer.Option(None, "--csv", help="Write CSV to this file ('-' for standard output)."),
) -> None:
    """One row per score: list them as a table, or export CSV."""
    from rich.table import Table

    from mbertlab.errors import ConfigError
    from mbertlab.store.results import COLUMNS, open_results, write_csv

    filters = {k: v for k, v in (("study", study), ("task", task), ("metric", metric)) if v is not None}
    for item in where:
        key, sep, value = item.partition("=")
        if not sep or key not in COLUMNS:
            raise ConfigError(f"--where {item!r}: expected COLUMN=VALUE with a column among {', '.join(COLUMNS)}")
        filters[key] = int(value) if key == "seed" else value
    rows = open_results(state(ctx).workdir, existing=True).query(**filters)
    if csv is not None:
        if csv == "-":
            write_csv(rows, sys.stdout)
        else:
            with open(Path(csv), "w", newline="", encoding="utf-8") as f:
                write_csv(rows, f)
        return
    table = Table("study", "task", "mode", "train", "test", "split", "metric", "value", "seed", "model")
    for r in rows:
        table.add_row(r.study, r.task, r.mode, r.train_lang, r.test_lang, r.split, r.metric, f"{r.value:.4f}",
                      "" if r.seed is None else str(r.seed), r.model)
    plain_console().print(table)
