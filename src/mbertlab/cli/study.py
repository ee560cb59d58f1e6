"""CLI: study list | validate | plan | status | run | report | compare."""
from __future__ import annotations

import signal
from pathlib import Path

import typer
from rich.table import Table

from mbertlab.cli.common import device_option, device_overrides, plain_console, state
from mbertlab.errors import ConfigError

study_app = typer.Typer(help="Declarative studies: validate, plan (cost before running), run (resumable, locally "
                        "or on SLURM), status, report, compare.", no_args_is_help=True)
console = plain_console()

SCALE_HELP = ("Scale: test (seconds), lab (minutes on 2 CPU cores), gpu (at most an hour on one GPU), paper (GPUs); "
              "one the spec does not define is an error.")
SET_HELP = "Override a spec key, e.g. --set seeds=[0] (repeatable)."


def register(app: typer.Typer) -> None:
    app.add_typer(study_app, name="study")


def _spec(name: str, scale: str | None, overrides: list[str]):
    from mbertlab.studies.spec import load_spec

    return load_spec(name, scale, overrides)


@study_app.command("list")
def list_studies() -> None:
    """List the built-in study specs with a one-line description."""
    from mbertlab.studies.spec import builtin_specs, load_spec

    table = Table("study", "design", "description")
    for name, path in sorted(builtin_specs().items()):
        spec = load_spec(path)
        table.add_row(name, spec.design, one_line(spec.description))
    console.print(table)


def one_line(description: str) -> str:
    """The description's lead: its text before the first ': ' (the rest is in the spec file)."""
    lines = description.strip().splitlines()
    return lines[0].split(": ")[0] if lines else ""


@study_app.command("validate")
def validate(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    scale: str | None = typer.Option(None, help=SCALE_HELP),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
) -> None:
    """Check a spec (keys, languages, files) and the configs of every stage, building nothing; then warn where
    its intent cannot hold (`study plan`'s warnings)."""
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.studies.executors import parse_resources
    from mbertlab.studies.plan import plan_study
    from mbertlab.studies.runner import spec_section, study_jobs
    from mbertlab.studies.scorecard import parse_findings

    spec = _spec(name, scale, set_)
    jobs = study_jobs(spec)
    findings = parse_findings(spec_section(spec, "findings"), spec.source)
    parse_resources(spec_section(spec, "resources"), spec.source)
    console.print(f"{spec.name} ({spec.scale}): valid, {len(jobs)} stage jobs, {len(findings)} findings")
    for warning in plan_study(spec, ArtifactStore(state(ctx).workdir), set_).warnings:
        console.print(f"WARNING: {warning}")


@study_app.command("plan")
def plan(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    scale: str | None = typer.Option(None, help=SCALE_HELP),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print the plan as JSON (for scripts)."),
    slices: bool = typer.Option(False, "--slices", help="Also each slice (`study run --slice NAME`) with its "
                                "estimated GPU wall time against the one-run slot."),
) -> None:
    """What a run would build and cost, building nothing: stages by kind with what exists already, each
    pretraining's shape, parameters, tokens, passes over each language's text, device-hours and disk, the
    spec's warnings, and with --slices the slices and their minutes."""
    import json

    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.studies.plan import plan_study

    spec = _spec(name, scale, set_)
    result = plan_study(spec, ArtifactStore(state(ctx).workdir), set_, slices=slices)
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=1))
        return
    print_plan(result)


