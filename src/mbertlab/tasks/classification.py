"""Sentence(-pair) classification (XNLI, MLDoc): features, head, metric.

The pair is encoded as [CLS] premise [SEP] hypothesis [SEP] with segment ids. Fine-tuning reads the [CLS]
vector; the frozen feature-based mode runs a BiLSTM over the subwords and max-pools (Wu & Dredze 2019).
MLDoc's input is a document's first two sentences as the pair (formats/readers.py).
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from mbertlab.formats.records import PairExample
from mbertlab.tasks.layers import BiLSTM


@dataclass
class PairItem:
    input_ids: list[int]
    token_type_ids: list[int]
    label: int


def encode_pairs(tokenizer, pairs: list[PairExample], label_index: dict[str, int], max_length: int) -> list[PairItem]:
    """Pairs truncated longest-first to `max_length` subwords; an empty hypothesis gives a single segment."""
    out = []
    for p in pairs:
        enc = tokenizer(p.premise, p.hypothesis or None, truncation=True, max_length=max_length,
                        return_token_type_ids=True)
        out.append(PairItem(enc["input_ids"], enc["token_type_ids"], label_index.get(p.label, -100)))
    return out


def collate_pairs(items: list[PairItem], pad_id: int) -> dict[str, torch.Tensor]:
    length = max(len(i.input_ids) for i in items)
    ids = torch.full((len(items), length), pad_id, dtype=torch.long)
    types = torch.zeros((len(items), length), dtype=torch.long)
    for row, item in enumerate(items):
        ids[row, : len(item.input_ids)] = torch.tensor(item.input_ids)
        types[row, : len(item.token_type_ids)] = torch.tensor(item.token_type_ids)
    return {"input_ids": ids, "attention_mask": (ids != pad_id).long(), "token_type_ids": types,
            "labels": torch.tensor([i.label for i in items], dtype=torch.long)}


class ClassifierHead(nn.Module):
    def __init__(self, n_in: int, n_classes: int, dropout: float = 0.1, lstm_hidden: int | None = None):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.lstm = BiLSTM(n_in, lstm_hidden) if lstm_hidden else None
        self.linear = nn.Linear(self.lstm.n_out if self.lstm else n_in, n_classes)

    def forward(self, hidden: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.lstm is None:
            return self.linear(self.dropout(hidden[:, 0]))
        mask = batch["attention_mask"].bool()
        states = self.lstm(self.dropout(hidden), mask).masked_fill(~mask.unsqueeze(-1), float("-inf"))
        return self.linear(self.dropout(states.max(1).values))

    def loss(self, logits: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        return nn.functional.cross_entropy(logits, batch["labels"], ignore_index=-100)


def accuracy(gold: list[str], pred: list[str]) -> dict[str, float]:
    return {"accuracy": sum(g == p for g, p in zip(gold, pred)) / len(gold) if gold else 0.0}
