"""Training batches from token shards: XLM-style windows, word-piece permutation, MLM masking.

All randomness comes from generators passed in (their states are checkpointed), so a resumed run
draws exactly the batches an uninterrupted run would.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from mbertlab.corpus.sampling import sampling_probs
from mbertlab.tokenizers.shards import ShardReader
from mbertlab.tokenizers.train import MASK_ID

IGNORE = -100


@dataclass
class Batch:
    input_ids: torch.Tensor  # [B, S]
    labels: torch.Tensor  # [B, S], IGNORE except at selected positions
    lang: str


def permute_pieces(seq: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """Swap p·⌊L/2⌋ disjoint random pairs of positions (K et al. 2020 §3.2.2)."""
    n_pairs = int(p * (len(seq) // 2))
    if n_pairs == 0:
        return seq
    positions = rng.permutation(len(seq))[: 2 * n_pairs]
    out = seq.copy()
    out[positions[0::2]], out[positions[1::2]] = seq[positions[1::2]], seq[positions[0::2]]
    return out


class WindowSampler:
    """Random windows of `seq_len` tokens from one language's stream, the language drawn per batch."""

    def __init__(self, shards: ShardReader, split: str, seq_len: int, alpha: float, permute: dict[str, float]):
        self.shards, self.split, self.seq_len, self.permute = shards, split, seq_len, permute
        sizes = {l: len(shards.tokens(l, split)) for l in shards.languages}
        probs = sampling_probs(sizes, alpha)
        self.languages = list(probs)
        self.probs = np.array([probs[l] for l in self.languages])

    def draw(self, rng: np.random.Generator, batch_size: int) -> tuple[str, torch.Tensor]:
        lang = self.languages[int(rng.choice(len(self.languages), p=self.probs))]
        stream = self.shards.tokens(lang, self.split)
        starts = rng.integers(0, len(stream) - self.seq_len, size=batch_size)
        windows = np.stack([np.asarray(stream[s:s + self.seq_len], dtype=np.int64) for s in starts])
        if self.permute.get(lang, 0.0) > 0:
            windows = np.stack([permute_pieces(w, self.permute[lang], rng) for w in windows])
        return lang, torch.from_numpy(windows)


class Masker:
    """BERT masking: select mask_prob of the eligible positions, then 80% [MASK] / 10% random / 10% kept.

    Selection is uniform or ∝ count^-0.5 (favouring rare tokens, as XLM); special tokens never selected.
    """

    def __init__(self, vocab_size: int, n_specials: int, mask_prob: float, counts: np.ndarray | None = None):
        self.vocab_size, self.n_specials, self.mask_prob = vocab_size, n_specials, mask_prob
        weights = np.ones(vocab_size) if counts is None else np.maximum(counts, 1).astype(np.float64) ** -0.5
        weights[:n_specials] = 0.0
        self.weights = torch.tensor(weights, dtype=torch.float64)

    def __call__(self, ids: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        flat = ids.reshape(-1)
        w = self.weights[flat]
        eligible = int((w > 0).sum())
        k = max(1, round(self.mask_prob * eligible)) if eligible else 0
        labels = torch.full_like(flat, IGNORE)
        inputs = flat.clone()
        if k:
            chosen = torch.multinomial(w, k, replacement=False, generator=gen)
            labels[chosen] = flat[chosen]
            r = torch.rand(k, generator=gen)
            to_mask, to_random = chosen[r < 0.8], chosen[(r >= 0.8) & (r < 0.9)]
            inputs[to_mask] = MASK_ID
            inputs[to_random] = torch.randint(self.n_specials, self.vocab_size, (len(to_random),), generator=gen)
        return inputs.view_as(ids), labels.view_as(ids)