def print_plan(result) -> None:
    """The plan as two tables (stage kinds, pretrainings), its totals, the model's constants and warnings."""
    kinds = Table("kind", "jobs", "done", "partial", "missing", "tokens", "GPU", "CPU", "disk")
    for k in result.kinds:
        estimated = k.jobs - k.unestimated
        cost = (f"{k.tokens:.3g}" if k.tokens else "", duration(k.gpu_hours), duration(k.cpu_hours),
                size(k.disk_bytes) if k.disk_bytes else "") if estimated else ("", "", "", "")
        if estimated and k.unestimated:
            cost = (cost[0], f"{cost[1]} ({estimated} jobs)", f"{cost[2]} ({estimated} jobs)", cost[3])
        kinds.add_row(k.kind, str(k.jobs), str(k.done), str(k.partial), str(k.missing), *cost)
    console.print(kinds)
    runs = Table("pretraining", "state", "shape", "vocab", "params", "tokens", "passes", "GPU", "CPU")
    for p in result.pretrains:
        runs.add_row(p.label, p.state, f"{p.layers}x{p.hidden}/{p.heads}", f"{p.vocab:,}",
                     f"{p.parameters / 1e6:.2f}M", f"{p.tokens:.3g}", passes_text(p.passes), duration(p.gpu_hours),
                     duration(p.cpu_hours))
    if result.pretrains:
        console.print(runs)
        sources = sorted({p.vocab_from for p in result.pretrains})
        console.print("vocabulary from: " + "; ".join(sources))
    model = result.model
    unestimated = ", ".join(k.kind for k in result.kinds if k.unestimated)
    console.print(f"{result.study} ({result.scale}): ~{duration(result.gpu_hours)} of stage time on one "
                  f"{model['gpu']} at its measured {model['gpu_mfu']:.1%} MFU and launch floor, "
                  f"~{duration(result.gpu_wall_hours)} of wall time with {model['gpu_jobs']} jobs sharing it; "
                  f"~{duration(sum(k.cpu_hours for k in result.kinds))} on {model['cpu']}; not estimated: "
                  f"{unestimated or 'none'}. Shapes: layers x hidden / heads.")
    for warning in result.warnings:
        console.print(f"WARNING: {warning}")
    if result.slices:
        print_slices(result)


def print_slices(result) -> None:
    """Each slice with its jobs and GPU minutes, and the jobs built only after merging."""
    from mbertlab.studies.slices import SLOT_MINUTES

    table = Table("slice", "jobs", "missing", "pretrainings", "GPU wall", "fits")
    for s in result.slices:
        table.add_row(s.name, str(s.jobs), str(s.missing), str(s.pretrains), f"{s.gpu_wall_minutes:.1f} min",
                      "yes" if s.gpu_wall_minutes <= SLOT_MINUTES else "NO")
    console.print(table)
    worst = max(s.gpu_wall_minutes for s in result.slices)
    console.print(f"{len(result.slices)} slices, the longest ~{worst:.1f} min of GPU wall time (slot: "
                  f"{SLOT_MINUTES:g} min on one H100 by the plan's rates; data, tokenizers and shards not estimated)")
    if result.after_merge:
        console.print(f"after merging: {len(result.after_merge)} jobs read several slices "
                      f"({', '.join(result.after_merge[:3])}{', ...' if len(result.after_merge) > 3 else ''})")


def passes_text(passes: dict[str, float]) -> str:
    """Passes over each language's text, e.g. 'src 14, tgt 15' ('?' where the text's size is not known)."""
    return ", ".join(f"{lang} {n:,.0f}" if n >= 10 else f"{lang} {n:.2g}" for lang, n in passes.items()) or "?"


def duration(hours: float) -> str:
    if hours >= 48:
        return f"{hours / 24:,.0f} d"
    return f"{hours:.1f} h" if hours >= 1 else f"{hours * 60:.1f} min" if hours >= 1 / 60 else f"{hours * 3600:.1f} s"


def size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if n < 1000 or unit == "TB":
            return f"{n:.3g} {unit}"
        n /= 1000
    return ""


@study_app.command("status")
def status(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    scale: str | None = typer.Option(None, help=SCALE_HELP),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
) -> None:
    """Which stage artifacts exist (done), were interrupted (partial) or are missing."""
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.studies.runner import study_status

    spec = _spec(name, scale, set_)
    table = Table("stage", "job", "hash", "state")
    counts: dict[str, int] = {}
    for st in study_status(spec, ArtifactStore(state(ctx).workdir)):
        counts[st.state] = counts.get(st.state, 0) + 1
        table.add_row(st.stage, st.job.label, st.hash, st.state)
    console.print(table)
    console.print(", ".join(f"{n} {s}" for s, n in sorted(counts.items())))


