"""What a pretraining run costs, by formula, without building its model: parameters, tokens, FLOPs.

Passes over each language's text count the tokens a run takes against the tokens of its text (`study plan`).

The parameter count is Hugging Face `BertForMaskedLM`'s (tied embeddings, no pooler), or
`BertForPreTraining`'s with next-sentence prediction; tests compare it with the models themselves. The FLOPs
follow the usual 6 × weights per token (forward 2, backward 4) with the attention scores and the MLM head at
the masked positions only, as `pretrain.model` runs it (docs/devices.md, "Planning a run").
"""
from __future__ import annotations

from mbertlab.pretrain.config import ModelShape, PretrainConfig

TOKEN_TYPES = 2  # BertConfig's type_vocab_size (segment A / B)


def intermediate(shape: ModelShape) -> int:
    return shape.intermediate or 4 * shape.hidden


def layer_weights(shape: ModelShape) -> int:
    """Weights of the matmuls of one encoder layer (Q, K, V, output; FFN in and out), without biases."""
    return 4 * shape.hidden ** 2 + 2 * shape.hidden * intermediate(shape)


def bert_parameters(shape: ModelShape, vocab_size: int, nsp: bool = False) -> int:
    """Parameters of the model `pretrain.model.new_model` builds (tied input and output embeddings)."""
    h, i = shape.hidden, intermediate(shape)
    embeddings = (vocab_size + shape.max_positions + TOKEN_TYPES) * h + 2 * h  # + LayerNorm
    layer = layer_weights(shape) + 4 * h + i + h + 2 * (2 * h)  # biases: q k v o, FFN in, FFN out; 2 LayerNorms
    head = h * h + h + 2 * h + vocab_size  # transform dense + LayerNorm, decoder bias (its weight is tied)
    pretraining = (h * h + h) + (2 * h + 2) if nsp else 0  # pooler, seq_relationship
    return embeddings + shape.layers * layer + head + pretraining


def tokens_processed(config: PretrainConfig) -> int:
    """Token positions the loop consumes (padding included): `batch_size` already counts every accumulation
    micro-batch of a step. With `patience` the run may stop earlier: this is its most."""
    return config.steps * config.batch_size * config.seq_len


def flops_per_token(config: PretrainConfig, vocab_size: int) -> float:
    """Training FLOPs per token position: 6 × the encoder's matmul weights, 6 × 2 × seq_len × hidden per
    layer for attention scores and values, and the MLM head (transform and decoder) at the masked share of
    positions only. Embedding lookups, norms and the NSP head are left out (under 1% at BERT's shapes)."""
    shape = config.model
    encoder = 6 * shape.layers * layer_weights(shape)
    attention = 12 * shape.layers * config.seq_len * shape.hidden
    head = 6 * config.mask_prob * (shape.hidden ** 2 + vocab_size * shape.hidden)
    return encoder + attention + head


def checkpoint_bytes(parameters: int, keep: int) -> int:
    """Disk of a finished run: the fp32 model, and `keep` checkpoints of model plus AdamW's two moments."""
    return 4 * parameters * (1 + 3 * keep)


def resolved(config: PretrainConfig, text: dict[str, float] | None) -> PretrainConfig:
    """The config at the steps a run by `epochs` takes on this text (windows of seq_len, at least min_steps)."""
    if config.epochs is None or not text:
        return config
    steps = max(config.epochs * sum(text.values()) / config.seq_len / config.batch_size, config.min_steps or 0)
    return config.model_copy(update={"steps": max(1, round(steps))})


def passes(config: PretrainConfig, text: dict[str, float] | None) -> dict[str, float]:
    """Passes over each language's training text (in tokens): the tokens the run processes, shared among its
    languages as the loop samples them (p ∝ n^alpha), over that language's tokens. A run by `epochs` resolves
    its steps from the text (windows of seq_len, at least `min_steps`), as the loop does."""
    if not text or not all(n > 0 for n in text.values()):
        return {}
    tokens = tokens_processed(resolved(config, text))
    weights = {lang: n ** config.alpha for lang, n in text.items()}
    return {lang: tokens * weights[lang] / sum(weights.values()) / n for lang, n in text.items()}
