"""Results that move between machines: `mbertlab results export` writes a study's (or one slice's) rows with
their provenance and the artifacts behind them, less the weights; `mbertlab results merge` adds exports to a
workdir, where the scorecard and reports compute from the merged rows as from one workdir that built all.

An export folder holds `manifest.json` (study, scale, the spec version: a hash of every stage hash the spec
expands to, machine, GPU, commit), `rows.jsonl` (one row a line: its columns and `provenance`: stage, hash,
machine, GPU, device, commit of the artifact that made it) and `artifacts/<stage>/<hash>/` (each built stage of
the export, without model weights and checkpoints: the scorecard's checks read dev losses, shard ids and task
files from them, reports read their configs and meta.json). A merge refuses a whole export whose rows name a
stage hash the spec does not expand to: rows of another spec version (another recipe, another commit's stages).
A merged pretraining has no weights: stages that read them must be built where it ran.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import socket
import time
from dataclasses import asdict
from pathlib import Path

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import environment_info
from mbertlab.store.results import ResultRow
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.runner import JobStatus, study_status
from mbertlab.studies.spec import StudySpec

LEFT_OUT_DIRS = frozenset({"model", "checkpoints"})  # weights: the rows and checks never read them
LEFT_OUT_BYTES = 256 * 2**20  # any single file larger than this stays behind too
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
    provenance = {}
    for status in done:
        provenance[(status.stage, status.hash)] = _provenance(status, ctx)
        _copy_light(ctx.store.workdir / status.stage / status.hash, out / "artifacts" / status.stage / status.hash)
    by_job = rows_by_job([s.job for s in done], ctx.store, ctx.results)
    n = 0
    with (out / "rows.jsonl").open("w", encoding="utf-8") as fh:
        for status in done:
            for row in by_job.get(status.job, []):
                fh.write(json.dumps({"row": asdict(row), "provenance": provenance[(status.stage, status.hash)]},
                                    sort_keys=True) + "\n")
                n += 1
    env = environment_info()
    manifest = {"format": FORMAT, "study": spec.name, "scale": spec.scale, "spec_version": spec_version(everything),
                "slice": slice_name, "stages": len(done), "rows": n, "machine": env["host"],
                "commit": env["git_commit"], "exported": time.time()}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True), encoding="utf-8")
    return n, len(done)


def _provenance(status: JobStatus, ctx: RunContext) -> dict:
    meta_path = ctx.store.workdir / status.stage / status.hash / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    return {"stage": status.stage, "hash": status.hash, "machine": meta.get("host") or socket.gethostname(),
            "gpu": meta.get("gpu"), "device": meta.get("device"), "commit": meta.get("git_commit")}


def _copy_light(src: Path, dst: Path) -> None:
    """The artifact without its weights (LEFT_OUT_DIRS, files over LEFT_OUT_BYTES); what stayed is listed."""
    left = []

    def ignore(folder: str, names: list[str]) -> list[str]:
        skip = [n for n in names if n in LEFT_OUT_DIRS or (Path(folder, n).is_file() and
                                                           Path(folder, n).stat().st_size > LEFT_OUT_BYTES)]
        left.extend(str(Path(folder, n).relative_to(src)) for n in skip)
        return skip

    shutil.copytree(src, dst, ignore=ignore, dirs_exist_ok=True)
    (dst / "exported.json").write_text(json.dumps({"left_out": sorted(left)}, indent=1), encoding="utf-8")


def merge_results(spec: StudySpec, ctx: RunContext, exports: list[Path]) -> tuple[int, int]:
    """Add each export's artifacts and rows to the workdir; (rows, artifacts added). Every export is checked
    before anything is written: one of another spec version stops the merge whole."""
    statuses = study_status(spec, ctx.store)
    expected = {(s.stage, s.hash) for s in statuses}
    loaded = [(folder, _read_export(folder, spec, expected)) for folder in exports]
    rows_added = artifacts_added = 0
    for folder, records in loaded:
        for stage_dir in sorted((folder / "artifacts").glob("*/*")):
            target = ctx.store.workdir / stage_dir.parent.name / stage_dir.name
            if not target.exists():
                tmp = target.parent / f".merge-{stage_dir.name}"
                shutil.rmtree(tmp, ignore_errors=True)
                shutil.copytree(stage_dir, tmp)
                tmp.rename(target)
                artifacts_added += 1
        by_artifact: dict[str, list[ResultRow]] = {}
        for rec in records:
            p = rec["provenance"]
            path = str(ctx.store.workdir / p["stage"] / p["hash"])
            by_artifact.setdefault(path, []).append(ResultRow(**{**rec["row"], "artifact": path}))
        for path, rows in by_artifact.items():  # an artifact's rows replace its earlier copy: merging twice is once
            rows_added += ctx.results.add(rows, replace_artifact=path)
        _log_merge(ctx, folder, len(records))
    return rows_added, artifacts_added


def _read_export(folder: Path, spec: StudySpec, expected: set[tuple[str, str]]) -> list[dict]:
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
    return records


def _log_merge(ctx: RunContext, folder: Path, rows: int) -> None:
    """One line per merged export in <workdir>/merges.jsonl: which export, from which machine and commit."""
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    with (ctx.store.workdir / "merges.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"export": str(folder.resolve()), "rows": rows, "merged": time.time(),
                             **{k: manifest.get(k) for k in ("machine", "commit", "slice", "spec_version")}}) + "\n")
