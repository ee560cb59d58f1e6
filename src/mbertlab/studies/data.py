"""The data a study reads, shared by the designs: generated languages, or real text and task files."""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from mbertlab.config import Config, LanguageName, Seed
from mbertlab.corpus.manipulations import WordMapName


class GeneratedData(Config):
    kind: Literal["generated"] = "generated"
    preset: str = Field("quick", description="Preset of `mbertlab generate`.")
    seed: Seed = 0
    set: dict[str, Any] = Field(default_factory=dict, description="Overrides of the generator config.")


class FilePart(Config):
    """Items [start, end) of a task file, e.g. to train on part of a dev file and test on the rest."""

    path: str
    start: int = Field(0, ge=0)
    end: int | None = Field(None, ge=1)


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

    text: list[str] = Field(default_factory=list, description="One-sentence-per-line text for pretraining.")
    derive: Derive | None = Field(None, description="{from: <language>, transform: <manipulation>}: this language "
                                  "is derived from another (e.g. transform: fake-script, K et al.'s Fake-English).")
    upos: dict[str, TaskPath] = Field(default_factory=dict, description="split -> CoNLL-U or XTREME UPOS TSV file.")
    ner: dict[str, TaskPath] = Field(default_factory=dict, description="split -> NER column file.")
    xnli: dict[str, TaskPath] = Field(default_factory=dict, description="split -> XNLI file (headerless XTREME "
                                      "or XGLUE TSV, or XNLI's own with a header).")
    lexicon: str | None = Field(None, description="MUSE dictionary from the source to this language.")
    max_sentences: int | None = Field(None, gt=0, description="Pretraining text budget in sentences.")


class FilesData(Config):
    kind: Literal["files"]
    root: str = Field(".", description="Folder the paths are relative to; relative to the spec file itself.")
    languages: dict[LanguageName, LanguageFiles]
