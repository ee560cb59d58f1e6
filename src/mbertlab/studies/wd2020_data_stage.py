"""Budget stage of the wd2020 study (Wu & Dredze 2020): languages of different sizes.

`wd2020_budget` cuts each generated language's training text to its own sentence budget (the generator
writes every language at one size), in the corpus stage's layout (`{lang}/{split}.txt` + `stats.json`), so
the tokenizer and shards stages read it as they read a corpus.
"""
from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.corpus.stats import text_stats
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact
from mbertlab.store.layout import text_file
from mbertlab.studies.jobs import RunContext


class BudgetLanguage(Config):
    name: str
    sentences: int = Field(ge=1, description="Pretraining sentences kept (the first n of the generated train text).")


class BudgetConfig(Config):
    languages: list[BudgetLanguage] = Field(min_length=1)
    dev_sentences: int = Field(1000, ge=1, description="Dev sentences kept per language (MLM dev loss).")


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


def _build_budget(config: BudgetConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("corpus", config, lambda out: budget_into(config, inputs[0].path, Path(out)), inputs)
