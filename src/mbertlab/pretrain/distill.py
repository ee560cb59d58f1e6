"""Teacher–student distillation (Limisiewicz, Malkin & Stanovsky 2023, §3): the objective `Distiller`.

The student's loss at each masked position is the soft-label loss of their Eq. 2, KL(P_teacher ‖ P_student)
over the vocabulary, against the frozen monolingual teacher of the row's language, optionally mixed with
the hard-label loss: `w·hard + (1 − w)·soft`. Both distributions are softmaxes at temperature T and the KL
is multiplied by T² (Hinton et al. 2015), so the soft gradient keeps its size when T changes; at T = 1
(the paper's setting) the scaling is a no-op.

Teachers either run beside the student (frozen, `inference_mode`, on the run's device under its autocast: bf16
where the device has it) or are read from a top-k cache written once by `cache_teacher_topk_into`. Their balance
measure (Eq. 3) is in `pretrain.balance`.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import Field

from mbertlab.config import Config, content_hash
from mbertlab.errors import ConfigError, DataError
from mbertlab.pretrain.checkpoint import TrainState
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import Batch, MicroBatch, Selection, training_data
from mbertlab.pretrain.model import load_model, logits_at
from mbertlab.runtime import attention_for, autocast_factory, ran_on, resolve_device, resolve_precision, to_device
from mbertlab.tokenizers.shards import ShardReader, dtype_for

Reduction = Literal["mean", "sum", "none"]
CPU = torch.device("cpu")

# Config keys that decide which batches and masks a run draws: a cache is valid for a student that agrees.
DATA_KEYS = ("seed", "batch_size", "accumulation", "seq_len", "mask_prob", "selection", "alpha", "mixing",
             "layout", "nsp", "markers", "permute", "temperature")


# ---- losses ----------------------------------------------------------------------------------

def _scaled(logits: torch.Tensor, temperature: float) -> torch.Tensor:
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
    log_q = F.log_softmax(_scaled(teacher_logits, temperature), dim=-1)  # [M, V]
    q = log_q.exp()
    cross = F.cross_entropy(_scaled(student_logits, temperature), q, reduction="none")  # −Σ q log p, [M]
    return _reduce(temperature ** 2 * (cross + (q * log_q).sum(-1)), reduction)


def topk_soft_label_loss(student_logits: torch.Tensor, ids: torch.Tensor, probs: torch.Tensor,
                         temperature: float = 1.0, reduction: Reduction = "mean") -> torch.Tensor:
    """The same loss against a teacher known only by its top k: ids and probabilities [M, k], the latter
    renormalised to sum to 1 (with k = V this is the exact loss, up to the probabilities' storage)."""
    log_p = F.log_softmax(_scaled(student_logits, temperature), dim=-1).gather(1, ids.long())  # [M, k]
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


# ---- the top-k cache -------------------------------------------------------------------------

def data_fingerprint(config: PretrainConfig, shards: ShardReader) -> dict:
    return {"config": {key: getattr(config, key) for key in DATA_KEYS}, "shards": content_hash(shards.info)}


class TeacherCacheConfig(Config):
    """The store key of a teacher cache: the student config (a student with other optimiser settings can still
    read the cache: its check is `data_fingerprint`), k, and the shards' fingerprint."""
    student: PretrainConfig
    k: int = Field(ge=1)
    data: dict


def cache_teacher_topk_into(config: PretrainConfig, shards_dir: Path, out: Path, k: int) -> None:
    """Run each teacher once over the micro-batches that a student with this config draws, keeping the top k
    of softmax(teacher / T) at every masked position, so students can be trained repeatedly without teachers.

    Determinism: a run's batches and masks are a pure function of its DATA_KEYS and the shards (the loop's
    TrainState seeds the data and mask generators from `seed`; nothing else draws from them; resume restores
    them). So the micro-batch with global index n = (step − 1)·accumulation + i of every student that agrees
    on those keys is the n-th one replayed here, and the cache is keyed by n. A student checks the fingerprint
    and, at every micro-batch, the gold ids of its masked positions against the stored ones.

    Files in `out`: meta.json; offsets.npy [n_micro + 1] (rows of micro-batch n are offsets[n]:offsets[n+1],
    its masked positions in row-major order); ids.bin [N, k] (uint16, or uint32 for vocabularies over 65536);
    probs.bin [N, k] float16 (not renormalised: their sum is the teacher's mass in its top k); labels.bin [N]
    int32 (gold ids).
    """
    shards = ShardReader(shards_dir)
    if not 1 <= k <= shards.vocab_size:
        raise ConfigError(f"teacher cache: k must be in 1..{shards.vocab_size} (the vocabulary), got {k}")
    device = resolve_device(config.device)
    precision = resolve_precision(config.precision, device)
    out, id_dtype = Path(out), dtype_for(shards.vocab_size)
    offsets = _write_topk(config, shards, load_teachers(config.teachers, shards, device),
                          autocast_factory(device, precision), k, id_dtype, out)
    np.save(out / "offsets.npy", np.asarray(offsets, dtype=np.int64))
    meta = {"k": k, "vocab_size": shards.vocab_size, "ids_dtype": id_dtype.name, "micro_batches": len(offsets) - 1,
            "teachers": dict(config.teachers), "data": data_fingerprint(config, shards), **ran_on(device, precision)}
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")


def _write_topk(config: PretrainConfig, shards: ShardReader, teachers: dict, autocast, k: int, id_dtype,
                out: Path) -> list[int]:
    """ids.bin, probs.bin, labels.bin of every micro-batch (drawn on the CPU, scored on the teachers' device);
    returns the offsets."""
    sampler, masker = training_data(config, shards)
    state, rows, offsets = TrainState(config), config.batch_size // config.accumulation, [0]
    device = next(iter(teachers.values())).device
    with (out / "ids.bin").open("wb") as ids, (out / "probs.bin").open("wb") as probs, \
            (out / "labels.bin").open("wb") as gold:
        for index in range(config.steps * config.accumulation):
            micro = state.draw(sampler, masker, rows, index).shard(0, 1).to(device)
            selected = micro.selection()
            with autocast():
                logits = teacher_logits(teachers, micro.batch.langs, micro.batch, micro.inputs, selected)  # [M, V]
            top = F.softmax(_scaled(logits, config.temperature), -1).topk(k, dim=-1)  # [M, k], most probable first
            ids.write(top.indices.cpu().numpy().astype(id_dtype).tobytes())
            probs.write(top.values.float().cpu().numpy().astype(np.float16).tobytes())
            gold.write(selected.host_gold.numpy().astype(np.int32).tobytes())
            offsets.append(offsets[-1] + len(logits))
    return offsets


class TopkCache:
    """Read side of `cache_teacher_topk_into` (memory-mapped)."""

    def __init__(self, path: str | Path, config: PretrainConfig, shards: ShardReader):
        self.path = Path(path)
        if not (self.path / "meta.json").is_file():
            raise ConfigError(f"teacher_cache: {self.path} has no meta.json (not a cache_teacher_topk_into output)")
        meta = json.loads((self.path / "meta.json").read_text(encoding="utf-8"))
        wanted = json.loads(json.dumps(data_fingerprint(config, shards)))  # tuples -> lists, as stored
        if meta["data"] != wanted:
            raise ConfigError(f"teacher_cache: {self.path} was built for other data or settings "
                              f"({meta['data']}); this run has {wanted}")
        if config.teachers and config.teachers != meta["teachers"]:
            raise ConfigError(f"teacher_cache: {self.path} holds teachers {meta['teachers']}, not {config.teachers}")
        if meta["micro_batches"] < config.steps * config.accumulation:
            raise ConfigError(f"teacher_cache: {self.path} covers {meta['micro_batches']} micro-batches, "
                              f"the run needs {config.steps * config.accumulation}")
        self.offsets = np.load(self.path / "offsets.npy")
        n, k = int(self.offsets[-1]), meta["k"]
        self.ids = np.memmap(self.path / "ids.bin", dtype=meta["ids_dtype"], mode="r", shape=(n, k))
        self.probs = np.memmap(self.path / "probs.bin", dtype=np.float16, mode="r", shape=(n, k))
        self.labels = np.memmap(self.path / "labels.bin", dtype=np.int32, mode="r", shape=(n,))

    def targets(self, index: int, selection: Selection, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
        """(ids [M, k], probs [M, k]) of a selection of micro-batch `index` (one rank's slice: its positions start
        `selection.before` into the micro-batch's), on `device`, after checking its gold ids on the CPU."""
        a = int(self.offsets[index]) + selection.before
        b = a + len(selection.host_gold)
        if b > int(self.offsets[index + 1]) or not np.array_equal(self.labels[a:b], selection.host_gold.numpy()):
            raise DataError(self.path / "labels.bin", None, f"micro-batch {index}: masked positions differ from "
                            "this run's (the cache was built for other batches)")
        ids = torch.from_numpy(self.ids[a:b].astype(np.int64))  # [M, k]
        probs = torch.from_numpy(self.probs[a:b].astype(np.float32))  # [M, k]
        return to_device(ids, device), to_device(probs, device)


# ---- the objective in the loop ---------------------------------------------------------------

class Distiller:
    """The distillation objective (a `pretrain.objective.Objective`): live teachers or a top-k cache. Under data
    parallelism every rank distils its own rows (teachers are not part of the module DDP wraps)."""

    def __init__(self, temperature: float, hard_weight: float, teachers: dict[str, torch.nn.Module] | None = None,
                 cache: TopkCache | None = None):
        self.temperature, self.hard_weight = temperature, hard_weight
        self.teachers, self.cache = teachers, cache

    @classmethod
    def from_config(cls, config: PretrainConfig, shards: ShardReader, device: torch.device = CPU) -> Distiller:
        if config.nsp:
            raise ConfigError("pretrain: objective distill does not combine with nsp (the teachers predict tokens)")
        if config.teacher_cache:
            return cls(config.temperature, config.hard_weight, cache=TopkCache(config.teacher_cache, config, shards))
        return cls(config.temperature, config.hard_weight, teachers=load_teachers(config.teachers, shards, device))

    def loss(self, model, micro: MicroBatch) -> torch.Tensor:
        """The micro-batch's (or slice's) sums over its masked positions divided by the whole micro-batch's number
        of masked positions (as `pretraining_loss`)."""
        batch, inputs, selected = micro.batch, micro.inputs, micro.selection()
        student = logits_at(model, inputs, selected.positions, batch.attention_mask, batch.token_type_ids)
        if self.cache is not None:
            ids, probs = self.cache.targets(micro.index, selected, inputs.device)
            soft = topk_soft_label_loss(student, ids, probs, self.temperature, "sum")
        else:
            langs = batch.langs or [batch.lang] * len(inputs)  # a batch built by hand may not list them
            teacher = teacher_logits(self.teachers, langs, batch, inputs, selected)
            soft = soft_label_loss(student, teacher, self.temperature, "sum")
        if not self.hard_weight:  # soft labels only (the paper's students): no cross-entropy to compute
            return soft / selected.total
        hard = F.cross_entropy(student.float(), selected.gold, reduction="sum")
        return mixed_loss(hard, soft, self.hard_weight) / selected.total
