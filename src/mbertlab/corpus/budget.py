"""The budget stage: a data artifact's text with each language's training sentences cut to its own budget —
Limisiewicz et al.'s Table 1 proportions or their 'balanced' data (every language cut to the smallest),
Wu & Dredze 2020's languages of different sizes from a generator that writes every language at one size.

Other splits are copied whole, so every model of a study is scored on the same dev sentences. The text
keeps the generator's layout (`store.layout`) and `stats.json` has the corpus stage's statistics, so the
tokenizer, shards and sizes stages read a budget as they read a corpus.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config, LanguageName
from mbertlab.corpus.sampling import balanced_budget
from mbertlab.corpus.stats import text_stats
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact
from mbertlab.store.layout import text_file, text_path


class BudgetConfig(Config):
    languages: dict[LanguageName, int] = Field(min_length=1, description="Language -> training sentences kept "
                                      "(the first n of the data's train file).")
    balanced: bool = Field(False, description="Cut every language to the smallest budget (Limisiewicz et al.'s "
                           "'balanced' data), via corpus.sampling.balanced_budget.")
    splits: list[str] = Field(default_factory=lambda: ["dev"], description="Splits copied whole.")


def budget_into(config: BudgetConfig, data: Artifact, out: Path) -> None:
    """Refuses a budget larger than the language's training text rather than keeping less."""
    budgets = balanced_budget(config.languages) if config.balanced else dict(config.languages)
    stats = {}
    for lang, n in budgets.items():
        source = text_path(data, lang, "train")
        kept = _head(source, out / text_file("budget", lang, "train"), n)
        if kept < n:
            raise DataError(source, None, f"{kept} training sentences, the budget of {lang!r} asks for {n}")
        for split in config.splits:
            _check_file(text_path(data, lang, split))
            shutil.copyfile(text_path(data, lang, split), out / text_file("budget", lang, split))
        stats[lang] = {split: text_stats(out / text_file("budget", lang, split)) for split in ("train", *config.splits)}
        stats[lang]["sampling"] = {"unit": "sentences", "budget": n, "realised": kept}
    (out / "stats.json").write_text(json.dumps(stats, indent=1, allow_nan=False) + "\n", encoding="utf-8")


def _check_file(path: Path) -> None:
    if not path.is_file():
        raise DataError(path, None, "no such text file")


def _head(source: Path, dest: Path, n: int) -> int:
    """Copy the first `n` lines (streamed); returns how many there were."""
    _check_file(source)
    dest.parent.mkdir(parents=True, exist_ok=True)
    kept = 0
    with source.open(encoding="utf-8") as f, dest.open("w", encoding="utf-8") as w:
        for line in f:
            if kept == n:
                break
            w.write(line)
            kept += 1
    return kept
