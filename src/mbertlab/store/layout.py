"""Where a language's text and task files live inside each kind of data artifact, spelled once.

Keyed by the store stage that built the artifact (a data job's kind is its stage). The corpus, taskdata and
budget stages write through it (the generator writes the same layout); the stages that read text (tokenizer,
shards, language ID) and the jobs that name task files (transfer, sizes) look a path up here instead of
spelling it. A new data stage adds its text layout here; where a stage keeps each task's files is the task
table's (transfer/task_table.py), read through `task_files`.
"""
from __future__ import annotations

from pathlib import Path

from mbertlab.store.artifacts import Artifact

GENERATED_TEXT = "{lang}/text/{split}.txt"  # the generator's layout, kept by the stages that copy its text
# Where each data stage keeps a language's text, one sentence per line.
TEXT_FILES = {"generate": GENERATED_TEXT, "budget": GENERATED_TEXT, "task_files": GENERATED_TEXT,
              "corpus": "{lang}/{split}.txt"}


def task_files(stage: str) -> dict[str, tuple[str, str]]:
    """Where an artifact of `stage` keeps each task's files: task -> (path pattern, format), from the task
    table (generate: the generator's layout; taskdata: real files gathered, a derived language respelled)."""
    from mbertlab.transfer.task_table import TASKS

    field = {"generate": "generated", "taskdata": "gathered"}.get(stage)
    stored = {name: getattr(t, field) for name, t in TASKS.items()} if field else {}
    return {name: (where.pattern, where.format) for name, where in stored.items() if where is not None}


def text_file(stage: str, lang: str, split: str) -> str:
    """A language's text of one split, relative to an artifact of `stage`."""
    return TEXT_FILES[stage].format(lang=lang, split=split)


def text_path(artifact: Artifact, lang: str, split: str) -> Path:
    return artifact.path / text_file(artifact.stage, lang, split)


def linked_task_file(lang: str, task: str, split: str, source: str) -> str:
    """Where a task_files artifact links a user's file: `<lang>/<task>/<split>` with the file's own extension."""
    return f"{lang}/{task}/{split}{Path(source).suffix or '.txt'}"
