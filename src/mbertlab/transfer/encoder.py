"""The encoder side of every task model: which weights train and which vectors the head sees.

finetune / random_init / freeze: the last layer, trained end to end (freeze: the bottom n frozen).
feature / bilstm_crf: a frozen encoder, a learned scalar mix of all layers (Wu & Dredze 2019).
probe: a frozen encoder, one layer (Limisiewicz et al. 2023's linear probes).
Also where a pretrain artifact keeps an earlier save (`checkpoint_dir`), for Wu & Dredze 2020's checkpoints.
"""
from __future__ import annotations

import contextlib
from pathlib import Path

import torch
from torch import nn

from mbertlab.errors import DataError
from mbertlab.runtime import attention_bias, attention_for, autocast_factory, resolve_precision
from mbertlab.tasks.layers import ScalarMix

FROZEN_MODES = ("feature", "bilstm_crf", "probe", "probe_random_init")
PROBE_MODES = ("probe", "probe_random_init")
RANDOM_INIT_MODES = ("random_init", "probe_random_init")  # the encoder's shape with fresh weights: controls
CPU = torch.device("cpu")


def load_encoder(encoder_dir: Path, random_init: bool, seed: int, device: torch.device = CPU):
    """The tokenizer and bare encoder (no MLM head, no pooler) of any Hugging Face encoder directory, or a
    static-vector table (transfer/static_features.py) for the frozen modes; the encoder on `device`."""
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from mbertlab.transfer.static_features import is_static_dir, load_static_encoder

    if is_static_dir(encoder_dir):  # frozen word2vec/GloVe vectors (feature mode)
        tokenizer, encoder = load_static_encoder(encoder_dir, random_init, seed)
        return tokenizer, encoder.to(device)
    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    attention = attention_for(device)
    if random_init:
        torch.manual_seed(seed)  # drawn on the CPU: the same weights on any device
        config = AutoConfig.from_pretrained(str(encoder_dir))
        encoder = AutoModel.from_config(config, attn_implementation=attention, add_pooling_layer=False)
    else:
        encoder = AutoModel.from_pretrained(str(encoder_dir), attn_implementation=attention, add_pooling_layer=False)
    return tokenizer, encoder.to(device)


def freeze_bottom(encoder: nn.Module, n: int) -> None:
    """Freeze the embeddings (layer 0) and the first n-1 transformer layers."""
    if n <= 0:
        return
    for p in encoder.embeddings.parameters():
        p.requires_grad_(False)
    for layer in encoder.encoder.layer[: n - 1]:
        for p in layer.parameters():
            p.requires_grad_(False)


def autocast(device: torch.device, precision: str = "auto"):
    """The encoder's autocast context: bf16 when asked for, or on auto where `device` runs bf16 natively
    (measured 2-3x faster on an AVX512-BF16 CPU)."""
    return autocast_factory(device, resolve_precision(precision, device))()


# Evaluation batches of a frozen encoder whose hidden states are kept, at most this many bytes per run.
EVAL_CACHE_BYTES = 1 << 30


class Features(nn.Module):
    """Subword vectors [B, S, H] in fp32 for a mode; heads stay in fp32, the encoder runs under autocast.

    A frozen encoder gives the same states for the same batch, and every evaluation scores the same batches
    again: in eval mode they are computed once and kept (up to EVAL_CACHE_BYTES), so a probe that evaluates
    after every epoch runs the encoder over its test files once. The outputs are the very same tensors.
    """

    def __init__(self, encoder: nn.Module, mode: str, layer: int = -1, freeze_layers: int = 0,
                 precision: str = "auto"):
        super().__init__()
        self.precision = precision
        if getattr(encoder, "is_static", False) and mode not in FROZEN_MODES:
            from mbertlab.errors import ConfigError

            raise ConfigError(f"transfer mode {mode!r}: static vectors work in {', '.join(FROZEN_MODES)} only")
        self.encoder = encoder
        self.frozen = mode in FROZEN_MODES
        self.mix = ScalarMix(encoder.config.num_hidden_layers + 1) if mode in ("feature", "bilstm_crf") else None
        self.layer = layer if mode in PROBE_MODES else None
        self.n_out = encoder.config.hidden_size
        self._kept: dict[tuple, tuple[torch.Tensor, ...]] = {}
        self._kept_bytes = 0
        if self.frozen:
            encoder.requires_grad_(False)
        elif mode == "freeze":
            freeze_bottom(encoder, freeze_layers)

    def train(self, mode: bool = True) -> "Features":
        super().train(mode)
        if self.frozen:
            self.encoder.eval()  # no dropout in a frozen feature extractor
        return self

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor,
                token_type_ids: torch.Tensor | None = None) -> torch.Tensor:
        batch = (input_ids, attention_mask, token_type_ids)
        if not self.frozen or self.training:
            return self._combine(self._states(*batch))
        key = tuple(None if t is None else (tuple(t.shape), t.cpu().numpy().tobytes()) for t in batch)
        states = self._kept.get(key)
        if states is None:
            states = self._states(*batch)
            size = sum(h.element_size() * h.nelement() for h in states)
            if self._kept_bytes + size <= EVAL_CACHE_BYTES:
                self._kept[key] = states
                self._kept_bytes += size
        return self._combine(states)

    def _combine(self, states: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return self.mix(list(states)) if self.mix is not None else states[0]

    def _states(self, input_ids, attention_mask, token_type_ids) -> tuple[torch.Tensor, ...]:
        """Every layer's states (the scalar mix) or the one layer the mode uses, in fp32."""
        every = self.mix is not None or self.layer is not None
        grad = torch.no_grad() if self.frozen else contextlib.nullcontext()
        types = {} if token_type_ids is None else {"token_type_ids": token_type_ids}
        attention = getattr(getattr(self.encoder, "config", None), "_attn_implementation", None)
        if attention is not None:  # a BERT: its 4-D mask made here, without a read of the device
            attention_mask = attention_bias(attention_mask, attention)
        with grad, autocast(input_ids.device, self.precision):
            out = self.encoder(input_ids=input_ids, attention_mask=attention_mask, output_hidden_states=every, **types)
        if self.mix is not None:
            return tuple(h.float() for h in out.hidden_states)
        if self.layer is not None:
            return (out.hidden_states[self.layer].float(),)
        return (out.last_hidden_state.float(),)


def checkpoint_dir(pretrain: Path, step: int) -> Path:
    """The checkpoint's directory in a pretrain artifact's folder; a missing one names the kept ones, since only
    the newest few are kept."""
    path = pretrain / "checkpoints" / f"step-{step}"
    if not (path / "config.json").is_file():
        kept = sorted(p.name for p in (pretrain / "checkpoints").glob("step-*"))
        raise DataError(path, None, f"no such checkpoint (kept: {', '.join(kept) or 'none'}; raise the pretrain "
                        "config's keep_checkpoints to keep every save)")
    return path
