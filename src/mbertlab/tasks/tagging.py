"""Word tagging over subword encoders (UPOS, NER): features, head, decoding.

The label of a word sits on its first subword; other subwords get -100 (ignored). Sentences longer
than `max_length` subwords are cut into windows that keep up to `stride` previous subwords as context
and predict only the new ones, so every subword is predicted exactly once.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

IGNORE = -100


@dataclass
class Window:
    sentence: int  # index of the sentence
    input_ids: list[int]
    labels: list[int]  # label id at first subwords that this window predicts, else IGNORE
    words: list[int]  # word index per position predicted here, else -1


def windows_for(tokenizer, words: list[str], label_ids: list[int], sentence: int,
                max_length: int = 128, stride: int = 64) -> list[Window]:
    """Encode one sentence into one or more windows of at most `max_length` ids (with [CLS]/[SEP])."""
    encoded = tokenizer(words, add_special_tokens=False)["input_ids"]  # one list of ids per word
    pieces = [ids or [tokenizer.unk_token_id] for ids in encoded]
    flat, first_of = [], []
    for w, ids in enumerate(pieces):
        first_of += [w] + [-1] * (len(ids) - 1)
        flat += ids
    body = max_length - 2
    out, start = [], 0
    while True:
        context = 0 if start == 0 else min(stride, start)
        lo, hi = start - context, min(len(flat), start + body - context)
        ids = [tokenizer.cls_token_id] + flat[lo:hi] + [tokenizer.sep_token_id]
        labels, word_of = [IGNORE], [-1]
        for pos in range(lo, hi):
            predict = pos >= start and first_of[pos] >= 0
            labels.append(label_ids[first_of[pos]] if predict else IGNORE)
            word_of.append(first_of[pos] if predict else -1)
        out.append(Window(sentence, ids, labels + [IGNORE], word_of + [-1]))
        if hi >= len(flat):
            return out
        start = hi


def collate(windows: list[Window], pad_id: int) -> dict[str, torch.Tensor]:
    """Dynamic padding to the longest window of the batch."""
    length = max(len(w.input_ids) for w in windows)
    ids = torch.full((len(windows), length), pad_id, dtype=torch.long)
    labels = torch.full((len(windows), length), IGNORE, dtype=torch.long)
    for i, w in enumerate(windows):
        ids[i, : len(w.input_ids)] = torch.tensor(w.input_ids)
        labels[i, : len(w.labels)] = torch.tensor(w.labels)
    return {"input_ids": ids, "attention_mask": (ids != pad_id).long(), "labels": labels}


class Tagger(nn.Module):
    """Encoder + dropout + linear layer over every position (a thin head, as BertForTokenClassification)."""

    def __init__(self, encoder: nn.Module, n_labels: int, dropout: float = 0.1):
        super().__init__()
        self.encoder = encoder
        self.dropout = nn.Dropout(dropout)
        self.head = nn.Linear(encoder.config.hidden_size, n_labels)

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state  # [B, S, H]
        return self.head(self.dropout(hidden))  # [B, S, n_labels]


def decode(logits: torch.Tensor, windows: list[Window], predictions: dict[int, dict[int, int]]) -> None:
    """Argmax label per predicted word position, collected as predictions[sentence][word] = label id."""
    best = logits.argmax(-1).tolist()
    for row, window in zip(best, windows):
        for pos, word in enumerate(window.words):
            if word >= 0:
                predictions.setdefault(window.sentence, {})[word] = row[pos]
