"""Stage kind `task_files`: a user's real task files (XNLI, MLDoc, NER, UD, text) gathered into one artifact
under fixed relative names, so transfer, language-ID and overlap jobs address them the way they address
generated data (`<lang>/<task>/<split>.<ext>`, `<lang>/text/train.txt`).

The artifact holds symlinks, not copies: the job's config records each file's size and modification time
when the study is planned (so an edited file is a different artifact), and the build refuses files that
changed since.
"""
from __future__ import annotations

from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import Job, RunContext


class LinkedFile(Config):
    dest: str = Field(description="Path inside the artifact.")
    path: str = Field(description="Absolute path of the user's file.")
    size: int
    mtime_ns: int


class TaskFilesConfig(Config):
    files: list[LinkedFile] = Field(min_length=1)


def linked_file(dest: str, path: Path, key: str) -> LinkedFile:
    """`key` names the spec key the path came from, for the error when the file is missing."""
    if not path.is_file():
        raise ConfigError(f"key '{key}': no such file {path}")
    stat = path.resolve().stat()
    return LinkedFile(dest=dest, path=str(path.resolve()), size=stat.st_size, mtime_ns=stat.st_mtime_ns)


def task_files_job(files: list[LinkedFile]) -> Job:
    dests = [f.dest for f in files]
    if len(set(dests)) != len(dests):
        twice = sorted({d for d in dests if dests.count(d) > 1})
        raise ConfigError(f"task files: two files map to the same name ({twice})")
    return Job("task_files", TaskFilesConfig(files=sorted(files, key=lambda f: f.dest)), (), label="task files")


def task_files_into(config: TaskFilesConfig, out: Path) -> None:
    for f in config.files:
        stat = Path(f.path).stat()
        if (stat.st_size, stat.st_mtime_ns) != (f.size, f.mtime_ns):
            raise ConfigError(f"{f.path}: the file changed since the study was planned; plan again")
        dest = out / f.dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.symlink_to(f.path)


def _build_task_files(config: TaskFilesConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("task_files", config, lambda out: task_files_into(config, Path(out)), inputs)

