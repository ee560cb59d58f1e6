"""The corpus stage: per language, sentences from text / CoNLL-U / Wikipedia sources, NFC, optional
de-duplication and fake script, split into train/dev by a seeded hash of each line (streaming: memory
holds 8 bytes per distinct sentence for de-duplication, nothing else), with statistics per split."""
from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Iterator, Literal

from pydantic import Field

from mbertlab.config import Config
from mbertlab.corpus.manipulations import fake_script


class CorpusSource(Config):
    path: str
    format: Literal["text", "conllu", "wikidump"] = "text"


class CorpusLanguage(Config):
    name: str
    sources: list[CorpusSource] = Field(min_length=1)
    fake_script: bool = Field(False, description="Rewrite every character in a disjoint script (K et al.).")
    max_sentences: int | None = Field(None, description="Budget: keep at most this many sentences.")


class CorpusConfig(Config):
    languages: list[CorpusLanguage] = Field(min_length=1)
    dev_fraction: float = Field(0.02, gt=0.0, lt=0.5)
    dedup: bool = True
    seed: int = 0


def source_sentences(source: CorpusSource) -> Iterator[str]:
    from mbertlab.formats.conllu import read_conllu
    from mbertlab.formats.text import read_lines
    from mbertlab.formats.wikidump import read_wikidump

    if source.format == "conllu":
        return (s.text for s in read_conllu(source.path, v1_to_v2=True))
    if source.format == "wikidump":
        return read_wikidump(source.path)
    return read_lines(source.path)


def _bucket(line: str, seed: int) -> float:
    digest = hashlib.blake2b(line.encode("utf-8"), digest_size=8, salt=seed.to_bytes(8, "little")).digest()
    return int.from_bytes(digest, "little") / 2**64


def build_language(lang: CorpusLanguage, config: CorpusConfig, out: Path) -> dict:
    folder = out / lang.name
    folder.mkdir(parents=True)
    seen: set[bytes] = set()
    stats = {split: {"sentences": 0, "tokens": 0, "characters": 0, "bytes": 0} for split in ("train", "dev")}
    kept = 0
    with (folder / "train.txt").open("w", encoding="utf-8") as train, (folder / "dev.txt").open("w", encoding="utf-8") as dev:
        for source in lang.sources:
            for line in source_sentences(source):
                if config.dedup:
                    key = hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest()
                    if key in seen:
                        continue
                    seen.add(key)
                if lang.max_sentences is not None and kept >= lang.max_sentences:
                    break
                kept += 1
                text = fake_script(line) if lang.fake_script else line
                split = "dev" if _bucket(line, config.seed) < config.dev_fraction else "train"
                (dev if split == "dev" else train).write(text + "\n")
                s = stats[split]
                s["sentences"] += 1
                s["tokens"] += len(text.split())
                s["characters"] += len(text)
                s["bytes"] += len(text.encode("utf-8")) + 1
    for s in stats.values():
        _add_sizes(s)
    return stats


def _add_sizes(s: dict) -> dict:
    """MB and WikiSize = log2(MB), Wu & Dredze 2020's measure of a language's resources."""
    s["mb"] = s["bytes"] / 2**20
    s["wikisize"] = math.log2(s["mb"]) if s["mb"] > 0 else float("-inf")
    return s


def text_stats(path: str | Path) -> dict:
    """The same statistics for a plain-text file (streamed)."""
    from mbertlab.formats.text import read_lines

    s = {"sentences": 0, "tokens": 0, "characters": 0, "bytes": 0}
    for line in read_lines(path):
        s["sentences"] += 1
        s["tokens"] += len(line.split())
        s["characters"] += len(line)
        s["bytes"] += len(line.encode("utf-8")) + 1
    return _add_sizes(s)


def build_corpus_into(config: CorpusConfig, out: Path) -> None:
    stats = {lang.name: build_language(lang, config, out) for lang in config.languages}
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
