"""How much of the generated world's verb meaning a model's word vectors hold, read in seconds (issue 49).

The world's NLI labels are the sense relations of verbs: in each group of 4, two synonym pairs that are each
other's antonyms, and other groups unrelated (data/generate/nli.py); the relations are geometry in the world's
latent space (world.py). An encoder that is to learn that NLI must have picked the geometry up from the text.
Its masked-LM loss does not say so: a 32-token lab BERT passes the plateau check at 4,000 steps while its verbs'
input embeddings hold little of it (docs/generated-languages.md). This reads it directly: over every pair of
the NLI's verbs, the Spearman correlation between the cosine of their vectors (mean-centred over the verbs, as
the raw cosines of BERT embeddings are anisotropic) and the cosine of their points in the world; the share of
verbs whose nearest other verb is their synonym; and the mean reciprocal rank of the synonym among the others.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mbertlab.errors import ConfigError


@dataclass(frozen=True)
class VerbGeometry:
    verbs: int  # the NLI's grouped verbs that have a vector
    spearman: float  # vector cosine against world cosine, over every pair of them
    nearest_is_synonym: float  # share of verbs whose nearest other verb is their synonym
    synonym_mrr: float  # mean reciprocal rank of the synonym among the other verbs
    chance_nearest: float  # 1 / (verbs - 1)
    chance_mrr: float  # the MRR of a random ranking of verbs - 1 candidates


def world_verbs(generate_dir: Path, lang: str) -> tuple[list[str], np.ndarray]:
    """The forms of the NLI's grouped verbs in `lang` (concept order) and their points in the world, from a
    `generate` artifact's config alone."""
    from mbertlab.data.generate.build import language_spellings
    from mbertlab.data.generate.config import GenerateConfig
    from mbertlab.data.generate.grammar import Grammar
    from mbertlab.data.generate.nli import GROUP, verb_groups

    path = Path(generate_dir) / "config.json"
    if not path.is_file():
        raise ConfigError(f"{path}: missing; expected a `mbertlab generate` artifact folder")
    config = GenerateConfig.model_validate(json.loads(path.read_text(encoding="utf-8")))
    if not config.world.meaning:
        raise ConfigError(f"{path}: world.meaning is off: its verbs have no points to compare with")
    grammar = Grammar(config)
    spellings = language_spellings(config, grammar)
    if lang not in spellings or spellings[lang] is None:
        raise ConfigError(f"--lang {lang!r}: not a language of {generate_dir} with its own words "
                          f"({', '.join(n for n, s in spellings.items() if s is not None)})")
    n = min(verb_groups(config), grammar.sizes["VERB"] // GROUP) * GROUP
    return [spellings[lang].lexicon[("VERB", i)] for i in range(n)], grammar.world.points["VERB"][:n]


def verb_geometry(vectors: np.ndarray, points: np.ndarray) -> VerbGeometry:
    """The measures for verbs whose vectors are `vectors` [n, d] and world points `points` [n, k], in concept
    order (4g, 4g+1 synonyms; 4g+2, 4g+3 synonyms)."""
    from scipy.stats import spearmanr

    n = len(vectors)
    if n < 8 or n % 4 or len(points) != n:
        raise ConfigError(f"verb geometry: expected groups of 4 verbs (at least 2) with a point each; got {n} "
                          f"vectors and {len(points)} points")
    centred = vectors - vectors.mean(axis=0)
    unit = centred / np.maximum(np.linalg.norm(centred, axis=1, keepdims=True), 1e-12)
    world = points / np.linalg.norm(points, axis=1, keepdims=True)
    cos, truth = unit @ unit.T, world @ world.T
    upper = np.triu_indices(n, 1)
    rho = float(spearmanr(cos[upper], truth[upper]).statistic)
    synonym = np.arange(n) ^ 1  # 4g <-> 4g+1, 4g+2 <-> 4g+3
    others = cos.copy()
    np.fill_diagonal(others, -np.inf)
    # rank of the synonym among the n - 1 others, a tie counted in its favour (as retrieval.word_retrieval)
    ranks = 1 + (others > others[np.arange(n), synonym][:, None]).sum(axis=1)
    return VerbGeometry(n, rho, float(np.mean(ranks == 1)), float(np.mean(1.0 / ranks)), 1 / (n - 1),
                        float(np.mean(1.0 / np.arange(1, n))))


def encoder_vectors(encoder_dir: Path, words: list[str]) -> np.ndarray:
    """Each word's input vector in a saved encoder: a BERT's word-piece embedding (the mean of its pieces), or
    a static model's vector (`static_vectors.npy` beside its tokenizer)."""
    from transformers import AutoTokenizer

    encoder_dir = Path(encoder_dir)
    if not (encoder_dir / "tokenizer.json").is_file() and not (encoder_dir / "vocab.txt").is_file():
        raise ConfigError(f"{encoder_dir}: no tokenizer there; expected a saved encoder (a pretrain or static "
                          "artifact's model/ folder)")
    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    if (encoder_dir / "static_vectors.npy").is_file():
        table = np.load(encoder_dir / "static_vectors.npy")
    elif (encoder_dir / "model.safetensors").is_file():
        from safetensors.numpy import load_file

        weights = load_file(str(encoder_dir / "model.safetensors"))
        keys = [k for k in weights if k.endswith("word_embeddings.weight")]
        if len(keys) != 1:
            raise ConfigError(f"{encoder_dir / 'model.safetensors'}: expected one word_embeddings.weight, found "
                              f"{len(keys)}")
        table = weights[keys[0]]
    else:
        raise ConfigError(f"{encoder_dir}: neither model.safetensors nor static_vectors.npy")
    rows, unknown = [], []
    for word in words:
        ids = tokenizer(word, add_special_tokens=False)["input_ids"]
        if not ids or tokenizer.unk_token_id in ids:  # every unknown verb would share one vector
            unknown.append(word)
            continue
        rows.append(table[ids].astype(np.float64).mean(axis=0))
    if unknown:
        raise ConfigError(f"{encoder_dir}: its tokenizer does not know {len(unknown)} of the {len(words)} verbs (e.g. "
                          f"{unknown[0]!r}: [UNK] or no piece); give the language it was trained on (--lang)")
    return np.stack(rows)
