"""What the transfer loop needs from a task: read gold records, encode them, a head, decode, score, write.

Each task family (tagging, parsing, classification) implements `TaskAdapter`; the loop in `train.py`
and the run in `run.py` know nothing task-specific. This module never imports the families: the task
table (`tasks.py`) names each task's adapter and `adapter_for` imports it from there.
"""
from __future__ import annotations

from dataclasses import replace
from itertools import islice
from pathlib import Path
from typing import Any, Iterable

import torch
from torch import nn

from mbertlab.runtime import to_device
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.task_table import get_task


def resolve(path: str, root: Path | None) -> Path:
    """A data path; a relative one resolves against `root` (e.g. a generated-languages artifact)."""
    return Path(path) if root is None or Path(path).is_absolute() else root / path


class TaskModel(nn.Module):
    """Features (the encoder in its mode) + a task head; the head owns its loss and decoding."""

    def __init__(self, features: nn.Module, head: nn.Module):
        super().__init__()
        self.features = features
        self.head = head

    def forward(self, batch: dict[str, torch.Tensor]) -> Any:
        hidden = self.features(batch["input_ids"], batch["attention_mask"], batch.get("token_type_ids"))
        return self.head(hidden, batch)

    def loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return self.head.loss(self(batch), batch)

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device


def batch_to(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """A collated batch (built on the CPU) on `device`."""
    return {name: to_device(t, device) for name, t in batch.items()}


class TaskAdapter:
    """Base of the task families. Items are encoded examples; `length` drives length-bucketed batches."""

    def __init__(self, task: str, config: TransferConfig | None = None):
        self.config = config  # None when only reading and scoring files
        self.task = task
        self.main_metric = get_task(task).metric

    def read(self, file: DataFile, root: Path | None, limit: int | None = None) -> Iterable:
        """The file's records, only its first `limit` when given (read no further: treebanks are large)."""
        raise NotImplementedError

    def read_predictions(self, file: DataFile, root: Path | None) -> Iterable:
        """A prediction file this task wrote (by default read as any data file)."""
        return self.read(file, root)

    labels: list[str]

    def fit_labels(self, train: list) -> None:
        raise NotImplementedError

    def label_state(self) -> dict:
        return {"labels": self.labels}

    def load_label_state(self, state: dict) -> None:
        self.labels = list(state["labels"])
        self.index = {t: i for i, t in enumerate(self.labels)}

    def head(self, n_in: int) -> nn.Module:
        raise NotImplementedError

    def encode(self, tokenizer, records: list, training: bool) -> list:
        raise NotImplementedError

    def length(self, item) -> int:
        raise NotImplementedError

    def collate(self, items: list, pad_id: int) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def predict(self, model: TaskModel, items: list, records: list, pad_id: int) -> list:
        raise NotImplementedError

    def metrics(self, records: list, predictions: list) -> dict[str, float]:
        raise NotImplementedError

    def majority(self, train: list, records: list) -> list:
        raise NotImplementedError

    def as_prediction(self, record):
        """What a record read back from a prediction file predicts (tags, a tree, a label)."""
        raise NotImplementedError

    def words(self, record) -> list[str] | None:
        """The words scoring aligns gold and prediction on (None for sentence-level tasks)."""
        return None

    def texts(self, record) -> list[str]:
        """What the record shows the encoder, as text (subword overlap counts its pieces)."""
        return [" ".join(self.words(record))]

    def write(self, file: DataFile, records: list, predictions: list, folder: Path, root: Path | None) -> Path:
        raise NotImplementedError


def read_records(adapter: TaskAdapter, file: DataFile, limit: int | None, root: Path | None) -> list:
    """Examples [start, end) of a file, at most `limit` of them."""
    stop = file.end if limit is None else min(file.end or file.start + limit, file.start + limit)
    return list(islice(adapter.read(file, root, limit=stop), file.start, stop))


def with_markers(items: list, sep_id: int, markers: list[int]) -> list:
    """K et al.'s language identity markers in the inputs: in every item the n-th [SEP] becomes markers[n] (the
    last repeating), so a pair reads [CLS] A [SEP-a] B [SEP-b] and a tagged window [CLS] words [SEP-a]."""
    def marked(item):
        if hasattr(item, "windows"):  # a parse item: a sentence's windows
            return replace(item, windows=[marked(w) for w in item.windows])
        ids, seen = [], 0
        for i in item.input_ids:
            if i == sep_id:
                i, seen = markers[min(seen, len(markers) - 1)], seen + 1
            ids.append(i)
        return replace(item, input_ids=ids)

    return [marked(item) for item in items]


def eval_batches(adapter: TaskAdapter, items: list, batch_size: int = 64):
    """Items sorted by length in batches (little padding); yields (batch items, their indices)."""
    order = sorted(range(len(items)), key=lambda i: adapter.length(items[i]))
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        yield [items[i] for i in idx], idx


def train_batches(adapter: TaskAdapter, items: list, batch_size: int, gen: torch.Generator) -> list[list]:
    """Length-bucketed batches in random order: shuffle, sort within pools of 50 batches, cut, shuffle."""
    order = torch.randperm(len(items), generator=gen).tolist()
    pool = batch_size * 50
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=lambda i: adapter.length(items[i]))
        batches += [[items[i] for i in chunk[j:j + batch_size]] for j in range(0, len(chunk), batch_size)]
    perm = torch.randperm(len(batches), generator=gen).tolist()
    return [batches[i] for i in perm]


def adapter_for(task: str, config: TransferConfig | None = None) -> TaskAdapter:
    """The task's adapter, its class looked up in the task table (so this module imports no family)."""
    return get_task(task).adapter_class()(task, config)
