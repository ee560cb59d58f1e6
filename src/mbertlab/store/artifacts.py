"""Content-addressed artifact directories: `<workdir>/<stage>/<hash>/`.

An artifact is built in `<stage>/.partial-<hash>/` under a file lock and renamed into place only
when complete, so a directory named by a bare hash is always complete. A killed build leaves at
most a `.partial-` directory: data stages wipe it and start again, resumable stages (pretraining)
continue from the checkpoints it holds.
"""
from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Callable, Sequence

from filelock import FileLock

from mbertlab import __version__
from mbertlab.config import Config, content_hash
from mbertlab.errors import ArtifactError, ConfigError
from mbertlab.runtime import RUNTIME_FILE
from mbertlab.store.faults import storage_fault

log = logging.getLogger("mbertlab")

TRACKED_PACKAGES = ("torch", "transformers", "tokenizers", "sentencepiece", "numpy", "gensim", "conllu", "seqeval")


@dataclass(frozen=True)
class Artifact:
    stage: str
    hash: str
    path: Path
    fresh: bool = field(default=False, compare=False)  # built by this call rather than reused

    @property
    def config(self) -> dict[str, Any]:
        return json.loads((self.path / "config.json").read_text(encoding="utf-8"))

    @property
    def meta(self) -> dict[str, Any]:
        return json.loads((self.path / "meta.json").read_text(encoding="utf-8"))


def final_path(build_dir: Path) -> Path:
    """Where an artifact being built in `build_dir` (a `.partial-<hash>` dir) will live when complete.

    Builders that record their artifact (results rows, logs) name this path, not the partial one.
    """
    return build_dir.parent / build_dir.name.removeprefix(".partial-")


def external(directory: str | Path) -> Artifact:
    """A directory made outside the store (e.g. a downloaded Hugging Face encoder) as an input: its hash
    fingerprints the resolved path and every file's name, size and modification time, so a run on another
    encoder (or a changed one) is a different artifact."""
    root = Path(directory).resolve()
    if not root.is_dir():
        raise ArtifactError(f"{directory}: no such directory")
    files = sorted((str(p.relative_to(root)), p.stat().st_size, p.stat().st_mtime_ns)
                   for p in root.rglob("*") if p.is_file())
    return Artifact("external", content_hash({"path": str(root), "files": files}), root)


def environment_info() -> dict[str, Any]:
    """Versions and host recorded in every artifact's meta.json (no heavy imports)."""
    versions = {"mbertlab": __version__, "python": platform.python_version()}
    for name in TRACKED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            pass
    return {"versions": versions, "host": socket.gethostname(), "git_commit": _git_commit()}


def _git_commit() -> str | None:
    here = Path(__file__).resolve().parent
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() or None if out.returncode == 0 else None


def _ran_on(build_dir: Path) -> dict[str, Any]:
    """What a stage that runs models recorded it ran on (`runtime.record_runtime`), taken out of its directory."""
    path = build_dir / RUNTIME_FILE
    if not path.is_file():
        return {}
    ran = json.loads(path.read_text(encoding="utf-8"))
    path.unlink()
    return ran


