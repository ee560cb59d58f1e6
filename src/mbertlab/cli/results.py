"""CLI: results — list the scores in results.db (or write them as CSV); `results export` / `results merge` move a
study's rows with their provenance between workdirs (machines)."""
from __future__ import annotations

import sys
from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import plain_console, state


results_app = typer.Typer(help="One row per score: list them as a table, or export CSV; `export` / `merge` move a "
                          "study's rows between machines.")


def register(app: typer.Typer) -> None:
    app.add_typer(results_app, name="results")


@results_app.callback(invoke_without_command=True)
def results(
    ctx: typer.Context,
    study: Optional[str] = typer.Option(None, help="Only rows of this study."),
    task: Optional[str] = typer.Option(None, help="Only rows of this task."),
    metric: Optional[str] = typer.Option(None, help="Only rows with this metric."),
    where: List[str] = typer.Option([], help="Column filter COLUMN=VALUE (repeatable)."),
    csv: Optional[str] = typer.Option(None, "--csv", help="Write CSV to this file ('-' for standard output)."),
) -> None:
    """One row per score: list them as a table, or export CSV."""
    if ctx.invoked_subcommand is not None:
        return
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


@results_app.command("export")
def export_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    out: Path = typer.Argument(..., help="An empty folder for the export."),
    scale: Optional[str] = typer.Option(None, help="The study's scale, as it was run."),
    set_: List[str] = typer.Option([], "--set", help="The --set overrides it was run with."),
    slice_name: Optional[str] = typer.Option(None, "--slice", help="Only this slice's stages (default: every "
                                             "done stage of the study)."),
) -> None:
    """Write the study's done stages (less their weights) and rows, each with its provenance (stage hash,
    machine, GPU, commit), to OUT for `results merge` on another workdir."""
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.studies.exchange import export_results
    from mbertlab.studies.jobs import RunContext
    from mbertlab.studies.spec import load_spec

    workdir = state(ctx).workdir
    spec = load_spec(name, scale, set_)
    rows, stages = export_results(spec, RunContext(ArtifactStore(workdir), open_results(workdir), spec.name), out,
                                  slice_name)
    plain_console().print(f"{spec.name} ({spec.scale}): exported {rows} rows of {stages} stages to {out}")


@results_app.command("record")
def record_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    out: Optional[Path] = typer.Argument(None, help="Folder for the record (default: the built-in paper's "
                                         "src/mbertlab/papers/<key>/runs/<scale>)."),
    scale: Optional[str] = typer.Option(None, help="The study's scale, as it was run."),
    partial: bool = typer.Option(False, help="Record the stages built so far (slices merged one by one); the "
                                 "record says how many and which slices are whole."),
) -> None:
    """Write a whole run's record, small and text, to commit beside its paper: its rows, what its checks read
    from the artifacts, and its time, machine and precision (papers/records.py); `study report --results`
    renders from it."""
    from mbertlab.papers.records import record_run, run_line, runs_folder
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.studies.jobs import RunContext
    from mbertlab.studies.spec import load_spec

    workdir = state(ctx).workdir
    spec = load_spec(name, scale)
    out = out or runs_folder(spec.name, spec.scale)
    run = record_run(spec, RunContext(ArtifactStore(workdir), open_results(workdir, existing=True), spec.name), out,
                     partial)
    plain_console().print(f"recorded {run['rows']} rows to {out}: {run_line(run)}")


@results_app.command("merge")
def merge_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    exports: List[Path] = typer.Argument(..., help="Export folders (`results export`)."),
    scale: Optional[str] = typer.Option(None, help="The study's scale, as it was run."),
    set_: List[str] = typer.Option([], "--set", help="The --set overrides it was run with."),
) -> None:
    """Add exports to this workdir: `study report` and the scorecard then read their rows as if built here.
    An export whose stage hashes are not this spec's (another spec version) is refused whole."""
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.studies.exchange import merge_results
    from mbertlab.studies.jobs import RunContext
    from mbertlab.studies.spec import load_spec

    workdir = state(ctx).workdir
    spec = load_spec(name, scale, set_)
    rows, stages = merge_results(spec, RunContext(ArtifactStore(workdir), open_results(workdir), spec.name),
                                 list(exports))
    plain_console().print(f"{spec.name} ({spec.scale}): merged {rows} rows and {stages} new stages from "
                          f"{len(exports)} exports into {workdir}")
