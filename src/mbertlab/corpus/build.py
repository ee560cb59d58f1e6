"""The corpus stage: per language, sentences from text / CoNLL-U / Wikipedia sources (XML dumps, or
pre-extracted JSON lines or Parquet), NFC, optional de-duplication and a word-by-word
manipulation (a derived language: fake script, ...), budgets in sentences or
characters (fixed, α-smoothed or balanced), split into train/dev by a seeded hash of each line, with
statistics per split.

Streaming: de-duplication keeps an 8-byte hash per distinct sentence in an open-addressing table
(16–32 bytes per sentence, `corpus.dedup`), nothing else grows with the input."""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Callable, Iterable, Iterator, Literal

from pydantic import Field, field_validator

from mbertlab.config import Config, ContentPath, Exponent, LanguageName, Seed, unique
from mbertlab.corpus.dedup import SeenLines
from mbertlab.corpus.manipulations import WordMapName, respell_line
from mbertlab.corpus.sampling import balanced_budget, smoothed_budget
from mbertlab.corpus.stats import add_sizes, count_line, empty_stats
from mbertlab.errors import DataError
from mbertlab.formats.conllu import read_conllu
from mbertlab.formats.extracted import read_jsonl, read_parquet
from mbertlab.formats.text import read_lines
from mbertlab.formats.wikidump import read_wikidump
from mbertlab.store.layout import text_file

def _some_lines(read: Callable[[str], Iterable[str]]) -> Callable[[str], Iterator[str]]:
    """`read`, refusing a file with no sentence at all (as the Wikipedia readers do): an empty source would
    make a language of 0 sentences without a word."""
    def lines(path: str) -> Iterator[str]:
        count = 0
        for count, line in enumerate(read(path), 1):
            yield line
        if not count:
            raise DataError(path, None, "found no sentence (an empty file, or blank lines only); expected one "
                                        "sentence per line")
    return lines


SOURCE_READERS = {  # the one list of source formats: `format` takes its keys
    "text": _some_lines(read_lines),
    "conllu": _some_lines(lambda path: (s.text for s in read_conllu(path, any_labels=True))),  # labels unread
    "wikidump": read_wikidump,
    "jsonl": read_jsonl,
    "parquet": read_parquet,
}


class CorpusSource(Config):
    path: ContentPath
    format: Literal[tuple(SOURCE_READERS)] = Field("text", description=(
        "text: one sentence per line; conllu: the sentences' text; wikidump: a MediaWiki XML dump (.xml or "
        ".xml.bz2); jsonl, parquet: pre-extracted articles with a `text` field (the wikimedia/wikipedia layout)."))


class CorpusLanguage(Config):
    name: LanguageName
    sources: list[CorpusSource] = Field(min_length=1)
    derive: WordMapName | None = Field(None, description="A word-by-word manipulation (corpus/manipulations.py "
                                       "WORD_MAPS, e.g. fake-script: every character in a disjoint script, K et "
                                       "al.) applied to every line: a language derived from the sources'.")
    max_sentences: int | None = Field(None, gt=0, description="Budget: keep at most this many sentences.")
    max_characters: int | None = Field(None, gt=0, description=(
        "Budget: stop once this many characters are kept (met to within one sentence)."))


class CorpusConfig(Config):
    languages: list[CorpusLanguage] = Field(min_length=1)
    dev_fraction: float = Field(0.02, gt=0.0, lt=0.5)
    dedup: bool = True
    seed: Seed = 0
    sampling: Literal["none", "smoothed", "balanced"] = Field("none", description=(
        "Budgets across languages: smoothed p_l ∝ n_l^alpha of `total`, or every language cut to the smallest."))
    unit: Literal["sentences", "characters"] = Field("sentences", description="What budgets count.")
    alpha: Exponent = Field(0.7, description="Smoothing exponent (1 = data proportions, 0 = uniform).")
    total: int | None = Field(None, gt=0, description="Total budget for `smoothed` (default: all available).")

    @field_validator("languages")
    @classmethod
    def _one_entry_per_language(cls, languages: list[CorpusLanguage]) -> list[CorpusLanguage]:
        """Each language is one folder of the corpus: a second entry would write into the first's."""
        unique([lang.name for lang in languages])
        return languages


