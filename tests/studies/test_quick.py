"""The built-in studies: every spec validates; the quick study's test scale runs end to end."""
from __future__ import annotations

from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.report import write_report
from mbertlab.studies.runner import run_study, study_jobs, study_status
from mbertlab.studies.spec import builtin_specs, load_spec


def test_every_builtin_spec_validates_at_every_scale():
    assert "quick" in builtin_specs()
    for name in builtin_specs():
        for scale in ("test", "lab", "paper"):
            spec = load_spec(name, scale)
            assert study_jobs(spec), (name, scale)


def test_quick_test_scale_end_to_end(tmp_path):
    spec = load_spec("quick", "test")
    ctx = RunContext(ArtifactStore(tmp_path), ResultsDB(tmp_path / "results.db"), "quick")
    run_study(spec, ctx, jobs=1)
    assert {s.state for s in study_status(spec, ctx.store)} == {"done"}
    rows = ctx.results.query(study="quick")
    transfers = [j for j in study_jobs(spec) if j.kind == "transfer"]
    # two conditions x (majority + pretrained + random init) x two tasks; each scores source and target
    assert len(transfers) == 12
    assert {(r.task, r.test_lang) for r in rows if r.metric in ("accuracy", "f1")} == {
        (t, l) for t in ("upos", "ner") for l in ("src", "fake", "unigram")}
    assert len([r for r in rows if r.task == "retrieval" and r.metric == "mrr"]) == 4
    md, html = write_report(spec, ctx)
    text = md.read_text()
    assert "| condition | target | source (src) | zero-shot target | Δ | random init: target | majority: target |" in text
    assert "| fake script | fake |" in text and "—" not in text.split("## Versions")[0]
    page = html.read_text()
    assert page.count("<table>") == 3 and page.count("data:image/png;base64,") == 2
