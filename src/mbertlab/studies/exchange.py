"""`mbertlab results export` / `merge`: a study's (or slice's) rows with their provenance and the artifacts
behind them less weights (store/exchange.py) move to another workdir, where the scorecard and reports compute as
in one workdir. An export: manifest.json (study, scale, spec version: a hash of every stage hash the spec
expands to, machine, commit, the `study run` lines that built it, which a merge adds to the workdir's runs.jsonl
for `results record`), rows.jsonl (each row with its stage, hash, machine, GPU, commit), artifacts/. A
merge refuses a whole export with a stage hash the spec does not expand to (another spec version). A merged
pretraining has no weights: stages that read them are built where it ran."""
from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import environment_info
from mbertlab.store.exchange import copy_light, log_merge, place_artifacts, provenance
from mbertlab.store.results import ResultRow
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.runner import JobStatus, add_run_log, run_log, study_status
from mbertlab.studies.spec import StudySpec

FORMAT = 1


def spec_version(statuses: list[JobStatus]) -> str:
    """A hash of every stage the spec expands to: equal exactly when two machines would build the same stages."""
    keys = sorted(f"{s.stage}/{s.hash}" for s in statuses)
    return hashlib.sha256("\n".join(keys).encode()).hexdigest()[:16]


def export_results(spec: StudySpec, ctx: RunContext, out: Path, slice_name: str | None = None) -> tuple[int, int]:
    """Write the done stages of the study (or of one slice) and their rows to `out`; (rows, artifacts)."""
    from mbertlab.studies.rows import rows_by_job

    everything = study_status(spec, ctx.store)
    only = None
    if slice_name is not None:
        from mbertlab.studies.slices import study_slicing

        only = study_slicing(spec).get(slice_name).jobs
    done = [s for s in (study_status(spec, ctx.store, only) if only else everything) if s.state == "done"]
    out.mkdir(parents=True, exist_ok=True)
    if (out / "manifest.json").exists():
        raise ConfigError(f"{out}: already holds an export (manifest.json); give an empty folder")
    where = {}
    for status in done:
        where[(status.stage, status.hash)] = provenance(ctx.store.workdir, status.stage, status.hash)
        copy_light(ctx.store.workdir / status.stage / status.hash, out / "artifacts" / status.stage / status.hash)
    by_job = rows_by_job([s.job for s in done], ctx.store, ctx.results)
    n = 0
    with (out / "rows.jsonl").open("w", encoding="utf-8") as fh:
        for status in done:
            for row in by_job.get(status.job, []):
                fh.write(json.dumps({"row": asdict(row), "provenance": where[(status.stage, status.hash)]},
                                    sort_keys=True) + "\n")
                n += 1
    env = environment_info()
    manifest = {"format": FORMAT, "study": spec.name, "scale": spec.scale, "spec_version": spec_version(everything),
                "slice": slice_name, "stages": len(done), "rows": n, "machine": env["host"],
                "commit": env["git_commit"], "exported": time.time(),
                "parts": run_log(ctx.store.workdir, spec, slice_name)}  # its `study run` lines, for a record
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return n, len(done)


def merge_results(spec: StudySpec, ctx: RunContext, exports: list[Path]) -> tuple[int, int]:
    """Add each export's artifacts and rows to the workdir; (rows, artifacts added). Every export is checked
    before anything is written: one of another spec version stops the merge whole."""
    statuses = study_status(spec, ctx.store)
    expected = {(s.stage, s.hash) for s in statuses}
    loaded = [(folder, _read_export(folder, spec, expected)) for folder in exports]
    rows_added = artifacts_added = 0
    for folder, (manifest, records) in loaded:
        artifacts_added += place_artifacts(folder / "artifacts", ctx.store.workdir)
        by_artifact: dict[str, list[ResultRow]] = {}
        for rec in records:
            p = rec["provenance"]
            path = str(ctx.store.workdir / p["stage"] / p["hash"])
            by_artifact.setdefault(path, []).append(ResultRow(**{**rec["row"], "artifact": path}))
        for path, rows in by_artifact.items():  # an artifact's rows replace its earlier copy: merging twice is once
            rows_added += ctx.results.add(rows, replace_artifact=path)
        log_merge(ctx.store.workdir, folder, manifest, len(records))
        add_run_log(ctx.store.workdir, manifest.get("parts", []))
    return rows_added, artifacts_added


def _read_export(folder: Path, spec: StudySpec, expected: set[tuple[str, str]]) -> tuple[dict, list[dict]]:
    """The export's manifest and rows, refused whole (one line) if any row's stage is not the spec's."""
    manifest_path = folder / "manifest.json"
    if not manifest_path.is_file():
        raise ConfigError(f"{folder}: not a results export (no manifest.json)")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    if manifest.get("study") != spec.name or manifest.get("scale") != spec.scale:
        raise ConfigError(f"{folder}: an export of {manifest.get('study')!r} ({manifest.get('scale')}), not of "
                          f"{spec.name!r} ({spec.scale})")
    records = [json.loads(line) for line in (folder / "rows.jsonl").read_text(encoding="utf-8").splitlines() if line]
    foreign = sorted({f"{r['provenance']['stage']}/{r['provenance']['hash']}" for r in records
                      if (r["provenance"]["stage"], r["provenance"]["hash"]) not in expected})
    if foreign:
        raise ConfigError(f"{folder}: {len(foreign)} stages of its rows (e.g. {foreign[0]}) are not stages of "
                          f"{spec.name} ({spec.scale}) as this spec builds them: an export of another spec version "
                          f"(its {manifest.get('spec_version')}, commit {manifest.get('commit')}); nothing merged")
    return manifest, records