class ArtifactStore:
    def __init__(self, workdir: str | Path):
        self.workdir = Path(workdir).resolve()

    def hash_for(self, stage: str, config: Config, inputs: Sequence[Artifact] = ()) -> str:
        return content_hash({"stage": stage, "config": config.hash_view()}, [a.hash for a in inputs])

    def find(self, stage: str, hash_: str) -> Artifact | None:
        path = self.workdir / stage / hash_
        return Artifact(stage, hash_, path) if path.is_dir() else None

    def open(self, ref: str | Path, stage: str | None = None) -> Artifact:
        """An artifact by directory path, `stage/hash`, or hash (prefix) within `stage`."""
        path = Path(ref)
        if not path.is_dir() and (path.is_absolute() or len(path.parts) > 1) and not (self.workdir / path).is_dir():
            raise ArtifactError(f"{ref}: no such artifact directory")  # a path, not a hash prefix to look up
        if not path.is_dir() and stage is not None:
            matches = sorted((self.workdir / stage).glob(f"{ref}*")) if (self.workdir / stage).is_dir() else []
            matches = [m for m in matches if not m.name.startswith(".")]
            if len(matches) == 1:
                path = matches[0]
            elif len(matches) > 1:
                raise ArtifactError(f"{ref}: ambiguous {stage} artifact hash ({len(matches)} match)")
        if not path.is_dir():
            path = self.workdir / str(ref)
        if not (path / "meta.json").is_file():
            raise ArtifactError(f"{ref}: not a complete artifact directory")
        found = Artifact(path.parent.name, path.name, path.resolve())
        if stage is not None and found.stage != stage:
            raise ArtifactError(f"{ref}: expected a {stage!r} artifact, got {found.stage!r}")
        return found

    def build(
        self,
        stage: str,
        config: Config,
        builder: Callable[[Path], None],
        inputs: Sequence[Artifact] = (),
        resumable: bool = False,
    ) -> Artifact:
        """Return the artifact for (stage, config, inputs), building it with `builder(dir)` if missing."""
        hash_ = self.hash_for(stage, config, inputs)
        found = self.find(stage, hash_)
        if found is not None:
            return found
        stage_dir = self.workdir / stage
        (stage_dir / ".locks").mkdir(parents=True, exist_ok=True)
        with FileLock(str(stage_dir / ".locks" / f"{hash_}.lock")):
            found = self.find(stage, hash_)
            if found is not None:
                return found
            return self._build_locked(stage, hash_, config, builder, inputs, resumable)

    def _build_locked(self, stage, hash_, config, builder, inputs, resumable) -> Artifact:
        final = self.workdir / stage / hash_
        partial = self.workdir / stage / f".partial-{hash_}"
        if partial.exists() and not resumable:
            shutil.rmtree(partial)
        resuming = partial.exists()
        try:
            _fill(partial, stage, hash_, config, builder, inputs)
        except BaseException as err:
            if not resumable or (isinstance(err, ConfigError) and not resuming):  # nothing worth resuming
                shutil.rmtree(partial, ignore_errors=True)
            fault = storage_fault(err, final)  # a full disk, a folder made read-only: one line naming the artifact
            if fault is not None:
                raise fault from err
            raise
        os.rename(partial, final)
        return Artifact(stage, hash_, final, fresh=True)


class _LogFile(logging.FileHandler):
    """A build's log.txt. A message that cannot be written (a full disk) is dropped without a word: logging would
    print a traceback for each, and the build's own error says what happened."""

    def handleError(self, record: logging.LogRecord) -> None:
        pass


def _fill(partial: Path, stage: str, hash_: str, config: Config, builder: Callable[[Path], None],
          inputs: Sequence[Artifact]) -> None:
    """Everything an artifact holds, written into its `.partial-` directory: inputs, config, outputs, log, meta."""
    partial.mkdir(parents=True, exist_ok=True)
    (partial / "config.json").write_text(config.canonical_json() + "\n", encoding="utf-8")
    inputs_info = [{"stage": a.stage, "hash": a.hash, "path": str(a.path)} for a in inputs]
    (partial / "inputs.json").write_text(json.dumps(inputs_info, indent=1) + "\n", encoding="utf-8")
    started = time.time()
    handler = _LogFile(partial / "log.txt", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    log.addHandler(handler)
    if log.level == logging.NOTSET or log.level > logging.INFO:
        log.setLevel(logging.INFO)
    try:
        builder(partial)
    finally:
        log.removeHandler(handler)
        handler.close()
    meta = {
        "stage": stage,
        "hash": hash_,
        "seed": getattr(config, "seed", None),
        "started": started,
        "finished": time.time(),
        "pid": os.getpid(),
        **_ran_on(partial),
        **environment_info(),
    }
    (partial / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
