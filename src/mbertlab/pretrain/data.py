"""Training batches from token shards: XLM-style windows, word-piece permutation, MLM masking.

All randomness comes from generators passed in (their states are checkpointed), so a resumed run
draws exactly the batches an uninterrupted run would.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace

import numpy as np
import torch

from mbertlab.corpus.sampling import sampling_probs
from mbertlab.errors import ConfigError
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.runtime import to_device
from mbertlab.tokenizers.shards import ShardReader
from mbertlab.tokenizers.train import CLS_ID, MASK_ID, PAD_ID, SEP_ID

IGNORE = -100


@dataclass
class Batch:
    """One global micro-batch before masking; the optional fields exist for sentence pairs."""

    input_ids: torch.Tensor  # [B, S]
    lang: str
    token_type_ids: torch.Tensor | None = None  # [B, S], 0 for segment A, 1 for B
    attention_mask: torch.Tensor | None = None  # [B, S], 0 at padding
    nsp_labels: torch.Tensor | None = None  # [B], 0 = B follows A, 1 = B is a random sentence
    langs: list[str] | None = None  # [B], each row's language (set by the samplers; `lang` may be "mixed")

    def to(self, device) -> Batch:
        move = lambda t: to_device(t, device)  # noqa: E731
        return replace(self, input_ids=move(self.input_ids), token_type_ids=move(self.token_type_ids),
                       attention_mask=move(self.attention_mask), nsp_labels=move(self.nsp_labels))

    def rows(self, start: int, stop: int) -> Batch:
        """Rows start:stop (one rank's slice)."""
        part = lambda t: None if t is None else t[start:stop]  # noqa: E731
        return replace(self, input_ids=part(self.input_ids), token_type_ids=part(self.token_type_ids),
                       attention_mask=part(self.attention_mask), nsp_labels=part(self.nsp_labels),
                       langs=None if self.langs is None else self.langs[start:stop])


@dataclass
class Selection:
    """A slice's masked positions, found on the CPU when its batch is drawn: the step gathers them with indices
    and normalises by counts it never reads back from the device (a boolean mask or a count of a GPU tensor
    would make the host wait for the GPU)."""

    positions: torch.Tensor  # [M] flat indices into the slice's [B·S], row-major
    gold: torch.Tensor  # [M] their gold ids
    total: int  # masked positions in the whole micro-batch: the normaliser of every slice's loss
    before: int  # masked positions in the micro-batch's rows before this slice (its offset in the teacher cache)
    rows: int  # rows of the whole micro-batch: the normaliser of next-sentence prediction
    host_positions: torch.Tensor  # the positions and gold ids on the CPU (for language groups and cache checks)
    host_gold: torch.Tensor

    @classmethod
    def of(cls, labels: torch.Tensor, start: int = 0, stop: int | None = None) -> Selection:
        """The selection of rows start:stop of a micro-batch's labels [B, S] (on the CPU)."""
        chosen = labels != IGNORE  # [B, S]
        per_row = chosen.sum(1).tolist()  # [B]
        stop = len(labels) if stop is None else stop
        positions = chosen[start:stop].reshape(-1).nonzero().squeeze(1)  # [M]
        gold = labels[start:stop].reshape(-1)[positions]  # [M]
        return cls(positions, gold, sum(per_row), sum(per_row[:start]), len(labels), positions, gold)

    def to(self, device) -> Selection:
        return replace(self, positions=to_device(self.positions, device), gold=to_device(self.gold, device))


@dataclass
class MicroBatch:
    """A masked global micro-batch, or one rank's slice of it: what every pretraining objective receives."""

    index: int  # global: (step − 1)·accumulation + i, the key of the teachers' top-k cache
    batch: Batch  # before masking
    inputs: torch.Tensor  # [B, S], masked
    labels: torch.Tensor  # [B, S], the gold ids at the selected positions, IGNORE elsewhere
    masked: Selection | None = None  # prepared on the CPU by `shard`

    def shard(self, rank: int, size: int) -> MicroBatch:
        """Rank `rank`'s contiguous rows of `size` ranks, with their Selection and padding found on the CPU (before
        `to`), so that no step reads them back from the device."""
        n = len(self.inputs)
        start, stop = n * rank // size, n * (rank + 1) // size
        batch = self.batch.rows(start, stop)
        mask = batch.attention_mask  # [B, S] -> None without padding, else [B, 1, 1, S] (`runtime.attention_bias`)
        padded = mask is not None and not bool(mask.all())
        batch = replace(batch, attention_mask=mask[:, None, None, :].bool() if padded else None)
        return MicroBatch(self.index, batch, self.inputs[start:stop], self.labels[start:stop],
                          Selection.of(self.labels, start, stop))

    def selection(self) -> Selection:
        """The prepared Selection, or one found now (a micro-batch built by hand; on a GPU this waits)."""
        return self.masked if self.masked is not None else Selection.of(self.labels)

    def to(self, device) -> MicroBatch:
        """Drawn on the CPU (from memory-mapped shards, with CPU generators: the same batches on any device),
        then moved."""
        return MicroBatch(self.index, self.batch.to(device), to_device(self.inputs, device),
                          to_device(self.labels, device), self.masked and self.masked.to(device))


def permute_pieces(seq: np.ndarray, p: float, rng: np.random.Generator) -> np.ndarray:
    """Swap p·⌊L/2⌋ disjoint random pairs of positions (K et al. 2020 §3.2.2)."""
    n_pairs = int(p * (len(seq) // 2))
    if n_pairs == 0:
        return seq
    positions = rng.permutation(len(seq))[: 2 * n_pairs]
    out = seq.copy()
    out[positions[0::2]], out[positions[1::2]] = seq[positions[1::2]], seq[positions[0::2]]
    return out


class WindowSampler:
    """XLM-style: random windows of a language's token stream (sentence boundaries ignored, no padding),
    the language drawn per batch. With markers, each window starts with the language's [SEP-xx]."""

    def __init__(self, shards: ShardReader, split: str, seq_len: int, alpha: float, permute: dict[str, float],
                 markers: dict[str, int] | None = None, within_batch: bool = False):
        self.shards, self.split, self.seq_len, self.permute, self.markers = shards, split, seq_len, permute, markers
        self.within_batch = within_batch
        sizes = {l: len(shards.tokens(l, split)) for l in shards.languages}
        probs = sampling_probs(sizes, alpha)
        self.languages = list(probs)
        self.probs = np.array([probs[l] for l in self.languages])

    def row_languages(self, rng: np.random.Generator, batch_size: int) -> list[str]:
        """The language of each sequence: one draw per batch, or one per sequence (within-batch mixing)."""
        draws = rng.choice(len(self.languages), size=batch_size if self.within_batch else 1, p=self.probs)
        langs = [self.languages[int(i)] for i in draws]
        return langs if self.within_batch else langs * batch_size

    def draw(self, rng: np.random.Generator, batch_size: int) -> Batch:
        langs = self.row_languages(rng, batch_size)
        length = self.seq_len - (1 if self.markers else 0)
        if self.within_batch:
            starts = [int(rng.integers(0, len(self.shards.tokens(l, self.split)) - length)) for l in langs]
        else:  # one vectorised draw for the batch's language
            starts = rng.integers(0, len(self.shards.tokens(langs[0], self.split)) - length, size=batch_size)
        rows = []
        for lang, start in zip(langs, starts):
            window = np.asarray(self.shards.tokens(lang, self.split)[start:start + length], dtype=np.int64)
            if self.permute.get(lang, 0.0) > 0:
                window = permute_pieces(window, self.permute[lang], rng)
            rows.append(np.concatenate([[self.markers[lang]], window]) if self.markers else window)
        return Batch(torch.from_numpy(np.stack(rows)), langs[0] if len(set(langs)) == 1 else "mixed", langs=langs)


class PairSampler(WindowSampler):
    """BERT-style: [CLS] A [SEP] B [SEP] from consecutive sentences, padded to `seq_len`. With NSP, B is a
    random sentence half of the time; with markers, the language's [SEP-xx] replaces [SEP]."""

    def __init__(self, *args, nsp: bool = True, **kwargs):
        super().__init__(*args, **kwargs)
        self.nsp = nsp

    def draw(self, rng: np.random.Generator, batch_size: int) -> Batch:
        langs = self.row_languages(rng, batch_size)
        ids = np.full((batch_size, self.seq_len), PAD_ID, dtype=np.int64)
        types = np.zeros_like(ids)
        nsp = np.zeros(batch_size, dtype=np.int64)
        budget = (self.seq_len - 3) // 2
        for row, lang in enumerate(langs):
            n = self.shards.num_sentences(lang, self.split)
            sep = self.markers[lang] if self.markers else SEP_ID
            i = int(rng.integers(0, n - 1))
            random_b = self.nsp and rng.random() < 0.5
            j = int(rng.integers(0, n)) if random_b else i + 1
            a = self.shards.sentence(lang, self.split, i)[:budget]
            b = self.shards.sentence(lang, self.split, j)[: self.seq_len - 3 - len(a)]
            if self.permute.get(lang, 0.0) > 0:
                a, b = permute_pieces(a, self.permute[lang], rng), permute_pieces(b, self.permute[lang], rng)
            pair = [CLS_ID, *a.tolist(), sep, *b.tolist(), sep]
            ids[row, : len(pair)] = pair
            types[row, len(a) + 2: len(pair)] = 1
            nsp[row] = int(random_b)
        input_ids = torch.from_numpy(ids)
        lang = langs[0] if len(set(langs)) == 1 else "mixed"
        return Batch(input_ids, lang, torch.from_numpy(types), (input_ids != PAD_ID).long(),
                     torch.from_numpy(nsp) if self.nsp else None, langs)


class Masker:
    """BERT masking: select mask_prob of the eligible positions, then 80% [MASK] / 10% random / 10% kept.

    Selection is uniform or ∝ count^-0.5 (favouring rare tokens, as XLM); special tokens never selected.
    """

    def __init__(self, vocab_size: int, n_specials: int, mask_prob: float, counts: np.ndarray | None = None):
        self.vocab_size, self.n_specials, self.mask_prob = vocab_size, n_specials, mask_prob
        weights = np.ones(vocab_size) if counts is None else np.maximum(counts, 1).astype(np.float64) ** -0.5
        weights[:n_specials] = 0.0
        self.weights = torch.tensor(weights, dtype=torch.float64)

    def __call__(self, ids: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        flat = ids.reshape(-1)
        w = self.weights[flat]
        eligible = int((w > 0).sum())
        k = max(1, round(self.mask_prob * eligible)) if eligible else 0
        labels = torch.full_like(flat, IGNORE)
        inputs = flat.clone()
        if k:
            chosen = torch.multinomial(w, k, replacement=False, generator=gen)
            labels[chosen] = flat[chosen]
            r = torch.rand(k, generator=gen)
            to_mask, to_random = chosen[r < 0.8], chosen[(r >= 0.8) & (r < 0.9)]
            inputs[to_mask] = MASK_ID
            inputs[to_random] = torch.randint(self.n_specials, self.vocab_size, (len(to_random),), generator=gen)
        return inputs.view_as(ids), labels.view_as(ids)


def training_data(config: PretrainConfig, shards: ShardReader) -> tuple[WindowSampler, Masker]:
    """The batch sampler and masker; with a fresh TrainState they replay the same batches in every run."""
    info = json.loads((shards.tokenizer_dir / "mbertlab_tokenizer.json").read_text())
    markers = _marker_ids(shards) if config.markers else None
    within = config.mixing == "within_batch"
    if config.layout == "pairs":
        sampler = PairSampler(shards, "train", config.seq_len, config.alpha, config.permute, markers, within,
                              nsp=config.nsp)
    else:
        sampler = WindowSampler(shards, "train", config.seq_len, config.alpha, config.permute, markers, within)
    counts = shards.token_counts() if config.selection == "rare" else None
    return sampler, Masker(shards.vocab_size, info["specials"], config.mask_prob, counts)


def _marker_ids(shards: ShardReader) -> dict[str, int]:
    from tokenizers import Tokenizer

    from mbertlab.tokenizers.train import marker_token

    tokenizer = Tokenizer.from_file(str(shards.tokenizer_dir / "tokenizer.json"))
    ids = {lang: tokenizer.token_to_id(marker_token(lang)) for lang in shards.languages}
    missing = [l for l, i in ids.items() if i is None]
    if missing:
        raise ConfigError(f"pretrain: markers need a tokenizer trained with markers: true "
                          f"(no {', '.join(marker_token(l) for l in missing)})")
    return ids


def dev_batches(config: PretrainConfig, shards: ShardReader, masker: Masker) -> dict[str, list]:
    """Fixed dev windows and masks per language, so scores are comparable across checkpoints."""
    rng = np.random.default_rng([config.seed, 99])
    gen = torch.Generator().manual_seed(config.seed + 99)
    out = {}
    for lang in shards.languages:
        stream = shards.tokens(lang, "dev")
        batches = []
        for _ in range(config.eval_batches):
            starts = rng.integers(0, max(1, len(stream) - config.seq_len), size=32)
            windows = torch.from_numpy(np.stack([np.asarray(stream[s:s + config.seq_len], dtype=np.int64)
                                                 for s in starts]))
            batches.append(masker(windows, gen))  # (inputs [32, S], labels [32, S])
        out[lang] = batches
    return out


def training_windows(config: PretrainConfig, shards: ShardReader) -> int:
    """The windows one pass over the training text holds: each language's tokens cut into windows of the
    sampler's content length (seq_len, less a marker), or its sentences two to a pair (layout: pairs)."""
    if config.layout == "pairs":
        return sum(shards.num_sentences(lang) // 2 for lang in shards.languages)
    length = config.seq_len - (1 if config.markers else 0)
    return sum(len(shards.tokens(lang)) // length for lang in shards.languages)


def with_epoch_steps(config: PretrainConfig, shards: ShardReader) -> PretrainConfig:
    """`config` with `epochs` resolved into steps on these shards, at least `min_steps` (unchanged without
    `epochs`). The artifact's hash is the config's as written; only the run reads the resolved steps."""
    if config.epochs is None:
        return config
    passes = math.ceil(config.epochs * training_windows(config, shards) / config.batch_size)
    steps = max(config.min_steps or 1, passes)
    return config.model_copy(update={"steps": steps})