def _terminated(signum, frame) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@study_app.command("run")
def run(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    scale: str | None = typer.Option(None, help=SCALE_HELP),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
    report: bool = typer.Option(True, help="Render the report when done (local executor)."),
    jobs: int = typer.Option(0, "--jobs", "-j", help="local: parallel worker processes, each with its share of "
                             "the cores (0: one per core); slurm: most array tasks running at once (0: no cap)."),
    executor: str = typer.Option("local", help="local (this machine), slurm (submit every missing stage as SLURM "
                                 "jobs through submitit and return; rerun to resubmit failures) or submitit-local "
                                 "(the SLURM tasks as local subprocesses, to try a resources setup)."),
    device: str | None = device_option(),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress: no bars on a terminal, no per-stage or "
                               "heartbeat lines (MBERTLAB_HEARTBEAT_S, default 60 s) when stderr is a log."),
    slice_name: str | None = typer.Option(None, "--slice", help="Build only this slice (a seed, or a group of "
                                          "conditions at a seed: `study plan --slices` lists them) with its inputs; "
                                          "no report (export its results, merge them, report the merged workdir)."),
) -> None:
    """Build every missing stage of the study (rerun after a kill resumes), then render its report."""
    from mbertlab.progress import set_quiet
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.studies.executors import execute
    from mbertlab.studies.jobs import RunContext
    from mbertlab.studies.report import write_report

    if jobs < 0:  # a negative count would run as no cap (slurm) or as one worker per core (local), unasked
        raise ConfigError(f"--jobs {jobs}: expected 0 (one worker per core; no cap on slurm) or a positive count")
    workdir = state(ctx).workdir
    set_quiet(quiet)
    signal.signal(signal.SIGTERM, _terminated)  # a killed run still logs its part in runs.jsonl
    spec = _spec(name, scale, device_overrides(set_, device))
    context = RunContext(ArtifactStore(workdir), open_results(workdir), spec.name)
    console.print(f"{spec.name} ({spec.scale}): {execute(spec, context, executor, jobs, slice_name)}")
    if report and executor != "slurm" and slice_name is None:
        md, html = write_report(spec, context)
        console.print(f"report: {html}\n        {md}")


@study_app.command("report")
def report_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Built-in study name or path to a spec YAML."),
    scale: str | None = typer.Option(None, help=SCALE_HELP),
    set_: list[str] = typer.Option([], "--set", help=SET_HELP),
    out: Path | None = typer.Option(None, help="Output folder (default <workdir>/reports/<study>)."),
    results_from: Path | None = typer.Option(None, "--results", help="A committed run record (`results record`): "
                                             "render from it, not from the workdir's results.db."),
    readme: bool = typer.Option(False, help="With --results: write the paper README's rendered section and "
                                "studies/README.md's table from the committed records."),
) -> None:
    """Render the study's tables and plots from results.db (or a committed run) as Markdown and HTML."""
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.studies.jobs import RunContext
    from mbertlab.studies.report import write_report

    workdir = state(ctx).workdir
    spec = _spec(name, scale, set_)
    if results_from is not None:
        from mbertlab.papers.records import recorded_report, write_readmes
        from mbertlab.report.render import render_html, render_markdown

        if readme:
            for path in write_readmes(spec, results_from):
                console.print(f"rendered: {path}")
            return
        report, _ = recorded_report(spec, results_from)
        target = out or workdir / "reports" / f"{spec.name}-{spec.scale}-recorded"
        console.print(f"report: {render_html(report, target)}\n        {render_markdown(report, target)}")
        return
    if readme:
        raise ConfigError("--readme: renders from a committed run; give it with --results")
    results = open_results(workdir, existing=True)
    md, html = write_report(spec, RunContext(ArtifactStore(workdir), results, spec.name), out)
    console.print(f"report: {html}\n        {md}")


@study_app.command("compare")
def compare_cmd(
    ctx: typer.Context,
    a: str = typer.Argument(..., help="Study name in results.db, or name@scale for a spec's tables at a scale."),
    b: str = typer.Argument(..., help="The other study (the differences are B − A)."),
    html: Path | None = typer.Option(None, "--html", help="Also write OUT/report.html (self-contained)."),
) -> None:
    """Two studies' (or two scales') tables side by side with B − A per cell and each finding's verdicts."""
    from mbertlab.report.render import render_html
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.studies.compare import compare, markdown
    from mbertlab.studies.jobs import RunContext

    workdir = state(ctx).workdir
    report = compare(a, b, RunContext(ArtifactStore(workdir), open_results(workdir, existing=True), ""))
    typer.echo(markdown(report))
    if html is not None:
        console.print(f"html: {render_html(report, html)}")
