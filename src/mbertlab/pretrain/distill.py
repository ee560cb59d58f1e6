"""Teacher–student distillation (Limisiewicz, Malkin & Stanovsky 2023, §3): the losses and the teachers.

The student's loss at each masked position is the soft-label loss of their Eq. 2, KL(P_teacher ‖ P_student)
over the vocabulary, against the frozen monolingual teacher of the row's language, optionally mixed with
the hard-label loss: `w·hard + (1 − w)·soft`. Both distributions are softmaxes at temperature T and the KL
is multiplied by T² (Hinton et al. 2015), so the soft gradient keeps its size when T changes; at T = 1
(the paper's setting) the scaling is a no-op.

Teachers either run beside the student (frozen, `inference_mode`, on the run's device under its autocast: bf16
where the device has it) or are read from a top-k cache (`pretrain.teacher_cache`); the objective that uses
either is `pretrain.objective.Distiller`. Their balance measure (Eq. 3) is in `pretrain.balance`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Literal

import torch
import torch.nn.functional as F

from mbertlab.errors import ConfigError
from mbertlab.pretrain.data import Batch, Selection
from mbertlab.pretrain.model import load_model, logits_at
from mbertlab.runtime import attention_for, to_device
from mbertlab.tokenizers.shards import ShardReader

Reduction = Literal["mean", "sum", "none"]
CPU = torch.device("cpu")

# ---- losses ----------------------------------------------------------------------------------

def tempered(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """logits / T in at least fp32 (bf16 logits are compared in fp32; fp64 stays fp64, for gradcheck)."""
    logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
    return logits if temperature == 1.0 else logits / temperature


def _reduce(per_position: torch.Tensor, reduction: Reduction) -> torch.Tensor:
    return per_position.mean() if reduction == "mean" else per_position.sum() if reduction == "sum" else per_position


def soft_label_loss(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float = 1.0,
                    reduction: Reduction = "mean") -> torch.Tensor:
    """T²·KL(P_teacher ‖ P_student) at each of M positions (logits [M, V]; their Eq. 2), P = softmax(logits / T).

    Written as cross-entropy with probability targets plus the teacher's negative entropy: the fused kernel
    is 1.5x faster here than the elementwise KL, which matters at [M, V] per step."""
    log_q = F.log_softmax(tempered(teacher_logits, temperature), dim=-1)  # [M, V]
    q = log_q.exp()
    cross = F.cross_entropy(tempered(student_logits, temperature), q, reduction="none")  # −Σ q log p, [M]
    return _reduce(temperature ** 2 * (cross + (q * log_q).sum(-1)), reduction)


def topk_soft_label_loss(student_logits: torch.Tensor, ids: torch.Tensor, probs: torch.Tensor,
                         temperature: float = 1.0, reduction: Reduction = "mean") -> torch.Tensor:
    """The same loss against a teacher known only by its top k: ids and probabilities [M, k], the latter
    renormalised to sum to 1 (with k = V this is the exact loss, up to the probabilities' storage)."""
    log_p = F.log_softmax(tempered(student_logits, temperature), dim=-1).gather(1, ids.long())  # [M, k]
    q = probs.to(log_p.dtype)
    q = q / q.sum(-1, keepdim=True)
    return _reduce(temperature ** 2 * (torch.xlogy(q, q) - q * log_p).sum(-1), reduction)


def mixed_loss(hard: torch.Tensor, soft: torch.Tensor, hard_weight: float) -> torch.Tensor:
    """`w·hard + (1 − w)·soft` (the paper's students use w = 0: soft labels only)."""
    return hard_weight * hard + (1.0 - hard_weight) * soft


# ---- teachers --------------------------------------------------------------------------------

def resolve_teacher(path: str | Path) -> Path:
    """A Hugging Face masked-LM directory, or a pretrain artifact holding one in model/."""
    path = Path(path)
    for candidate in (path / "model", path):
        if (candidate / "config.json").is_file():
            return candidate
    raise ConfigError(f"teachers: {path} is neither a masked-LM directory nor a pretrain artifact with model/")


def load_teachers(teachers: dict[str, str], shards: ShardReader, device: torch.device = CPU
                  ) -> dict[str, torch.nn.Module]:
    """One frozen teacher per language of the shards, each with the shards' vocabulary, on `device`."""
    missing = sorted(set(shards.languages) - set(teachers))
    extra = sorted(set(teachers) - set(shards.languages))
    if missing or extra:
        raise ConfigError(f"teachers: need exactly the shards' languages {shards.languages} "
                          f"(missing {missing}, not in the shards {extra})")
    out = {}
    for lang, path in teachers.items():
        model = load_model(resolve_teacher(path), attention_for(device)).eval().requires_grad_(False).to(device)
        if model.config.vocab_size != shards.vocab_size:
            raise ConfigError(f"teachers: {lang}'s teacher has a vocabulary of {model.config.vocab_size}, "
                              f"the shards {shards.vocab_size}: teachers must share the student's vocabulary")
        out[lang] = model
    return out


@torch.inference_mode()
def teacher_logits(teachers: dict[str, torch.nn.Module], langs: list[str], batch: Batch, inputs: torch.Tensor,
                   selection: Selection) -> torch.Tensor:
    """Each row's teacher's logits [M, V] at the selected positions; rows grouped by language, the groups' indices
    found on the CPU from `langs` and the selection's host copy (no wait on the device)."""
    if len(set(langs)) == 1:
        return logits_at(teachers[langs[0]], inputs, selection.positions, batch.attention_mask, batch.token_type_ids)
    width, device = inputs.shape[1], inputs.device
    row_of = selection.host_positions // width  # [M], on the CPU
    out = None
    for lang in sorted(set(langs)):
        rows = torch.tensor([i for i, l in enumerate(langs) if l == lang])  # [R]
        where = torch.isin(row_of, rows).nonzero().squeeze(1)  # [M_lang]: their places in the output
        local = torch.searchsorted(rows, row_of[where]) * width + selection.host_positions[where] % width
        rows = to_device(rows, device)
        part = logits_at(teachers[lang], inputs[rows], to_device(local, device), _rows(batch.attention_mask, rows),
                         _rows(batch.token_type_ids, rows))  # [M_lang, V]
        if out is None:
            out = torch.empty(len(row_of), part.shape[1], dtype=part.dtype, device=part.device)
        out[to_device(where, device)] = part
    return out


def _rows(t: torch.Tensor | None, rows: torch.Tensor) -> torch.Tensor | None:
    return None if t is None else t[rows]
