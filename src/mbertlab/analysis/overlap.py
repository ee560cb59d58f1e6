"""Subword overlap between the source's task-training data and each target's task-test data, under an
encoder's own tokenizer and per task (Wu & Dredze 2019 §5.4: V_obs = V_train^en ∩ V_test^ℓ), the quantity
`analysis/correlate.py` correlates with zero-shot scores.

What a task shows the encoder (a tagged or parsed sentence's words, an XNLI pair, an MLDoc document's first
two sentences: `TaskAdapter.texts`) is tokenized by the encoder's tokenizer, special and unknown pieces left
out so [UNK] never counts as shared; the files and caps are the transfer's own, so the counts are over the
sentences the model trained and was tested on. p_type and p_token per target (corpus/overlap.py). Rows:
task = the task, mode `overlap`, metric p_type / p_token, train_lang = source, test_lang = target, split test.
"""
from __future__ import annotations

import json
from pathlib import Path

from pydantic import Field, model_validator

from mbertlab.config import Config
from mbertlab.errors import DataError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.transfer.config import DataFile
from mbertlab.transfer.task_table import TaskName

OVERLAPS = ("p_type", "p_token")


class OverlapConfig(Config):
    task: TaskName
    train: list[DataFile] = Field(min_length=1, description="The source's task-training file(s).")
    tests: list[DataFile] = Field(min_length=1, description="Each target's task-test file.")
    max_train_sentences: int | None = Field(None, description="The transfer's cap on training examples.")
    max_eval_sentences: int | None = Field(None, description="The transfer's cap on test examples.")

    @model_validator(mode="after")
    def _one_source(self):
        sources = {f.lang for f in self.train}
        if len(sources) != 1:
            raise ValueError(f"overlap: training files of one source language, got {sorted(sources)}")
        if sources & {f.lang for f in self.tests}:
            raise ValueError(f"overlap: the source {sources.pop()!r} is not a target")
        return self

    @property
    def source(self) -> str:
        return self.train[0].lang


def task_pieces(tokenizer, adapter, files: list[DataFile], limit: int | None, root: Path | None) -> list[str]:
    """Subword pieces of what the files' examples show the encoder, without special or unknown pieces."""
    from mbertlab.transfer.adapter import read_records, resolve

    skip = set(tokenizer.all_special_tokens)
    pieces: list[str] = []
    for file in files:
        path = resolve(file.path, root)
        if not path.is_file():
            raise DataError(path, None, f"no such {file.lang} {file.split} file (needed for the overlap statistics)")
        for record in read_records(adapter, file, limit, root):
            for text in adapter.texts(record):
                pieces += [p for p in tokenizer.tokenize(text) if p not in skip]
    return pieces


def overlap_into(config: OverlapConfig, encoder: Artifact, data_root: Path, out: Path, results: ResultsDB,
                 study: str = "") -> dict:
    """overlap.json ({target: {p_type, p_token}}) and its rows, with the tokenizer of `encoder`'s model/."""
    from transformers import AutoTokenizer

    from mbertlab.corpus.overlap import overlap
    from mbertlab.transfer.adapter import adapter_for

    tokenizer = AutoTokenizer.from_pretrained(str(encoder.path / "model"))
    adapter = adapter_for(config.task)
    source = set(task_pieces(tokenizer, adapter, config.train, config.max_train_sentences, data_root))
    stats = {f.lang: overlap(source, task_pieces(tokenizer, adapter, [f], config.max_eval_sentences, data_root))
             for f in config.tests}
    (out / "overlap.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    artifact = str(final_path(out))
    rows = [ResultRow(metric=kind, value=values[kind], study=study, model=f"{encoder.stage}/{encoder.hash}",
                      task=config.task, mode="overlap", train_lang=config.source, test_lang=target, split="test",
                      config_hash=final_path(out).name, artifact=artifact)
            for target, values in stats.items() for kind in OVERLAPS]
    results.add(rows, replace_artifact=artifact)
    return stats
