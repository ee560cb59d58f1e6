"""Sentence-pair tasks (XNLI, MLDoc, any row of the task table with this adapter); premise and hypothesis may
come from different languages."""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import torch

from mbertlab.errors import DataError
from mbertlab.formats.records import PairExample
from mbertlab.tasks.classification import ClassifierHead, accuracy, collate_pairs, encode_pairs
from mbertlab.transfer.adapter import TaskAdapter, batch_to, eval_batches, resolve
from mbertlab.transfer.task_table import get_task


def read_pairs(file, root, task: str, limit: int | None = None) -> list[PairExample]:
    """The task's pairs of a file (its reader in the task table); XNLI may take its hypotheses from a parallel
    file in another language (K et al. Table 11)."""
    path = resolve(file.path, root)
    pairs = get_task(task).read(path, file.format, lang=file.lang, limit=limit)
    if file.hypothesis_path is None:
        return pairs
    other_path = resolve(file.hypothesis_path, root)
    other = get_task(task).read(other_path, file.format, lang=file.hypothesis_lang or "", limit=limit)
    if len(other) != len(pairs):
        raise DataError(other_path, None, f"expected {len(pairs)} examples, parallel to {path}")
    for a, b in zip(pairs, other):
        if a.label != b.label:
            raise DataError(other_path, b.line, f"expected label {a.label!r} (parallel to {path}:{a.line})")
    return [replace(a, hypothesis=b.hypothesis, hypothesis_lang=b.lang) for a, b in zip(pairs, other)]


class ClassificationAdapter(TaskAdapter):
    def read(self, file, root, limit=None):
        return read_pairs(file, root, self.task, limit)

    def texts(self, record):
        return [t for t in (record.premise, record.hypothesis) if t]

    def fit_labels(self, train):
        self.load_label_state({"labels": sorted({p.label for p in train})})

    def head(self, n_in):
        c = self.config
        return ClassifierHead(n_in, len(self.labels), c.dropout, c.lstm_hidden if c.mode == "feature" else None)

    def encode(self, tokenizer, records, training):
        return encode_pairs(tokenizer, records, self.index, self.config.max_length)

    def length(self, item):
        return len(item.input_ids)

    def collate(self, items, pad_id):
        return collate_pairs(items, pad_id)

    @torch.inference_mode()
    def predict(self, model, items, records, pad_id):
        model.eval()
        out: list = [None] * len(items)
        for batch, idx in eval_batches(self, items):
            best = model(batch_to(collate_pairs(batch, pad_id), model.device)).argmax(-1).tolist()
            for i, b in zip(idx, best):
                out[i] = self.labels[b]
        return out

    def metrics(self, records, predictions):
        return accuracy([p.label for p in records], predictions)

    def majority(self, train, records):
        label = Counter(p.label for p in train).most_common(1)[0][0]
        return [label] * len(records)

    def as_prediction(self, record):
        return record.label

    def write(self, file, records, predictions, folder, root):
        """The input's format with predicted labels: `premise<TAB>hypothesis<TAB>label` or `label<TAB>text`."""
        path = folder / f"{self.task}.{file.lang}.{file.split}.tsv"
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            for pair, label in zip(records, predictions):
                if file.format == "mldoc":
                    f.write(f"{label}\t{' '.join(x for x in (pair.premise, pair.hypothesis) if x)}\n")
                else:
                    f.write(f"{pair.premise}\t{pair.hypothesis}\t{label}\n")
        return path
