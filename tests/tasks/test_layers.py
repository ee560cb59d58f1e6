"""Task layers against independent computations: the CRF by enumerating every label sequence."""
from __future__ import annotations

import itertools

import pytest
import torch

from mbertlab.tasks.layers import CRF, Biaffine, BiLSTM, ScalarMix


def _sequence_score(crf: CRF, emissions: torch.Tensor, labels: tuple[int, ...]) -> torch.Tensor:
    score = crf.start[labels[0]] + crf.end[labels[-1]]
    for t, y in enumerate(labels):
        score = score + emissions[t, y]
        if t:
            score = score + crf.transitions[labels[t - 1], y]
    return score


@pytest.mark.parametrize("seed", range(3))
def test_crf_likelihood_and_viterbi_equal_brute_force(seed):
    torch.manual_seed(seed)
    k, lengths = 3, [4, 2, 1]
    crf = CRF(k)
    for p in crf.parameters():
        torch.nn.init.normal_(p)
    emissions = torch.randn(len(lengths), max(lengths), k)
    mask = torch.arange(max(lengths)).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)
    labels = torch.randint(0, k, (len(lengths), max(lengths)))
    expected_nll, expected_paths = [], []
    for b, n in enumerate(lengths):
        scores = {seq: _sequence_score(crf, emissions[b], seq) for seq in itertools.product(range(k), repeat=n)}
        log_z = torch.logsumexp(torch.stack(list(scores.values())), 0)
        gold = tuple(labels[b, :n].tolist())
        expected_nll.append(log_z - scores[gold])
        expected_paths.append(list(max(scores, key=lambda s: scores[s].item())))
    assert crf.nll(emissions, labels, mask).item() == pytest.approx(torch.stack(expected_nll).mean().item(), abs=1e-5)
    assert crf.decode(emissions, mask) == expected_paths


def test_biaffine_equals_explicit_bilinear_form():
    torch.manual_seed(0)
    layer = Biaffine(3, 2, bias_x=True, bias_y=False)
    torch.nn.init.normal_(layer.weight)
    x, y = torch.randn(1, 4, 3), torch.randn(1, 4, 3)
    out = layer(x, y)
    xb = torch.cat([x, torch.ones(1, 4, 1)], -1)
    for o, i, j in itertools.product(range(2), range(4), range(4)):
        assert out[0, o, i, j].item() == pytest.approx((xb[0, i] @ layer.weight[o] @ y[0, j]).item(), abs=1e-5)


def test_scalar_mix_starts_as_the_mean_and_bilstm_ignores_padding():
    layers = [torch.full((1, 2, 3), float(v)) for v in (1, 2, 6)]
    assert torch.allclose(ScalarMix(3)(layers), torch.full((1, 2, 3), 3.0))
    torch.manual_seed(0)
    lstm = BiLSTM(3, 4)
    x = torch.randn(1, 5, 3)
    short = lstm(x[:, :3], torch.ones(1, 3, dtype=torch.bool))
    padded = lstm(torch.cat([x[:, :3], torch.randn(1, 2, 3)], 1), torch.tensor([[1, 1, 1, 0, 0]], dtype=torch.bool))
    assert torch.allclose(short, padded[:, :3], atol=1e-6)
