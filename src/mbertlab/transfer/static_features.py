"""Frozen static word-piece vectors (word2vec, GloVe) as an encoder of the transfer stage's `feature` mode.

A static model directory is a tokenizer directory plus `static_vectors.npy` ([vocabulary, dim], row i =
the vector of token id i) and `static_encoder.json`. `load_encoder` recognises it, so XNLI and MLDoc run
on static vectors through the same BiLSTM + max-pooling head as a frozen BERT (Liu et al. 2020's
BERT vs GloVe vs word2vec comparison). Ids the static model never saw ([CLS], [SEP], [UNK], unseen
pieces) get a fixed random vector of the vectors' average norm, so segment boundaries stay visible;
[PAD] is zero.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
from torch import nn

from mbertlab.errors import DataError

VECTORS_FILE = "static_vectors.npy"
INFO_FILE = "static_encoder.json"


def is_static_dir(path: Path) -> bool:
    return (Path(path) / VECTORS_FILE).is_file()


def vectors_by_id(tokenizer, vectors: dict[str, np.ndarray], seed: int = 0) -> tuple[np.ndarray, int]:
    """[vocabulary, dim] matrix in the tokenizer's id order, and how many ids had a trained vector."""
    if not vectors:
        raise DataError(Path("."), None, "at least one static vector")
    dim = len(next(iter(vectors.values())))
    vocab = tokenizer.get_vocab()
    size = max(vocab.values()) + 1
    trained = np.stack(list(vectors.values())).astype(np.float32)
    norm = float(np.linalg.norm(trained, axis=1).mean())
    rng = np.random.default_rng(seed)
    fill = rng.standard_normal((size, dim)).astype(np.float32)
    matrix = fill / np.linalg.norm(fill, axis=1, keepdims=True) * norm
    found = 0
    for token, i in vocab.items():
        if token in vectors:
            matrix[i] = vectors[token]
            found += 1
    if tokenizer.pad_token_id is not None:
        matrix[tokenizer.pad_token_id] = 0.0
    return matrix, found


def write_static_dir(tokenizer, vectors: dict[str, np.ndarray], out: Path, method: str, seed: int = 0) -> dict:
    """Save tokenizer + id-ordered vectors into `out` (a directory `load_encoder` accepts)."""
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(out))
    matrix, found = vectors_by_id(tokenizer, vectors, seed)
    np.save(out / VECTORS_FILE, matrix)
    info = {"method": method, "dim": int(matrix.shape[1]), "ids": int(matrix.shape[0]), "trained_ids": found}
    (out / INFO_FILE).write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


class StaticEncoder(nn.Module):
    """Looks ids up in a frozen table; answers like a Hugging Face encoder with zero transformer layers
    (`hidden_states` has one entry, the embeddings), so `Features` and its scalar mix work unchanged."""

    is_static = True  # Features accepts it in the frozen modes only

    def __init__(self, matrix: torch.Tensor):
        super().__init__()
        from transformers import PretrainedConfig

        self.embeddings = nn.Embedding.from_pretrained(matrix, freeze=True)
        self.config = PretrainedConfig(num_hidden_layers=0, hidden_size=int(matrix.shape[1]))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                output_hidden_states: bool = False, **_):
        from transformers.modeling_outputs import BaseModelOutput

        hidden = self.embeddings(input_ids)
        return BaseModelOutput(last_hidden_state=hidden, hidden_states=(hidden,) if output_hidden_states else None)


def load_static_encoder(path: Path, random_init: bool, seed: int):
    """(tokenizer, StaticEncoder). random_init: every row redrawn with the table's per-dimension std (control)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(path))
    matrix = torch.from_numpy(np.load(Path(path) / VECTORS_FILE))
    if random_init:
        gen = torch.Generator().manual_seed(seed)
        matrix = torch.randn(matrix.shape, generator=gen) * matrix.std(0, keepdim=True)
        if tokenizer.pad_token_id is not None:
            matrix[tokenizer.pad_token_id] = 0.0
    return tokenizer, StaticEncoder(matrix)
