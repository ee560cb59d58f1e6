"""Token shards: each language's text as one flat memory-mapped array of ids plus sentence offsets.

Written chunk by chunk (bounded memory); the `tokenizers` batch encoder uses every core.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
from pydantic import Field

from mbertlab.config import Config, LanguageName

CHUNK_LINES = 10_000


class ShardsConfig(Config):
    languages: list[LanguageName] = Field(min_length=1)
    splits: list[str] = Field(default_factory=lambda: ["train", "dev"])
    shift_ids: list[LanguageName] = Field(default_factory=list, description=(
        "Languages whose non-special ids move into a disjoint range (Dufter & Schütze's vocabulary-ID "
        "fake copy): the k-th listed language is offset by k·(vocab_size − n_specials)."))


def id_shifts(config: ShardsConfig, vocab_size: int, n_specials: int) -> dict[str, int]:
    """Offset added to every non-special id of each shifted language (0 for the others)."""
    unknown = sorted(set(config.shift_ids) - set(config.languages))
    if unknown:
        from mbertlab.errors import ConfigError
        raise ConfigError(f"shift_ids names languages not in languages: {unknown}")
    width = vocab_size - n_specials
    return {l: (config.shift_ids.index(l) + 1) * width if l in config.shift_ids else 0 for l in config.languages}


def shift_for(shards: str | Path | dict, lang: str) -> int:
    """The id offset of `lang` in a shards artifact (its folder, its shards.json or that dict); fine-tuning
    applies it to ids >= n_specials of task text so they match what pretraining saw."""
    if not isinstance(shards, dict):
        path = Path(shards)
        shards = json.loads((path / "shards.json" if path.is_dir() else path).read_text(encoding="utf-8"))
    return int(shards.get("shift", {}).get(lang, 0))


def apply_shift(ids: np.ndarray, shift: int, n_specials: int) -> np.ndarray:
    """Add `shift` to every non-special id (specials stay shared: [CLS], [SEP], [MASK] ...)."""
    ids = np.asarray(ids)
    return np.where(ids >= n_specials, ids + shift, ids) if shift else ids


def dtype_for(vocab_size: int) -> np.dtype:
    return np.dtype(np.uint16) if vocab_size <= np.iinfo(np.uint16).max + 1 else np.dtype(np.uint32)


def _chunks(path: Path):
    with path.open(encoding="utf-8") as f:
        chunk = []
        for line in f:
            chunk.append(line.rstrip("\n"))
            if len(chunk) == CHUNK_LINES:
                yield chunk
                chunk = []
        if chunk:
            yield chunk


def encode_file(tokenizer, path: Path, ids_path: Path, offsets_path: Path, dtype: np.dtype,
                shift: int = 0, n_specials: int = 0) -> tuple[int, int]:
    """Encode one text file; returns (sentences, tokens). Ids go to a raw temp file, then into the .npy."""
    raw = ids_path.with_suffix(".raw")
    lengths: list[int] = []
    with raw.open("wb") as out:
        for chunk in _chunks(path):
            encodings = tokenizer.encode_batch(chunk, add_special_tokens=False)
            for enc in encodings:
                out.write(apply_shift(np.asarray(enc.ids, dtype=np.int64), shift, n_specials).astype(dtype).tobytes())
                lengths.append(len(enc.ids))
    total = int(sum(lengths))
    ids = np.lib.format.open_memmap(ids_path, mode="w+", dtype=dtype, shape=(total,))
    if total:
        ids[:] = np.memmap(raw, dtype=dtype, mode="r", shape=(total,))
    ids.flush()
    del ids
    raw.unlink()
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    np.save(offsets_path, offsets)
    return len(lengths), total


def write_shards_into(config: ShardsConfig, tokenizer_dir: Path, texts: dict[str, dict[str, Path]], out: Path) -> None:
    """`texts[lang][split]` is a one-sentence-per-line file; writes the layout of docs/artifacts.md.
    `tokenizer_dir` is a tokenizer artifact or a Hugging Face encoder directory with a fast tokenizer (mBERT's)."""
    ours = (tokenizer_dir / "mbertlab_tokenizer.json").exists()
    released = None if ours else _released_tokenizer(tokenizer_dir)
    if released is not None and config.shift_ids:
        from mbertlab.errors import ConfigError
        raise ConfigError(f"{tokenizer_dir}: shift_ids needs a tokenizer trained here (it knows its special ids)")
    if ours:
        from tokenizers import Tokenizer
        tokenizer = Tokenizer.from_file(str(tokenizer_dir / "tokenizer.json"))
    else:
        tokenizer = released.backend_tokenizer
    base_size = tokenizer.get_vocab_size()
    n_specials = _n_specials(tokenizer_dir)
    shifts = id_shifts(config, base_size, n_specials)
    vocab_size = base_size + len(config.shift_ids) * (base_size - n_specials)
    dtype = dtype_for(vocab_size)
    info = {"languages": config.languages, "splits": config.splits, "dtype": dtype.name,
            "vocab_size": vocab_size, "tokens": {}, "sentences": {}}
    if config.shift_ids:
        info.update(shift=shifts, n_specials=n_specials, tokenizer_vocab_size=base_size)
    for lang in config.languages:
        info["tokens"][lang], info["sentences"][lang] = {}, {}
        for split in config.splits:
            n, total = encode_file(tokenizer, texts[lang][split], out / f"{lang}.{split}.ids.npy",
                                   out / f"{lang}.{split}.offsets.npy", dtype, shifts[lang], n_specials)
            info["sentences"][lang][split], info["tokens"][lang][split] = n, total
    if ours:
        shutil.copytree(tokenizer_dir, out / "tokenizer", ignore=shutil.ignore_patterns("config.json", "meta.json",
                                                                                         "inputs.json", "log.txt"))
    else:  # the tokenizer's files only, not the encoder's weights beside them
        released.save_pretrained(str(out / "tokenizer"))
    (out / "shards.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")


def _released_tokenizer(directory: Path):
    from transformers import AutoTokenizer

    from mbertlab.errors import ConfigError

    tokenizer = AutoTokenizer.from_pretrained(str(directory))
    if not tokenizer.is_fast:
        raise ConfigError(f"{directory}: the encoder's tokenizer has no fast (`tokenizers`) version to shard text with")
    return tokenizer


def _n_specials(tokenizer_dir: Path) -> int:
    meta = tokenizer_dir / "mbertlab_tokenizer.json"
    if not meta.exists():
        from mbertlab.tokenizers.train import SPECIALS
        return len(SPECIALS)
    return int(json.loads(meta.read_text(encoding="utf-8"))["specials"])


class ShardReader:
    """Random access to shards without loading them (memory-mapped)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.info = json.loads((self.path / "shards.json").read_text(encoding="utf-8"))
        self._cache: dict[tuple[str, str, str], np.ndarray] = {}

    @property
    def languages(self) -> list[str]:
        return list(self.info["languages"])

    @property
    def vocab_size(self) -> int:
        return int(self.info["vocab_size"])

    @property
    def tokenizer_dir(self) -> Path:
        return self.path / "tokenizer"

    def _load(self, lang: str, split: str, what: str) -> np.ndarray:
        key = (lang, split, what)
        if key not in self._cache:
            self._cache[key] = np.load(self.path / f"{lang}.{split}.{what}.npy", mmap_mode="r")
        return self._cache[key]

    def tokens(self, lang: str, split: str = "train") -> np.ndarray:
        return self._load(lang, split, "ids")

    def offsets(self, lang: str, split: str = "train") -> np.ndarray:
        return self._load(lang, split, "offsets")

    def num_sentences(self, lang: str, split: str = "train") -> int:
        return len(self.offsets(lang, split)) - 1

    def sentence(self, lang: str, split: str, i: int) -> np.ndarray:
        off = self.offsets(lang, split)
        return np.asarray(self.tokens(lang, split)[off[i]:off[i + 1]])

    def token_counts(self, split: str = "train") -> np.ndarray:
        """Occurrences of each id over all languages (for count^-0.5 masking)."""
        counts = np.zeros(self.vocab_size, dtype=np.int64)
        for lang in self.languages:
            counts += np.bincount(self.tokens(lang, split), minlength=self.vocab_size)
        return counts
