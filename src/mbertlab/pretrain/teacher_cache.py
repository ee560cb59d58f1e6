"""The teacher top-k cache (Limisiewicz et al. 2023's students, trained repeatedly without their teachers): written
once by `cache_teacher_topk_into`, read by `TopkCache`. Its file format is described at the writer."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from pydantic import Field

from mbertlab.config import Config, content_hash
from mbertlab.errors import ConfigError, DataError
from mbertlab.pretrain.checkpoint import TrainState
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.data import Selection, training_data, with_epoch_steps
from mbertlab.pretrain.distill import load_teachers, teacher_logits, tempered
from mbertlab.runtime import autocast_factory, ran_on, resolve_device, resolve_precision, to_device
from mbertlab.tokenizers.shards import ShardReader, dtype_for

# Config keys that decide which batches and masks a run draws: a cache is valid for a student that agrees.
DATA_KEYS = ("seed", "batch_size", "accumulation", "seq_len", "mask_prob", "selection", "alpha", "mixing",
             "layout", "nsp", "markers", "permute", "temperature")


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
    config = with_epoch_steps(config, shards)
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
            top = F.softmax(tempered(logits, config.temperature), -1).topk(k, dim=-1)  # [M, k], most probable first
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
