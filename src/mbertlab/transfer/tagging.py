"""UPOS and NER as a transfer task: word windows, a tagging head (optionally BiLSTM / CRF), tag accuracy or
entity F1, predictions in the input's format."""
from __future__ import annotations

from collections import Counter
from itertools import islice
from pathlib import Path
from typing import Iterator

import torch

from mbertlab.formats.records import TaggedSentence
from mbertlab.tasks.ner import ner_metrics
from mbertlab.tasks.tagging import IGNORE, TaggingHead, Window, WordPieces, collate, collect, windows_for
from mbertlab.tasks.upos import upos_metrics
from mbertlab.transfer.adapter import TaskAdapter, TaskModel, batch_to, eval_batches, resolve
from mbertlab.transfer.config import DataFile
from mbertlab.transfer.task_table import get_task


def load_tagged(file: DataFile, task: str, root: Path | None = None, as_written: bool = False,
                limit: int | None = None) -> Iterator[TaggedSentence]:
    """The sentences of a data file as (tokens, tags), read by the task table's reader for its format; a
    prediction file is read `as_written` (formats/readers.py)."""
    path = resolve(file.path, root)
    return iter(get_task(task).read(path, file.format, v1_to_v2=file.v1_to_v2, as_written=as_written, limit=limit))


def metrics_for(task: str, gold: list[list[str]], pred: list[list[str]]) -> dict[str, float]:
    return upos_metrics(gold, pred) if task == "upos" else ner_metrics(gold, pred)


def tagged_windows(tokenizer, sentences: list[TaggedSentence], label_index: dict[str, int],
                   max_length: int) -> list[Window]:
    """Windows of every sentence, with label ids on first subwords (tags unseen in training ignored)."""
    out, pieces_of = [], WordPieces(tokenizer)
    for i, s in enumerate(sentences):
        ids = [label_index.get(t, IGNORE) for t in s.tags]
        out += windows_for(tokenizer, s.tokens, ids, i, max_length, pieces_of=pieces_of)
    return out


class TaggingAdapter(TaskAdapter):
    def read(self, file, root, limit=None):
        return load_tagged(file, self.task, root, limit=limit)

    def read_predictions(self, file, root):
        return load_tagged(file, self.task, root, as_written=True)

    def fit_labels(self, train):
        self.load_label_state({"labels": sorted({t for s in train for t in s.tags})})

    def head(self, n_in):
        c = self.config
        lstm = c.lstm_hidden if c.mode in ("feature", "bilstm_crf") else None
        return TaggingHead(n_in, len(self.labels), c.dropout, lstm, crf=c.crf or c.mode == "bilstm_crf")

    def encode(self, tokenizer, records, training):
        return tagged_windows(tokenizer, records, self.index, self.config.max_length)

    def length(self, item):
        return len(item.input_ids)

    def collate(self, items, pad_id):
        return collate(items, pad_id)

    @torch.inference_mode()
    def predict(self, model: TaskModel, items, records, pad_id):
        model.eval()
        found: dict[int, dict[int, int]] = {}
        for batch, _ in eval_batches(self, items):
            tensors = batch_to(collate(batch, pad_id), model.device)
            collect(model.head.decode(model(tensors), tensors), batch, found)
        return [[self.labels[found.get(i, {}).get(w, 0)] for w in range(len(s.tokens))]
                for i, s in enumerate(records)]

    def metrics(self, records, predictions):
        return metrics_for(self.task, [s.tags for s in records], predictions)

    def majority(self, train, records):
        tag = Counter(t for s in train for t in s.tags).most_common(1)[0][0]
        return [[tag] * len(s.tokens) for s in records]

    def as_prediction(self, record):
        return record.tags

    def words(self, record):
        return record.tokens

    def write(self, file, records, predictions, folder, root):
        """CoNLL-U with predicted UPOS (everything else as in the input), XTREME TSV, or NER columns."""
        from mbertlab.formats.ner_columns import write_ner

        stem = f"{self.task}.{file.lang}.{file.split}"
        if file.format == "conllu":
            from mbertlab.formats.conllu import read_conllu, write_conllu

            sentences = list(islice(read_conllu(resolve(file.path, root), v1_to_v2=file.v1_to_v2), file.start,
                                    file.start + len(records)))
            for sentence, tags in zip(sentences, predictions):
                sentence.upos = list(tags)
            write_conllu(sentences, folder / f"{stem}.conllu")
            return folder / f"{stem}.conllu"
        path = folder / f"{stem}.{'tsv' if file.format == 'udpos' else 'txt'}"
        write_ner([TaggedSentence(s.tokens, p) for s, p in zip(records, predictions)], path)
        return path
