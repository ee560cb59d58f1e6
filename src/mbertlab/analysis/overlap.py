"""Subword overlap between a source and each target under an encoder's own tokenizer (Wu & Dredze 2019
§5.4), the quantity `analysis/correlate.py` correlates with zero-shot scores.

The first `sentences` lines of each language's text are tokenized by the encoder's tokenizer, special
and unknown pieces left out so [UNK] never counts as shared; p_type and p_token per target
(corpus/overlap.py). Rows: task `overlap`, metric p_type / p_token, train_lang = source, test_lang = target.
"""
from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB

OVERLAPS = ("p_type", "p_token")


class OverlapConfig(Config):
    source: str
    targets: list[str] = Field(min_length=1)
    sentences: int = Field(2000, ge=1, description="Lines of each language's text tokenized.")
    split: str = Field("train", description="Which text split is read.")
    text_files: str = Field("{lang}/text/{split}.txt", description="Where a language's text is in the text artifact.")


def language_pieces(tokenizer, path: Path, sentences: int) -> list[str]:
    """Subword pieces of the file's first lines, without special or unknown pieces."""
    from mbertlab.formats.text import read_lines

    if not path.is_file():
        raise DataError(path, None, "no such text file (needed for the overlap statistics)")
    skip = set(tokenizer.all_special_tokens)
    pieces: list[str] = []
    for line in islice(read_lines(path), sentences):
        pieces += [p for p in tokenizer.tokenize(line) if p not in skip]
    return pieces


def overlap_into(config: OverlapConfig, encoder: Artifact, text_root: Path, out: Path, results: ResultsDB,
                 study: str = "") -> dict:
    """overlap.json ({target: {p_type, p_token}}) and its rows, with the tokenizer of `encoder`'s model/."""
    from transformers import AutoTokenizer

    from mbertlab.corpus.overlap import overlap

    tokenizer = AutoTokenizer.from_pretrained(str(encoder.path / "model"))
    file = lambda lang: text_root / config.text_files.format(lang=lang, split=config.split)  # noqa: E731
    source = set(language_pieces(tokenizer, file(config.source), config.sentences))
    stats = {t: overlap(source, language_pieces(tokenizer, file(t), config.sentences)) for t in config.targets}
    (out / "overlap.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    artifact = str(final_path(out))
    rows = [ResultRow(metric=kind, value=values[kind], study=study, model=f"{encoder.stage}/{encoder.hash}",
                      task="overlap", mode="overlap", train_lang=config.source, test_lang=target, split=config.split,
                      config_hash=final_path(out).name, artifact=artifact)
            for target, values in stats.items() for kind in OVERLAPS]
    results.add(rows, replace_artifact=artifact)
    return stats
