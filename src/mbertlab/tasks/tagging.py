"""Word tagging over subword encoders (UPOS, NER): features, head, decoding.

The label of a word sits on its first subword; other subwords get -100 (ignored). Sentences longer
than `max_length` subwords are cut into windows that keep up to `stride` previous subwords as context
and predict only the new ones, so every subword is predicted exactly once.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from mbertlab.tasks.layers import CRF, BiLSTM

IGNORE = -100


@dataclass
class Window:
    sentence: int  # index of the sentence
    input_ids: list[int]
    labels: list[int]  # label id at first subwords that this window predicts, else IGNORE
    words: list[int]  # word index per position predicted here, else -1


class WordPieces:
    """A tokenizer's ids for each word, memoised. `tokenizer(words)` encodes every word of the list alone, so a
    word's ids never depend on its sentence; a task's sentences reuse few word forms (4,000 generated sentences:
    0.5 s of tokenizer calls sentence by sentence, 0.01 s memoised)."""

    def __init__(self, tokenizer):
        self.tokenizer, self.known = tokenizer, {}

    def __call__(self, words: list[str]) -> list[list[int]]:
        new = [w for w in dict.fromkeys(words) if w not in self.known]
        if new:
            self.known.update(zip(new, self.tokenizer(new, add_special_tokens=False)["input_ids"]))
        return [self.known[w] for w in words]


def windows_for(tokenizer, words: list[str], label_ids: list[int], sentence: int,
                max_length: int = 128, stride: int = 64, pieces_of: WordPieces | None = None) -> list[Window]:
    """Encode one sentence into one or more windows of at most `max_length` ids (with [CLS]/[SEP]); `pieces_of`
    shares one memo of word ids across the sentences of a file."""
    encoded = (pieces_of or WordPieces(tokenizer))(words)  # one list of ids per word
    pieces = [ids or [tokenizer.unk_token_id] for ids in encoded]
    flat, first_of = [], []
    for w, ids in enumerate(pieces):
        first_of += [w] + [-1] * (len(ids) - 1)
        flat += ids
    body = max_length - 2
    out, start = [], 0
    while True:  # left context never exceeds half a window, so every window predicts something new
        context = 0 if start == 0 else min(stride, start, body // 2)
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
    """Dynamic padding to the longest window of the batch, plus the positions of the words each window
    predicts (`word_pos`, `word_mask`, `word_labels`: [B, W]) so heads work on words, not subwords."""
    length = max(len(w.input_ids) for w in windows)
    width = max(1, max(sum(1 for x in w.words if x >= 0) for w in windows))
    ids = torch.full((len(windows), length), pad_id, dtype=torch.long)
    word_pos = torch.zeros((len(windows), width), dtype=torch.long)
    word_labels = torch.full((len(windows), width), IGNORE, dtype=torch.long)
    for i, w in enumerate(windows):
        ids[i, : len(w.input_ids)] = torch.tensor(w.input_ids)
        positions = [p for p, x in enumerate(w.words) if x >= 0]
        word_pos[i, : len(positions)] = torch.tensor(positions, dtype=torch.long)
        word_labels[i, : len(positions)] = torch.tensor([w.labels[p] for p in positions], dtype=torch.long)
    word_mask = torch.arange(width).unsqueeze(0) < torch.tensor([[sum(1 for x in w.words if x >= 0)] for w in windows])
    return {"input_ids": ids, "attention_mask": (ids != pad_id).long(), "word_pos": word_pos,
            "word_mask": word_mask, "word_labels": word_labels}


def gather_words(hidden: torch.Tensor, word_pos: torch.Tensor) -> torch.Tensor:
    """[B, S, H] subword vectors → [B, W, H] vectors of the words' first subwords."""
    return hidden.gather(1, word_pos.unsqueeze(-1).expand(-1, -1, hidden.shape[-1]))


class TaggingHead(nn.Module):
    """Dropout + linear over word vectors (as BertForTokenClassification); with `lstm_hidden`, a 2-layer
    BiLSTM first (feature-based mode); with `crf`, a linear-chain CRF on top (K et al.'s BiLSTM-CRF)."""

    def __init__(self, n_in: int, n_labels: int, dropout: float = 0.1, lstm_hidden: int | None = None,
                 crf: bool = False):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        self.lstm = BiLSTM(n_in, lstm_hidden) if lstm_hidden else None
        self.linear = nn.Linear(self.lstm.n_out if self.lstm else n_in, n_labels)
        self.crf = CRF(n_labels) if crf else None

    def forward(self, hidden: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        words = self.dropout(gather_words(hidden, batch["word_pos"]))
        if self.lstm is not None:
            words = self.dropout(self.lstm(words, batch["word_mask"]))
        return self.linear(words)  # [B, W, n_labels]

    def loss(self, emissions: torch.Tensor, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        if self.crf is None:
            return nn.functional.cross_entropy(emissions.flatten(0, 1), batch["word_labels"].flatten(),
                                               ignore_index=IGNORE)
        mask = batch["word_mask"] & (batch["word_labels"] != IGNORE)
        rows = mask[:, 0]  # CRF rows need a non-empty prefix of known labels
        return self.crf.nll(emissions[rows], batch["word_labels"][rows], mask[rows])

    def decode(self, emissions: torch.Tensor, batch: dict[str, torch.Tensor]) -> list[list[int]]:
        mask = batch["word_mask"]
        if self.crf is not None:
            rows = mask[:, 0]
            paths = iter(self.crf.decode(emissions[rows], mask[rows]) if bool(rows.any()) else [])
            return [next(paths) if r else [] for r in rows.tolist()]
        best = emissions.argmax(-1).tolist()
        return [row[: int(n)] for row, n in zip(best, mask.sum(1))]


def collect(paths: list[list[int]], windows: list[Window], predictions: dict[int, dict[int, int]]) -> None:
    """Label ids per predicted word of each window, gathered as predictions[sentence][word] = label id."""
    for path, window in zip(paths, windows):
        for word, label in zip((x for x in window.words if x >= 0), path):
            predictions.setdefault(window.sentence, {})[word] = label
