"""A study's report: the design turns results.db rows into tables; this writes them out."""
from __future__ import annotations

from pathlib import Path

from mbertlab.report.render import render_html, render_markdown
from mbertlab.store.artifacts import environment_info
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.spec import StudySpec


def write_report(spec: StudySpec, ctx: RunContext, out: Path | None = None) -> tuple[Path, Path]:
    from mbertlab.studies.designs import get_design

    report = get_design(spec.design).report(spec, ctx.store, ctx.results)
    report.versions = environment_info()["versions"]
    report.configs = {"study spec": {"name": spec.name, "scale": spec.scale, "design": spec.design,
                                     **spec.settings.model_dump(mode="json")}, **report.configs}
    out = out or ctx.store.workdir / "reports" / f"{spec.name}-{spec.scale}"
    return render_markdown(report, out), render_html(report, out)
