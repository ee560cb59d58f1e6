"""Static embeddings on the same word pieces as a BERT artifact (Liu et al. 2020): word2vec (gensim,
skip-gram or CBOW) and GloVe (bicleaner-ai-glove: x_max, alpha, 1/distance weighting in a symmetric window).
The corpus is tokenised lazily line by line, so memory is bounded by the vocabulary, not the corpus.

`static_into` is the `static` stage: vectors trained on the languages' text, tokenised by the same
tokenizer as the BERT they are compared with, written as a static-vector encoder directory (`model/`)
so a transfer job in `feature` mode runs XNLI / MLDoc on it (transfer/static_features.py).
"""
from __future__ import annotations

import json
import zlib
from collections import Counter
from pathlib import Path
from typing import Iterator, Literal

import numpy as np
from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import DataError


class StaticConfig(Config):
    method: Literal["word2vec_sg", "word2vec_cbow", "glove"] = Field("word2vec_sg", description="training objective")
    dim: int = Field(768, ge=1,
                     description="vector dimension (same as the BERT hidden size for a controlled comparison)")
    window: int = Field(5, ge=1, description="symmetric context window in word pieces")
    negative: int = Field(5, ge=0, description="word2vec negative samples")
    epochs: int = Field(5, ge=1, description="passes over the corpus / co-occurrence matrix")
    min_count: int = Field(1, ge=1, description="drop word pieces rarer than this")
    learning_rate: float = Field(0.05, gt=0, description="GloVe AdaGrad learning rate")
    x_max: float = Field(100.0, gt=0, description="GloVe weighting cut-off")
    glove_alpha: float = Field(0.75, gt=0, description="GloVe weighting exponent")
    seed: int = Field(0, description="seeds initialisation and sampling")


class StaticStageConfig(Config):
    static: StaticConfig = Field(default_factory=StaticConfig, description="Method, dimension, window, epochs.")
    languages: list[str] = Field(min_length=1, description="Their train text is interleaved line by line.")
    text_files: str = Field("{lang}/text/{split}.txt", description="Where a language's text is in the text artifact.")


class TokenisedCorpus:
    """Re-iterable stream of word-piece sentences (gensim iterates several times)."""

    def __init__(self, tokenizer, files: list[Path]):
        self.tokenizer = tokenizer
        self.files = [Path(f) for f in files]
        for f in self.files:
            if not f.is_file():
                raise DataError(f, None, "a text file with one sentence per line")

    def __iter__(self) -> Iterator[list[str]]:
        for f in self.files:
            with f.open(encoding="utf-8") as fh:
                for line in fh:
                    pieces = self.tokenizer.tokenize(line.strip())
                    if pieces:
                        yield pieces


def _hash(text: str) -> int:
    """Process-independent hash: gensim seeds each vector from hashfxn(word + seed); str hash is salted."""
    return zlib.crc32(text.encode("utf-8"))


def train_word2vec(config: StaticConfig, sentences) -> dict[str, np.ndarray]:
    from gensim.models import Word2Vec

    model = Word2Vec(sentences=sentences, vector_size=config.dim, window=config.window, negative=config.negative,
                     epochs=config.epochs, min_count=config.min_count, sg=int(config.method == "word2vec_sg"),
                     seed=config.seed, workers=1, hashfxn=_hash)
    return {w: model.wv[w].astype(np.float32) for w in model.wv.index_to_key}


def vocabulary(sentences, min_count: int) -> dict[str, int]:
    """Word piece -> id, most frequent first (ties by string), keeping pieces seen at least min_count times."""
    counts = Counter(p for s in sentences for p in s)
    kept = sorted((w for w, c in counts.items() if c >= min_count), key=lambda w: (-counts[w], w))
    return {w: i for i, w in enumerate(kept)}


def cooccurrence(sentences, dictionary: dict[str, int], window: int):
    """Upper-triangular COO matrix of 1/distance-weighted co-occurrence counts (glove-python's convention)."""
    from glove import Corpus

    corpus = Corpus(dictionary=dictionary)
    corpus.fit(sentences, window=window, ignore_missing=True)
    return corpus.matrix


