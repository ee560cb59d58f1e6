"""A study's report: the design turns results.db rows into tables; this writes them out, with the
reproduction scorecard when the spec states the paper's findings."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from mbertlab.report.render import Report, render_html, render_markdown
from mbertlab.report.tables import Table
from mbertlab.store.artifacts import environment_info
from mbertlab.store.results import ResultRow
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.spec import StudySpec


def study_rows(spec: StudySpec, ctx: RunContext) -> list[ResultRow]:
    """The rows of this spec's jobs (at its scale), each job's tags merged into `extra`."""
    from mbertlab.studies.rows import rows_by_job
    from mbertlab.studies.runner import study_jobs

    return [replace(row, extra=with_tags(row.extra, dict(job.tags)))
            for job, rows in rows_by_job(study_jobs(spec), ctx.store, ctx.results).items() for row in rows]


def with_tags(extra: dict, tags: dict) -> dict:
    """A row's `extra` with its job's tags, which findings select by: a tag is never overwritten by an extra of
    the same name and another meaning (wd2020's `checkpoint: final` tag vs a row's selected step), which is
    kept as `row <name>`."""
    clashes = {f"row {k}": v for k, v in extra.items() if k in tags and str(v) != str(tags[k])}
    return {**extra, **clashes, **tags}


def study_verdicts(spec: StudySpec, ctx: RunContext, facts=None) -> list:
    """Every finding's verdict over the study's rows; `facts` reads the artifacts behind them (the workdir's
    unless given: a committed run's answers, papers/records.py)."""
    from mbertlab.studies.runner import spec_section
    from mbertlab.studies.scorecard import evaluate_findings, parse_findings

    findings = parse_findings(spec_section(spec, "findings"), spec.source)
    return evaluate_findings(findings, study_rows(spec, ctx), facts or ctx.store.workdir) if findings else []


def scorecard(spec: StudySpec, ctx: RunContext, facts=None) -> list[Table]:
    """The scorecard tables (the paper's claims; our own observations apart); none without findings."""
    from mbertlab.studies.scorecard import scorecard_tables

    verdicts = study_verdicts(spec, ctx, facts)
    return scorecard_tables(verdicts) if verdicts else []


def ran_on(spec: StudySpec, ctx: RunContext) -> str:
    """One line saying which precision, device and processor the study's model-running artifacts ran on (their
    meta.json), or each combination with its count when they differ; empty when none has run."""
    from mbertlab.studies.runner import study_status

    seen: Counter = Counter()
    for status in study_status(spec, ctx.store):
        found = ctx.store.find(status.stage, status.hash) if status.state == "done" else None
        meta = found.meta if found is not None else {}
        if "device" in meta:
            device = f"{meta['device']} ({meta['gpu']})" if meta.get("gpu") else meta["device"]
            seen[f"{meta['precision']} on {device}, processor {meta['processor']}"] += 1
    if len(seen) == 1:
        ((what, n),) = seen.items()
        return f"Ran on: {what} (all {n} artifacts that run models)."
    return "Ran on (artifacts differ): " + "; ".join(f"{what} ({n})" for what, n in seen.most_common()) if seen else ""


def write_report(spec: StudySpec, ctx: RunContext, out: Path | None = None) -> tuple[Path, Path]:
    from mbertlab.studies.designs import get_design

    report: Report = get_design(spec.design).report(spec, ctx.store, ctx.results)
    report.tables.extend(scorecard(spec, ctx))
    report.versions = environment_info()["versions"]
    report.ran_on = ran_on(spec, ctx)
    report.configs = {"study spec": {"name": spec.name, "scale": spec.scale, "design": spec.design,
                                     **spec.settings.model_dump(mode="json")}, **report.configs}
    out = out or ctx.store.workdir / "reports" / f"{spec.name}-{spec.scale}"
    return render_markdown(report, out), render_html(report, out)
