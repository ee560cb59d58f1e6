"""Data stages of the wd2020 study (Wu & Dredze 2020): languages of different sizes and their WikiSize.

`wd2020_budget` cuts each generated language's training text to its own sentence budget (the generator
writes every language at one size), in the corpus stage's layout (`{lang}/{split}.txt` + `stats.json`), so
the tokenizer and shards stages read it as they read a corpus. `wd2020_sizes` turns a corpus's
`stats.json` (this stage's or the real corpus stage's) into results rows — WikiSize = log2 MB of a
language's training text, as `corpus.build` records it — plus each task's training sentences per
language: the factors of the Table 2 regression, recorded rather than typed.
"""
from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.corpus.build import text_stats
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.layout import text_file
from mbertlab.store.results import ResultRow
from mbertlab.studies.jobs import RunContext


class BudgetLanguage(Config):
    name: str
    sentences: int = Field(ge=1, description="Pretraining sentences kept (the first n of the generated train text).")


class BudgetConfig(Config):
    languages: list[BudgetLanguage] = Field(min_length=1)
    dev_sentences: int = Field(1000, ge=1, description="Dev sentences kept per language (MLM dev loss).")


class TaskTrainFile(Config):
    task: str
    path: str = Field(description="Training file, relative to the task-data artifact.")
    cap: int | None = Field(None, description="The transfer stage's max_train_sentences for this language.")


class SizeLanguage(Config):
    name: str
    tasks: list[TaskTrainFile] = Field(default_factory=list)


class SizesConfig(Config):
    languages: list[SizeLanguage] = Field(min_length=1)


def budget_into(config: BudgetConfig, generated: Path, out: Path) -> None:
    stats = {}
    for lang in config.languages:
        folder = out / lang.name
        folder.mkdir(parents=True)
        kept = _head(generated / text_file("generate", lang.name, "train"), folder / "train.txt",
                     lang.sentences)
        if kept < lang.sentences:
            raise DataError(generated, None, f"language {lang.name!r} has {kept} training sentences, the budget asks "
                            f"for {lang.sentences} (raise the generator's sentences.train)")
        _head(generated / text_file("generate", lang.name, "dev"), folder / "dev.txt", config.dev_sentences)
        stats[lang.name] = {split: text_stats(folder / f"{split}.txt") for split in ("train", "dev")}
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")


def _head(src: Path, dst: Path, n: int) -> int:
    if not src.is_file():
        raise DataError(src, None, "no such text file")
    with src.open(encoding="utf-8") as f, dst.open("w", encoding="utf-8") as g:
        lines = list(islice(f, n))
        g.writelines(lines)
    return len(lines)


def count_sentences(path: Path) -> int:
    """Blank-line separated blocks of a CoNLL-U / NER column / UPOS TSV file (comments and -DOCSTART- skipped)."""
    blocks, inside = 0, False
    with path.open(encoding="utf-8") as f:
        for line in f:
            text = line.strip()
            if not text:
                inside = False
            elif not text.startswith("#") and not text.startswith("-DOCSTART-") and not inside:
                blocks, inside = blocks + 1, True
    return blocks


def sizes_into(config: SizesConfig, corpus: Artifact, data: Artifact, out: Path, ctx: RunContext) -> None:
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
    for lang, values in table.items():
        for key, value in values.items():
            metric, _, task = key.partition(":")
            rows.append(ResultRow(metric=metric, value=float(value), study=ctx.study, task=task, test_lang=lang,
                                  split="train", config_hash=final_path(out).name, artifact=where,
                                  model=f"{corpus.stage}/{corpus.hash}"))
    (out / "sizes.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
    ctx.results.add(rows, replace_artifact=where)


def _build_budget(config: BudgetConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("corpus", config, lambda out: budget_into(config, inputs[0].path, Path(out)), inputs)


def _build_sizes(config: SizesConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    corpus, data = inputs
    return ctx.store.build("wd2020_sizes", config, lambda out: sizes_into(config, corpus, data, Path(out), ctx),
                           inputs)

