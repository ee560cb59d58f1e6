"""Reusable layers of the task heads: scalar mix, BiLSTM, linear-chain CRF, MLP and biaffine scorer.

The CRF is written here (60 lines, checked against brute-force enumeration in the tests) rather than taken
from pytorch-crf, which has not been maintained since 2019.
"""
from __future__ import annotations

import torch
from torch import nn


class ScalarMix(nn.Module):
    """A softmax-normalised weighted sum of layers times a scale γ (ELMo; Wu & Dredze 2019's feature mode)."""

    def __init__(self, n_layers: int):
        super().__init__()
        self.weights = nn.Parameter(torch.zeros(n_layers))
        self.gamma = nn.Parameter(torch.ones(()))

    def forward(self, layers: list[torch.Tensor]) -> torch.Tensor:
        w = torch.softmax(self.weights, 0)
        return self.gamma * sum(wi * layer for wi, layer in zip(w, layers))


class BiLSTM(nn.Module):
    """A 2-layer bidirectional LSTM over padded sequences; padding does not leak into the states."""

    def __init__(self, n_in: int, hidden: int, layers: int = 2, dropout: float = 0.0):
        super().__init__()
        self.lstm = nn.LSTM(n_in, hidden, num_layers=layers, bidirectional=True, batch_first=True,
                            dropout=dropout if layers > 1 else 0.0)
        self.n_out = 2 * hidden

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        lengths = mask.sum(1).clamp(min=1).cpu()
        packed = nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        out, _ = self.lstm(packed)
        out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=x.shape[1])
        return out


class CRF(nn.Module):
    """Linear-chain CRF over label sequences whose valid positions form a prefix (mask)."""

    def __init__(self, n_labels: int):
        super().__init__()
        self.transitions = nn.Parameter(torch.zeros(n_labels, n_labels))  # [from, to]
        self.start = nn.Parameter(torch.zeros(n_labels))
        self.end = nn.Parameter(torch.zeros(n_labels))

    def nll(self, emissions: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Mean negative log-likelihood of the gold sequences; emissions [B, T, K], labels/mask [B, T]."""
        return (self._log_partition(emissions, mask) - self._score(emissions, labels, mask)).mean()

    def _score(self, emissions, labels, mask) -> torch.Tensor:
        labels = labels.masked_fill(~mask, 0)
        maskf = mask.float()
        emit = emissions.gather(2, labels.unsqueeze(-1)).squeeze(-1)
        trans = self.transitions[labels[:, :-1], labels[:, 1:]]
        score = self.start[labels[:, 0]] + (emit * maskf).sum(1) + (trans * maskf[:, 1:]).sum(1)
        last = labels.gather(1, (mask.sum(1) - 1).clamp(min=0).unsqueeze(1)).squeeze(1)
        return score + self.end[last]

    def _log_partition(self, emissions, mask) -> torch.Tensor:
        alpha = self.start + emissions[:, 0]
        for t in range(1, emissions.shape[1]):
            step = torch.logsumexp(alpha.unsqueeze(2) + self.transitions + emissions[:, t].unsqueeze(1), dim=1)
            alpha = torch.where(mask[:, t].unsqueeze(1), step, alpha)
        return torch.logsumexp(alpha + self.end, dim=1)

    @torch.no_grad()
    def decode(self, emissions: torch.Tensor, mask: torch.Tensor) -> list[list[int]]:
        """Viterbi: the best label sequence of each row, as long as its mask."""
        score = self.start + emissions[:, 0]
        back = []
        for t in range(1, emissions.shape[1]):
            best, idx = (score.unsqueeze(2) + self.transitions).max(dim=1)
            step = best + emissions[:, t]
            score = torch.where(mask[:, t].unsqueeze(1), step, score)
            back.append(idx)
        score = score + self.end
        paths = []
        for b in range(emissions.shape[0]):
            label = int(score[b].argmax())
            path = [label]
            for idx in reversed(back[: int(mask[b].sum()) - 1]):
                label = int(idx[b, label])
                path.append(label)
            paths.append(path[::-1])
        return paths


class MLP(nn.Module):
    def __init__(self, n_in: int, n_out: int, dropout: float = 0.0):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(n_in, n_out), nn.LeakyReLU(0.1), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class Biaffine(nn.Module):
    """s[b, o, i, j] = [x_i; 1]ᵀ W_o [y_j; 1] (Dozat & Manning 2017), bias terms by the appended ones."""

    def __init__(self, n_in: int, n_out: int = 1, bias_x: bool = True, bias_y: bool = True):
        super().__init__()
        self.bias_x, self.bias_y = bias_x, bias_y
        self.weight = nn.Parameter(torch.zeros(n_out, n_in + bias_x, n_in + bias_y))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        if self.bias_x:
            x = torch.cat([x, torch.ones_like(x[..., :1])], -1)
        if self.bias_y:
            y = torch.cat([y, torch.ones_like(y[..., :1])], -1)
        return torch.einsum("bxi,oij,byj->boxy", x, self.weight, y)
