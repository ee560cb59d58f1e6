"""Masking statistics, permutation, and the masked-only head against HF's full head."""
from __future__ import annotations

import numpy as np
import torch
from transformers import AutoModelForMaskedLM

from mbertlab.pretrain.config import ModelShape
from mbertlab.pretrain.data import IGNORE, Masker, permute_pieces
from mbertlab.pretrain.model import mlm_loss, new_model
from mbertlab.tokenizers.train import CLS_ID, MASK_ID, PAD_ID, SEP_ID


def test_masking_rates_and_specials():
    vocab, n_special = 1000, 7
    gen = torch.Generator().manual_seed(0)
    ids = torch.randint(n_special, vocab, (256, 128), generator=gen)
    ids[:, 0], ids[:, -1], ids[:, 60:64] = CLS_ID, SEP_ID, PAD_ID
    inputs, labels = Masker(vocab, n_special, 0.15)(ids, gen)
    selected = labels != IGNORE
    eligible = (ids >= n_special).sum().item()
    assert abs(selected.sum().item() / eligible - 0.15) < 0.01
    assert not selected[:, 0].any() and not selected[:, -1].any() and not selected[:, 60:64].any()
    sel_inputs, sel_orig = inputs[selected], ids[selected]
    masked = (sel_inputs == MASK_ID).float().mean().item()
    kept = (sel_inputs == sel_orig).float().mean().item()
    random_ = 1 - masked - kept
    assert abs(masked - 0.8) < 0.02 and abs(kept - 0.1) < 0.02 and abs(random_ - 0.1) < 0.02
    assert torch.equal(inputs[~selected], ids[~selected])


def test_rare_selection_prefers_rare_tokens():
    vocab = 100
    counts = np.ones(vocab) * 1000
    counts[50:] = 10  # ids 50.. are rare
    ids = torch.cat([torch.full((64, 64), 10), torch.full((64, 64), 60)])
    gen = torch.Generator().manual_seed(1)
    _, uniform = Masker(vocab, 5, 0.15)(ids, gen)
    _, rare = Masker(vocab, 5, 0.15, counts)(ids, gen)
    def share(labels):
        return (labels == 60).sum().item() / (labels != IGNORE).sum().item()

    assert abs(share(uniform) - 0.5) < 0.05 and share(rare) > 0.8


def test_permutation():
    rng = np.random.default_rng(0)
    seq = np.arange(11)
    assert np.array_equal(permute_pieces(seq, 0.0, rng), seq)
    full = permute_pieces(seq, 1.0, rng)
    assert sorted(full) == list(seq) and (full != seq).sum() == 2 * (11 // 2)
    half = permute_pieces(np.arange(20), 0.5, rng)
    assert (half != np.arange(20)).sum() == 2 * 5


def test_masked_only_loss_equals_full_head_and_hf_reload(tmp_path):
    torch.manual_seed(0)
    model = new_model(ModelShape(layers=2, hidden=32, heads=2), 300).eval()
    ids = torch.randint(5, 300, (4, 16))
    inputs, labels = Masker(300, 5, 0.15)(ids, torch.Generator().manual_seed(0))
    full = model(input_ids=inputs, labels=labels).loss
    assert torch.allclose(mlm_loss(model, inputs, labels), full, atol=1e-5)
    model.save_pretrained(str(tmp_path))
    reloaded = AutoModelForMaskedLM.from_pretrained(str(tmp_path), attn_implementation="eager").eval()
    with torch.no_grad():
        assert torch.equal(reloaded(input_ids=inputs).logits, model(input_ids=inputs).logits)
