"""The store's side of moving results between workdirs (`mbertlab results export` / `merge`, studies/exchange.py):
an artifact copied without its weights, an artifact's provenance from its meta.json, a folder of copied artifacts
placed into a workdir, and one line per merge in <workdir>/merges.jsonl. Nothing here knows studies."""
from __future__ import annotations

import json
import shutil
import socket
import time
from pathlib import Path

LEFT_OUT_DIRS = frozenset({"model", "checkpoints"})  # weights: the rows and checks never read them
LEFT_OUT_BYTES = 256 * 2**20  # any single file larger than this stays behind too


def provenance(workdir: Path, stage: str, hash_: str) -> dict:
    """Where an artifact was built: stage, hash, machine, GPU, device and commit (its meta.json)."""
    meta_path = workdir / stage / hash_ / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8")) if meta_path.is_file() else {}
    return {"stage": stage, "hash": hash_, "machine": meta.get("host") or socket.gethostname(),
            "gpu": meta.get("gpu"), "device": meta.get("device"), "commit": meta.get("git_commit")}


def copy_light(src: Path, dst: Path) -> None:
    """The artifact without its weights (LEFT_OUT_DIRS, files over LEFT_OUT_BYTES); what stayed is listed in
    `exported.json`."""
    left = []

    def ignore(folder: str, names: list[str]) -> list[str]:
        skip = [n for n in names if n in LEFT_OUT_DIRS or (Path(folder, n).is_file() and
                                                           Path(folder, n).stat().st_size > LEFT_OUT_BYTES)]
        left.extend(str(Path(folder, n).relative_to(src)) for n in skip)
        return skip

    shutil.copytree(src, dst, ignore=ignore, dirs_exist_ok=True)
    (dst / "exported.json").write_text(json.dumps({"left_out": sorted(left)}, indent=1), encoding="utf-8")


def place_artifacts(folder: Path, workdir: Path) -> int:
    """Each `<folder>/<stage>/<hash>` the workdir lacks, copied beside it and renamed into place; how many."""
    added = 0
    for stage_dir in sorted(folder.glob("*/*")):
        target = workdir / stage_dir.parent.name / stage_dir.name
        if not target.exists():
            tmp = target.parent / f".merge-{stage_dir.name}"
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.copytree(stage_dir, tmp)
            tmp.rename(target)
            added += 1
    return added


def log_merge(workdir: Path, folder: Path, manifest: dict, rows: int) -> None:
    """One line per merged export in <workdir>/merges.jsonl: which export, from which machine and commit."""
    with (workdir / "merges.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps({"export": str(folder.resolve()), "rows": rows, "merged": time.time(),
                             **{k: manifest.get(k) for k in ("machine", "commit", "slice", "spec_version")}}) + "\n")
