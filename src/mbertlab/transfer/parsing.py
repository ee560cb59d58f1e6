"""Dependency parsing as a transfer task: CoNLL-U in, the biaffine head, MST trees, UAS/LAS, CoNLL-U out.

Training drops sentences longer than `max_length` subwords; evaluation keeps every sentence by encoding
long ones in sliding windows and joining their word vectors before the head scores the whole sentence.
Relations are universal (subtypes stripped) throughout.
"""
from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, replace

import torch

from mbertlab.formats.conllu import strip_subtype, write_conllu
from mbertlab.formats.records import UPOS_TAGS, DepSentence
from mbertlab.tasks.parsing.biaffine import IGNORE, BiaffineHead
from mbertlab.tasks.parsing.metric import attachment_scores
from mbertlab.tasks.tagging import Window, WordPieces, windows_for
from mbertlab.transfer.adapter import TaskAdapter, batch_to, eval_batches, resolve
from mbertlab.transfer.task_table import get_task

log = logging.getLogger("mbertlab")
UPOS_INDEX = {t: i for i, t in enumerate(UPOS_TAGS)}


@dataclass
class ParseItem:
    sentence: int
    windows: list[Window]
    heads: list[int]
    rels: list[int]
    upos: list[int]


class ParsingAdapter(TaskAdapter):
    def read(self, file, root, limit=None):
        return get_task(self.task).read(resolve(file.path, root), file.format, v1_to_v2=file.v1_to_v2, limit=limit)

    def read_predictions(self, file, root):
        """A system output: any relation label is read as written (and scored wrong if it is not gold's)."""
        return get_task(self.task).read(resolve(file.path, root), file.format, v1_to_v2=file.v1_to_v2,
                                        as_written=True)

    def fit_labels(self, train):
        self.load_label_state({"labels": sorted({strip_subtype(r) for s in train for r in s.deprels})})

    def head(self, n_in):
        c = self.config
        lstm = c.lstm_hidden if c.mode in ("feature", "bilstm_crf") else None
        return BiaffineHead(n_in, len(self.labels), c.arc_mlp, c.label_mlp, c.dropout,
                            len(UPOS_TAGS) if c.gold_upos else None, c.upos_dim, lstm,
                            self.labels.index("root") if "root" in self.labels else None)

    def encode(self, tokenizer, records: list[DepSentence], training):
        items, dropped, pieces_of = [], 0, WordPieces(tokenizer)
        for i, s in enumerate(records):
            windows = windows_for(tokenizer, s.forms, list(range(len(s))), i, self.config.max_length,
                                  pieces_of=pieces_of)
            if training and len(windows) > 1:
                dropped += 1
                continue
            rels = [self.index.get(strip_subtype(r), IGNORE) for r in s.deprels]
            upos = [UPOS_INDEX.get(u, len(UPOS_TAGS)) for u in s.upos]
            items.append(ParseItem(i, windows, list(s.heads), rels, upos))
        if dropped:
            log.info("parsing: dropped %d training sentences over %d subwords", dropped, self.config.max_length)
        return items

    def length(self, item):
        return sum(len(w.input_ids) for w in item.windows)

    def collate(self, items: list[ParseItem], pad_id: int) -> dict[str, torch.Tensor]:
        windows = [w for it in items for w in it.windows]
        seq = max(len(w.input_ids) for w in windows)
        n = max(len(it.heads) for it in items) + 1
        ids = torch.full((len(windows), seq), pad_id, dtype=torch.long)
        index = torch.zeros((len(items), n), dtype=torch.long)
        heads = torch.full((len(items), n), IGNORE, dtype=torch.long)
        rels = torch.full((len(items), n), IGNORE, dtype=torch.long)
        upos = torch.full((len(items), n), len(UPOS_TAGS), dtype=torch.long)
        r = 0
        for b, it in enumerate(items):
            flat = [r * seq]  # the root: [CLS] of the sentence's first window
            for w in it.windows:
                ids[r, : len(w.input_ids)] = torch.tensor(w.input_ids)
                flat += [r * seq + p for p, x in enumerate(w.words) if x >= 0]
                r += 1
            index[b, : len(flat)] = torch.tensor(flat)
            heads[b, 1: len(it.heads) + 1] = torch.tensor(it.heads)
            rels[b, 1: len(it.rels) + 1] = torch.tensor(it.rels)
            upos[b, 1: len(it.upos) + 1] = torch.tensor(it.upos)
        rels = rels.masked_fill(heads == IGNORE, IGNORE)
        heads = heads.masked_fill(rels == IGNORE, IGNORE)  # words with a relation unseen in training do not train
        mask = torch.arange(n).unsqueeze(0) <= torch.tensor([[len(it.heads)] for it in items])
        return {"input_ids": ids, "attention_mask": (ids != pad_id).long(), "gather_index": index,
                "word_mask": mask, "heads": heads, "rels": rels, "upos": upos}

    @torch.inference_mode()
    def predict(self, model, items, records, pad_id):
        model.eval()
        out: list = [None] * len(items)
        for batch, idx in eval_batches(self, items, batch_size=32):
            tensors = batch_to(self.collate(batch, pad_id), model.device)
            for i, (heads, rels) in zip(idx, model.head.decode(model(tensors), tensors)):
                out[i] = (heads, [self.labels[r] for r in rels])
        return out

    def metrics(self, records: list[DepSentence], predictions):
        gold = ([s.heads for s in records], [s.deprels for s in records], [s.upos for s in records])
        pred = ([h for h, _ in predictions], [r for _, r in predictions])
        return {**attachment_scores(*gold, *pred, punct=True), **attachment_scores(*gold, *pred, punct=False)}

    def majority(self, train, records):
        """A baseline: every word headed by its left (or right, whichever is more often right in training)
        neighbour, the sentence's first (last) word the root, labelled `root`, every other word the most
        frequent other relation."""
        counts = Counter(strip_subtype(r) for s in train for r in s.deprels)
        rel = next((r for r, _ in counts.most_common() if r != "root"), "dep")
        left = sum(h == i for s in train for i, h in enumerate(s.heads))  # word i+1 headed by word i
        right = sum(h == i + 2 for s in train for i, h in enumerate(s.heads))
        if left >= right:
            return [(list(range(len(s))), ["root"] + [rel] * (len(s) - 1)) for s in records]
        return [(list(range(2, len(s) + 1)) + [0], [rel] * (len(s) - 1) + ["root"]) for s in records]

    def as_prediction(self, record):
        return record.heads, [strip_subtype(r) for r in record.deprels]

    def words(self, record):
        return record.forms

    def write(self, file, records, predictions, folder, root):
        path = folder / f"parse.{file.lang}.{file.split}.conllu"
        write_conllu([replace(s, heads=list(h), deprels=list(r)) for s, (h, r) in zip(records, predictions)], path)
        return path
