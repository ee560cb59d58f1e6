"""The data a study reads, shared by the designs: generated languages, or real text and task files, one
schema for every design (`tasks: {<task>: {<split>: path | {path, format, start, end}}}`)."""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator

from mbertlab.config import Config, LanguageName, Seed
from mbertlab.corpus.manipulations import WordMapName
from mbertlab.transfer.task_table import DataFormatName, TaskName, get_task

Split = Literal["train", "dev", "test"]


class GeneratedData(Config):
    kind: Literal["generated"] = "generated"
    preset: str = Field("quick", description="Preset of `mbertlab generate`.")
    seed: Seed = 0
    set: dict[str, Any] = Field(default_factory=dict, description="Overrides of the generator config.")


class FilePart(Config):
    """A task file, or items [start, end) of one (e.g. to train on part of a dev file and test on the rest)."""

    path: str = Field(description="Relative to data.root.")
    format: DataFormatName | None = Field(None, description="Default: the task table's for the file's name "
                                          "(udpos for a UPOS .tsv file, else the task's first format).")
    start: int = Field(0, ge=0)
    end: int | None = Field(None, ge=1)

    def format_for(self, task: str) -> str:
        return self.format or get_task(task).format_of(self.path)


TaskPath = str | FilePart  # a whole file, or part of one


def part(entry: TaskPath) -> FilePart:
    return FilePart(path=entry) if isinstance(entry, str) else entry


class Derive(Config):
    """A language derived from another word by word: its text, task files and a gold lexicon from the base's
    through one entry of the manipulations (corpus/manipulations.py WORD_MAPS: fake-script, ...)."""

    base: LanguageName = Field(alias="from", description="The language it is derived from.")
    transform: WordMapName = Field(description="The word-by-word manipulation, by name.")


class LanguageFiles(Config):
    """A real language: pretraining text and task files (paths relative to `data.root`)."""

    text: list[str] = Field(default_factory=list, description="One-sentence-per-line text (pretraining, "
                            "language ID); one path or a list.")
    derive: Derive | None = Field(None, description="{from: <language>, transform: <manipulation>}: this language "
                                  "is derived from another (e.g. transform: fake-script, K et al.'s Fake-English).")
    tasks: dict[TaskName, dict[Split, TaskPath]] = Field(default_factory=dict, description="task -> split -> file "
                                                        "(a path, or {path, format, start, end}); the task table "
                                                        "(transfer/task_table.py) names the tasks and reads them.")
    lexicon: str | None = Field(None, description="MUSE dictionary from the source to this language.")
    max_sentences: int | None = Field(None, gt=0, description="Pretraining text budget in sentences.")

    @field_validator("text", mode="before")
    @classmethod
    def _one_or_more(cls, text):
        return [text] if isinstance(text, str) else text

    def parts(self) -> list[tuple[str, str, FilePart]]:
        """(task, split, file part) of every task file."""
        return [(task, split, part(entry)) for task, splits in self.tasks.items() for split, entry in splits.items()]


class FilesData(Config):
    kind: Literal["files"]
    root: str = Field(".", description="Folder the paths are relative to; relative to the spec file itself.")
    languages: dict[LanguageName, LanguageFiles]


def _data_kind(value: Any) -> Any:
    """Which of the two a study's `data:` is: its `kind` (generated when left out)."""
    return value.get("kind", "generated") if isinstance(value, dict) else getattr(value, "kind", None)


StudyData = Annotated[Annotated[GeneratedData, Tag("generated")] | Annotated[FilesData, Tag("files")],
                      Discriminator(_data_kind, custom_error_type="data_kind",
                                    custom_error_message="expected kind generated or files")]
"""A study's `data:`, told apart by `kind`, so a mistake is reported against that kind's keys only (a plain union
reports every key against both kinds, 2-5 lines of noise)."""