def source_sentences(source: CorpusSource) -> Iterator[str]:
    return SOURCE_READERS[source.format](source.path)


def _bucket(line: str, seed: int) -> float:
    digest = hashlib.blake2b(line.encode("utf-8"), digest_size=8, salt=seed.to_bytes(8, "little")).digest()
    return int.from_bytes(digest, "little") / 2**64


def distinct_sentences(lang: CorpusLanguage, dedup: bool) -> Iterator[str]:
    """The language's sentences in source order, without repeats when `dedup` (8-byte hash per sentence)."""
    seen = SeenLines()
    for source in lang.sources:
        for line in source_sentences(source):
            if not dedup or seen.add(line):
                yield line


def _budgeted(lang: CorpusLanguage, config: CorpusConfig, budget: int | None) -> Iterator[str]:
    """Sentences until the first budget that applies is used up (a character budget may overshoot by
    less than one sentence: a sentence is taken while fewer characters than the budget are kept)."""
    sentences = characters = 0
    limits = {"sentences": lang.max_sentences, "characters": lang.max_characters}
    if budget is not None:
        limits[config.unit] = budget if limits[config.unit] is None else min(budget, limits[config.unit])
    for line in distinct_sentences(lang, config.dedup):
        if (limits["sentences"] is not None and sentences >= limits["sentences"]) or \
                (limits["characters"] is not None and characters >= limits["characters"]):
            return
        sentences += 1
        characters += len(line)
        yield line


def build_language(lang: CorpusLanguage, config: CorpusConfig, out: Path, budget: int | None = None) -> dict:
    train_path, dev_path = (out / text_file("corpus", lang.name, split) for split in ("train", "dev"))
    train_path.parent.mkdir(parents=True)
    stats = {split: empty_stats() for split in ("train", "dev")}
    respell = respell_line(lang.derive) if lang.derive else str
    with train_path.open("w", encoding="utf-8") as train, dev_path.open("w", encoding="utf-8") as dev:
        for line in _budgeted(lang, config, budget):
            text = respell(line)
            split = "dev" if _bucket(line, config.seed) < config.dev_fraction else "train"
            (dev if split == "dev" else train).write(text + "\n")
            count_line(stats[split], text)
    for s in stats.values():
        add_sizes(s)
    return stats


def available(lang: CorpusLanguage, config: CorpusConfig) -> int:
    """A counting pass: the language's size in `config.unit` after de-duplication and its own budgets."""
    return sum(1 if config.unit == "sentences" else len(line) for line in _budgeted(lang, config, None))


def language_budgets(config: CorpusConfig) -> dict[str, int] | None:
    """Per-language budgets from the shared sampling functions (the ones pretraining uses online)."""
    if config.sampling == "none":
        return None
    sizes = {lang.name: available(lang, config) for lang in config.languages}
    if config.sampling == "balanced":
        return balanced_budget(sizes)
    return smoothed_budget(sizes, config.alpha, config.total if config.total is not None else sum(sizes.values()))


def build_corpus_into(config: CorpusConfig, out: Path) -> None:
    """Writes the corpus; with `sampling`, each language's stats also hold `sampling` = unit, budget and
    the realised count."""
    budgets = language_budgets(config)
    stats = {}
    for lang in config.languages:
        budget = None if budgets is None else budgets[lang.name]
        stats[lang.name] = build_language(lang, config, out, budget)
        if budgets is not None:
            realised = sum(s[config.unit] for s in stats[lang.name].values())
            stats[lang.name]["sampling"] = {"unit": config.unit, "budget": budget, "realised": realised}
    (out / "stats.json").write_text(json.dumps(stats, indent=1, allow_nan=False) + "\n", encoding="utf-8")
