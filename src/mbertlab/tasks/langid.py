"""Language identification from a frozen encoder, layer by layer (Wu & Dredze 2019, Fig. 2).

Each sentence is represented at layer l (0 = embeddings) by the mean of its subword vectors (specials
excluded); a linear softmax classifier per layer is fit by full-batch L-BFGS on standardised features.
"""
from __future__ import annotations

import torch
from torch import nn


@torch.inference_mode()
def layer_means(encoder, tokenizer, sentences: list[str], max_length: int = 128, batch_size: int = 64,
                precision: str = "auto") -> torch.Tensor:
    """[n_layers + 1, n_sentences, hidden] mean-pooled hidden states, in fp32, on the encoder's device."""
    from mbertlab.runtime import to_device
    from mbertlab.transfer.encoder import autocast

    encoder.eval()
    device = next(encoder.parameters()).device
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i]))
    out = None
    for start in range(0, len(order), batch_size):
        idx = order[start:start + batch_size]
        enc = tokenizer([sentences[i] for i in idx], truncation=True, max_length=max_length, padding=True,
                        return_tensors="pt", return_special_tokens_mask=True)
        enc = {k: to_device(v, device) for k, v in enc.items()}
        keep = (enc["attention_mask"].bool() & ~enc["special_tokens_mask"].bool()).unsqueeze(-1).float()
        with autocast(device, precision):
            states = encoder(input_ids=enc["input_ids"], attention_mask=enc["attention_mask"],
                             output_hidden_states=True).hidden_states
        pooled = torch.stack([(h.float() * keep).sum(1) / keep.sum(1).clamp(min=1) for h in states])
        if out is None:
            out = torch.zeros(pooled.shape[0], len(sentences), pooled.shape[-1], device=device)
        out[:, torch.tensor(idx).to(device)] = pooled
    return out


def fit_linear(x: torch.Tensor, y: torch.Tensor, n_classes: int, l2: float = 1e-4, steps: int = 100) -> nn.Linear:
    """A multinomial logistic regression (a linear softmax layer) on standardised x, on x's device."""
    torch.manual_seed(0)
    layer = nn.Linear(x.shape[1], n_classes).to(x.device)  # drawn on the CPU: the same start on any device
    opt = torch.optim.LBFGS(layer.parameters(), lr=1.0, max_iter=steps, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = nn.functional.cross_entropy(layer(x), y) + l2 * layer.weight.square().sum()
        loss.backward()
        return loss

    with torch.enable_grad():
        opt.step(closure)
    return layer


def accuracy_by_layer(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor, test_y: torch.Tensor,
                      n_classes: int) -> list[float]:
    """Test accuracy of a linear classifier per layer; inputs are [layers, n, hidden]."""
    scores = []
    for layer in range(train_x.shape[0]):
        mean, std = train_x[layer].mean(0), train_x[layer].std(0).clamp(min=1e-6)
        model = fit_linear((train_x[layer] - mean) / std, train_y, n_classes)
        with torch.no_grad():
            pred = model((test_x[layer] - mean) / std).argmax(-1)
        scores.append(float((pred == test_y).float().mean()))
    return scores
