"""Corpus statistics: sentences, tokens, characters, bytes, MB and WikiSize (log2 MB, Wu & Dredze 2020's
measure of a language's resources) of a text, counted the same way wherever a corpus is written; and the
sizes stage, which turns a corpus's `stats.json` into results rows — each language's WikiSize, MB and
sentences plus each task's training sentences and word types — so the factors of Wu & Dredze's Table 2
regression are recorded rather than typed.
"""
from __future__ import annotations

import json
import math
from itertools import islice
from pathlib import Path
from typing import Iterator, Literal

from pydantic import Field

from mbertlab.config import Config, LanguageName
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB


class TaskTrainFile(Config):
    task: str
    path: str = Field(description="Training file, relative to the task-data artifact.")
    cap: int | None = Field(None, description="The transfer stage's max_train_sentences for this language.")
    format: Literal["conllu", "ner", "udpos"] | None = Field(None, description="Its column format: set, the stage "
                                                             "also counts the word types of those sentences.")


class SizeLanguage(Config):
    name: LanguageName
    tasks: list[TaskTrainFile] = Field(default_factory=list)


class SizesConfig(Config):
    languages: list[SizeLanguage] = Field(min_length=1)


def empty_stats() -> dict:
    return {"sentences": 0, "tokens": 0, "characters": 0, "bytes": 0}


def count_line(s: dict, text: str) -> None:
    """One sentence more in `s` (a line of a text file: its bytes include the newline)."""
    s["sentences"] += 1
    s["tokens"] += len(text.split())
    s["characters"] += len(text)
    s["bytes"] += len(text.encode("utf-8")) + 1


def add_sizes(s: dict) -> dict:
    """MB and WikiSize = log2(MB), Wu & Dredze 2020's measure of a language's resources; no WikiSize (None, JSON
    null) for an empty split, whose log2(0) = -inf JSON cannot hold."""
    s["mb"] = s["bytes"] / 2**20
    s["wikisize"] = math.log2(s["mb"]) if s["mb"] > 0 else None
    return s


def text_stats(path: str | Path) -> dict:
    """The statistics of a plain-text file (streamed)."""
    from mbertlab.formats.text import read_lines

    s = empty_stats()
    for line in read_lines(path):
        count_line(s, line)
    return add_sizes(s)


def _sentences(path: Path) -> Iterator[list[str]]:
    """The token lines of each blank-line separated block of a CoNLL-U / NER column / UPOS TSV file
    (comments and -DOCSTART- skipped; a block of only those is no sentence)."""
    lines: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            text = line.strip()
            if not text:
                if lines:
                    yield lines
                lines = []
            elif not text.startswith("#") and not text.startswith("-DOCSTART-"):
                lines.append(line.rstrip("\n"))
    if lines:
        yield lines


def count_sentences(path: Path) -> int:
    """Blank-line separated blocks of a CoNLL-U / NER column / UPOS TSV file (comments and -DOCSTART- skipped)."""
    return sum(1 for _ in _sentences(path))


def count_word_types(path: Path, fmt: str, cap: int | None = None) -> int:
    """Distinct word forms of the first `cap` sentences of a column file (Wu & Dredze 2020's training
    vocabulary): CoNLL-U's FORM of word lines (not multiword ranges or empty nodes), else the first column."""
    types: set[str] = set()
    for sentence in islice(_sentences(path), cap):
        for line in sentence:
            if fmt != "conllu":
                types.add(line.split()[0])
            elif len(cols := line.split("\t")) > 1 and cols[0].isdigit():
                types.add(cols[1])
    return len(types)


def sizes_into(config: SizesConfig, corpus: Artifact, data: Artifact, out: Path, results: ResultsDB,
               study: str) -> None:
    """`sizes.json` and one results row per language and measure, read from `corpus`'s statistics and
    `data`'s task training files (each count capped at the fine-tuning budget)."""
    stats = json.loads((corpus.path / "stats.json").read_text(encoding="utf-8"))
    where = str(final_path(out))
    rows, table = [], {}
    for lang in config.languages:
        if lang.name not in stats:
            raise DataError(corpus.path / "stats.json", None, f"no statistics for language {lang.name!r}")
        train = stats[lang.name]["train"]
        table[lang.name] = {"wikisize": train["wikisize"], "mb": train["mb"], "sentences": train["sentences"]}
        for task in lang.tasks:
            n = count_sentences(data.path / task.path)
            table[lang.name][f"train_sentences:{task.task}"] = min(n, task.cap) if task.cap else n
            if task.format is not None:
                table[lang.name][f"train_vocab:{task.task}"] = count_word_types(data.path / task.path, task.format,
                                                                               task.cap)
    for lang, values in table.items():
        for key, value in (item for item in values.items() if item[1] is not None):  # no WikiSize: no row
            metric, _, task = key.partition(":")
            rows.append(ResultRow(metric=metric, value=float(value), study=study, task=task, test_lang=lang,
                                  split="train", config_hash=final_path(out).name, artifact=where,
                                  model=f"{corpus.stage}/{corpus.hash}"))
    (out / "sizes.json").write_text(json.dumps(table, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    results.add(rows, replace_artifact=where)
