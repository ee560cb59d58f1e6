"""Where a language's text and task files live inside each kind of data artifact, spelled once.

Keyed by the store stage that built the artifact (a data job's kind is its stage). The corpus, taskdata and
budget stages write through it (the generator writes the same layout); the stages that read text (tokenizer,
shards, language ID) and the jobs that name task files (transfer, sizes) look a path up here instead of
spelling it. A new data stage adds its layout here, never by mutating the table at import time.
"""
from __future__ import annotations

from pathlib import Path

from mbertlab.store.artifacts import Artifact

GENERATED_TEXT = "{lang}/text/{split}.txt"  # the generator's layout, kept by the stages that copy its text
# Where each data stage keeps a language's text, one sentence per line.
TEXT_FILES = {"generate": GENERATED_TEXT, "budget": GENERATED_TEXT, "task_files": GENERATED_TEXT,
              "corpus": "{lang}/{split}.txt"}
# Where each data stage keeps a task's files: task -> (path pattern, format).
TASK_FILES = {
    "generate": {"upos": ("{lang}/ud/{split}.conllu", "conllu"), "parse": ("{lang}/ud/{split}.conllu", "conllu"),
                 "ner": ("{lang}/ner/{split}.txt", "ner"), "xnli": ("xnli/{lang}.{split}.tsv", "xnli"),
                 "mldoc": ("mldoc/{lang}.{split}.tsv", "mldoc")},
    "taskdata": {"upos": ("{lang}/upos/{split}.tsv", "udpos"), "ner": ("{lang}/ner/{split}.txt", "ner"),
                 "xnli": ("{lang}/xnli/{split}.tsv", "xnli")},
}


def text_file(stage: str, lang: str, split: str) -> str:
    """A language's text of one split, relative to an artifact of `stage`."""
    return TEXT_FILES[stage].format(lang=lang, split=split)


def text_path(artifact: Artifact, lang: str, split: str) -> Path:
    return artifact.path / text_file(artifact.stage, lang, split)


def linked_task_file(lang: str, task: str, split: str, source: str) -> str:
    """Where a task_files artifact links a user's file: `<lang>/<task>/<split>` with the file's own extension."""
    return f"{lang}/{task}/{split}{Path(source).suffix or '.txt'}"