class GloveTrainer:
    """GloVe fitted one epoch at a time so the weighted least-squares loss can be read after each epoch."""

    def __init__(self, config: StaticConfig, matrix):
        self.config, self.matrix = config, matrix
        self.rng = np.random.RandomState(config.seed)
        n = matrix.shape[0]
        self.vectors = (self.rng.rand(n, config.dim) - 0.5) / config.dim
        self.biases = np.zeros(n, dtype=np.float64)
        self.vec_grad = np.ones_like(self.vectors)
        self.bias_grad = np.ones_like(self.biases)
        self.order = np.arange(matrix.nnz, dtype=np.int32)

    def epoch(self) -> None:
        from glove.glove_cython import fit_vectors

        c, m = self.config, self.matrix
        self.rng.shuffle(self.order)
        fit_vectors(self.vectors, self.vec_grad, self.biases, self.bias_grad, m.row, m.col, m.data, self.order,
                    c.learning_rate, c.x_max, c.glove_alpha, 10.0, 1)

    def loss(self) -> float:
        """sum f(x_ij) (w_i.w_j + b_i + b_j - log x_ij)^2 with f(x) = min(1, (x/x_max)^alpha)."""
        m, c = self.matrix, self.config
        pred = (self.vectors[m.row] * self.vectors[m.col]).sum(1) + self.biases[m.row] + self.biases[m.col]
        weight = np.minimum(1.0, (m.data / c.x_max) ** c.glove_alpha)
        return float((weight * (pred - np.log(m.data)) ** 2).sum())


def train_glove(config: StaticConfig, sentences) -> tuple[dict[str, np.ndarray], list[float]]:
    """Vectors and the loss after each epoch."""
    dictionary = vocabulary(sentences, config.min_count)
    trainer = GloveTrainer(config, cooccurrence(sentences, dictionary, config.window))
    losses = []
    for _ in range(config.epochs):
        trainer.epoch()
        losses.append(trainer.loss())
    return {w: trainer.vectors[i].astype(np.float32) for w, i in dictionary.items()}, losses


def save_word2vec_text(vectors: dict[str, np.ndarray], path: Path) -> Path:
    """word2vec text format (readable by gensim KeyedVectors.load_word2vec_format)."""
    dim = len(next(iter(vectors.values()))) if vectors else 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write(f"{len(vectors)} {dim}\n")
        for word, vec in vectors.items():
            fh.write(word + " " + " ".join(f"{x:.6g}" for x in vec) + "\n")
    return path


def load_word2vec_text(path: Path) -> dict[str, np.ndarray]:
    from gensim.models import KeyedVectors

    kv = KeyedVectors.load_word2vec_format(str(path), binary=False)
    return {w: kv[w] for w in kv.index_to_key}


def train_static_into(config: StaticConfig, tokenizer_dir: Path, files: list[Path], out: Path) -> dict:
    """Train on the tokenised files; write vectors.txt and stats.json into out. Returns the stats."""
    from mbertlab.tokenizers.train import load_tokenizer

    sentences = TokenisedCorpus(load_tokenizer(tokenizer_dir), files)
    losses: list[float] = []
    if config.method == "glove":
        vectors, losses = train_glove(config, sentences)
    else:
        vectors = train_word2vec(config, sentences)
    if not vectors:
        raise DataError(files[0] if files else Path("."), None, f"word pieces seen at least {config.min_count} times")
    out.mkdir(parents=True, exist_ok=True)
    save_word2vec_text(vectors, out / "vectors.txt")
    stats = {"method": config.method, "vocab": len(vectors), "dim": config.dim,
             "tokens": sum(len(s) for s in sentences), "glove_loss": losses}
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    return stats


def interleave(files: list[Path], out: Path) -> Path:
    """One line of each file in turn (a file that runs out is skipped), so SGD's decaying learning rate
    sees every language throughout training rather than one after the other."""
    handles = [f.open(encoding="utf-8") for f in files]
    try:
        with out.open("w", encoding="utf-8") as dst:
            live = list(handles)
            while live:
                for fh in list(live):
                    line = fh.readline()
                    if not line:
                        live.remove(fh)
                    elif line.strip():
                        dst.write(line if line.endswith("\n") else line + "\n")
    finally:
        for fh in handles:
            fh.close()
    return out


def static_into(config: StaticStageConfig, tokenizer_dir: Path, text_root: Path, out: Path) -> dict:
    """vectors.txt, the static-vector encoder directory model/ and stats.json; the joint text is removed."""
    from mbertlab.tokenizers.train import load_tokenizer
    from mbertlab.transfer.static_features import write_static_dir

    joint = interleave([text_root / config.text_files.format(lang=l, split="train") for l in config.languages],
                       out / "joint.txt")
    stats = train_static_into(config.static, tokenizer_dir, [joint], out)
    joint.unlink()
    info = write_static_dir(load_tokenizer(tokenizer_dir), load_word2vec_text(out / "vectors.txt"), out / "model",
                            config.static.method, config.static.seed)
    stats.update(info)
    (out / "stats.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    return stats
