"""The biaffine dependency parser head of Dozat & Manning (2017) over first-subword vectors.

Arc MLPs + biaffine give s_arc[dependent, head]; label MLPs + a bilinear layer per relation give
s_rel[dependent, head, relation]. Position 0 is the root, represented by the [CLS] vector. Decoding is
always a well-formed tree with one root (`decode_mst`); labels are the best relation for the chosen head
under UD's rule that `root` is the relation of the word attached to 0 and of no other word (`root_label`).
"""
from __future__ import annotations

import torch
from torch import nn

from mbertlab.tasks.layers import MLP, Biaffine, BiLSTM
from mbertlab.tasks.parsing.decode import decode_mst

IGNORE = -100


class BiaffineHead(nn.Module):
    def __init__(self, n_in: int, n_rels: int, arc_mlp: int = 500, label_mlp: int = 100, dropout: float = 0.33,
                 n_upos: int | None = None, upos_dim: int = 50, lstm_hidden: int | None = None,
                 root_label: int | None = None):
        super().__init__()
        self.root_label = root_label  # the id of `root`; None when training had no such relation
        self.upos = nn.Embedding(n_upos + 1, upos_dim) if n_upos else None  # + 1: the root's tag
        n_in += upos_dim if n_upos else 0
        self.lstm = BiLSTM(n_in, lstm_hidden) if lstm_hidden else None
        n_in = self.lstm.n_out if self.lstm else n_in
        self.dropout = nn.Dropout(dropout)
        self.arc_dep, self.arc_head = MLP(n_in, arc_mlp, dropout), MLP(n_in, arc_mlp, dropout)
        self.rel_dep, self.rel_head = MLP(n_in, label_mlp, dropout), MLP(n_in, label_mlp, dropout)
        self.arc = Biaffine(arc_mlp, 1, bias_x=True, bias_y=False)
        self.rel = Biaffine(label_mlp, n_rels, bias_x=True, bias_y=True)

    def forward(self, hidden: torch.Tensor, batch: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
        """hidden [windows, S, H] → s_arc [B, N+1, N+1] (dependent, head), s_rel [B, N+1, N+1, R]."""
        x = hidden.flatten(0, 1)[batch["gather_index"]]  # [B, N+1, H]; row 0 is the root
        mask = batch["word_mask"]
        if self.upos is not None:
            x = torch.cat([x, self.upos(batch["upos"])], -1)
        if self.lstm is not None:
            x = self.lstm(x, mask)
        x = self.dropout(x)
        s_arc = self.arc(self.arc_dep(x), self.arc_head(x)).squeeze(1)
        s_arc = s_arc.masked_fill(~mask.unsqueeze(1), float("-inf"))
        s_rel = self.rel(self.rel_dep(x), self.rel_head(x)).permute(0, 2, 3, 1)
        return s_arc, s_rel

    def loss(self, scores: tuple[torch.Tensor, torch.Tensor], batch: dict[str, torch.Tensor]) -> torch.Tensor:
        s_arc, s_rel = scores
        dep = batch["heads"] != IGNORE
        heads = batch["heads"][dep]
        arc_loss = nn.functional.cross_entropy(s_arc[dep], heads)
        rel_scores = s_rel[dep][torch.arange(len(heads), device=heads.device), heads]  # relations at the gold head
        return arc_loss + nn.functional.cross_entropy(rel_scores, batch["rels"][dep])

    def decode(self, scores: tuple[torch.Tensor, torch.Tensor], batch: dict[str, torch.Tensor]
               ) -> list[tuple[list[int], list[int]]]:
        """(heads, relation ids) of each sentence; heads are 0 for the root, words numbered from 1."""
        s_arc, s_rel = scores
        out = []
        for b, n in enumerate((batch["word_mask"].sum(1) - 1).tolist()):
            log_probs = torch.log_softmax(s_arc[b, : n + 1, : n + 1], -1).double().cpu().numpy()
            heads = decode_mst(log_probs)  # MST on the CPU
            words = torch.arange(1, n + 1, device=s_rel.device)
            out.append((heads, self.relations(s_rel[b, words, torch.tensor(heads, device=s_rel.device)], heads)))
        return out

    def relations(self, scores: torch.Tensor, heads: list[int]) -> list[int]:
        """scores [n, R] of each word's relations at its chosen head → relation ids: `root` for the word
        whose head is 0, the best other relation for every other word."""
        if self.root_label is None:
            return scores.argmax(-1).tolist()
        best = scores.clone()
        best[:, self.root_label] = float("-inf")
        rels = best.argmax(-1)
        rels[torch.tensor(heads, device=rels.device) == 0] = self.root_label
        return rels.tolist()
