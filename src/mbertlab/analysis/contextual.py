"""Word vectors of an encoder. Contextual: a word's vector is the mean over its occurrences of the mean
of its subwords' hidden states at a layer; running sums per word type keep memory bounded by the
vocabulary. Static (a word2vec/GloVe table): the mean of its pieces' vectors, as contextual vectors
average a word's subwords, so static and contextual retrieval score the same words."""
from __future__ import annotations

from itertools import chain, islice
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import torch

from mbertlab.errors import DataError

SORTED_BATCHES = 16  # batches sorted by length together: little padding, memory bounded by one run of them


@torch.inference_mode()
def contextual_vectors(encoder, tokenizer, sentences: Iterable[list[str]], words: set[str] | None = None,
                       layers: list[int] | None = None, batch_size: int = 64, max_length: int = 128
                       ) -> dict[int, dict[str, np.ndarray]]:
    """{layer: {word: vector}} for the words seen (restricted to `words` when given).

    `layers` are hidden-state indices (0 = embeddings, L = last); default: the last layer. Sentences whose
    subwords exceed `max_length` are truncated (words past the cut do not contribute). Each run of
    `batch_size * SORTED_BATCHES` sentences is batched by length: in text order a batch of generated sentences
    was 2.4 times its words in padding.
    """
    encoder.eval()
    n_layers = encoder.config.num_hidden_layers
    layers = layers or [n_layers]
    sums: dict[int, dict[str, np.ndarray]] = {l: {} for l in layers}
    counts: dict[str, int] = {}
    it = iter(sentences)
    while chunk := sorted(islice(it, batch_size * SORTED_BATCHES), key=len):
        for start in range(0, len(chunk), batch_size):
            _accumulate(encoder, tokenizer, chunk[start:start + batch_size], words, layers, sums, counts, max_length)
    return {l: {w: v / counts[w] for w, v in sums[l].items()} for l in layers}


def _accumulate(encoder, tokenizer, batch, words, layers, sums, counts, max_length) -> None:
    from mbertlab.runtime import to_device

    enc = tokenizer(batch, is_split_into_words=True, truncation=True, max_length=max_length,
                    padding=True, return_tensors="pt")
    device = next(encoder.parameters()).device
    out = encoder(input_ids=to_device(enc["input_ids"], device),
                  attention_mask=to_device(enc["attention_mask"], device), output_hidden_states=True)
    states = {l: out.hidden_states[l].float().cpu().numpy() for l in layers}  # [B, S, H] each, summed in fp64
    for b, sentence in enumerate(batch):
        positions: dict[int, list[int]] = {}
        for pos, w in enumerate(enc.word_ids(b)):
            if w is not None:
                positions.setdefault(w, []).append(pos)
        for w, pos in positions.items():
            word = sentence[w]
            if words is not None and word not in words:
                continue
            counts[word] = counts.get(word, 0) + 1
            for l in layers:
                vec = states[l][b, pos].mean(0)
                if word in sums[l]:
                    sums[l][word] += vec
                else:
                    sums[l][word] = vec.astype(np.float64)


def read_sentences(path: Path, limit: int | None = None) -> Iterable[list[str]]:
    with path.open(encoding="utf-8") as f:
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                return
            if line.strip():
                yield line.split()


def text_sentences(files: list[Path], limit: int | None = None) -> Iterator[list[str]]:
    """The first `limit` sentences of the files read in turn; a missing file is skipped, all missing is an error."""
    present = [f for f in files if f.is_file()]
    if not present:
        raise DataError(files[0], None, "no such text file (the sentences word vectors are averaged over)")
    return islice(chain(*(read_sentences(f) for f in present)), limit)


def encoder_word_vectors(encoder_dir: Path, sentences: tuple[Iterable[list[str]], Iterable[list[str]]],
                         words: tuple[set[str], set[str]], layer: int | None = None, all_layers: bool = False,
                         random_init: bool = False, seed: int = 0, device: torch.device = torch.device("cpu")
                         ) -> dict[int | None, tuple[dict, dict]]:
    """{layer: (source vectors, target vectors)} of the two sides' `words`.

    A static-vector directory gives each word the mean of its pieces (one entry, layer None; `sentences`
    unused). A transformer gives contextual vectors over each side's `sentences` at `layer` (default the
    last), or at every hidden-state index in one pass with `all_layers`; the encoder runs on `device`.
    """
    from mbertlab.transfer.encoder import load_encoder

    tokenizer, model = load_encoder(encoder_dir, random_init, seed, device)
    if getattr(model, "is_static", False):
        from mbertlab.embeddings.words import word_vectors

        table = model.embeddings.weight.cpu().numpy()
        pieces = {p: np.asarray(table[i]) for p, i in tokenizer.get_vocab().items()}
        src, tgt = (word_vectors(tokenizer, pieces, side) for side in words)
        return {None: (src, tgt)}
    last = model.config.num_hidden_layers
    layers = list(range(last + 1)) if all_layers else [layer if layer is not None else last]
    src, tgt = (contextual_vectors(model, tokenizer, text, side, layers) for text, side in zip(sentences, words))
    return {l: (src[l], tgt[l]) for l in layers}
