"""Word retrieval against a bilingual lexicon: one pipeline behind three doors.

Every door reads a lexicon, takes each side's word vectors (analysis/contextual.py: static piece means or
contextual vectors), ranks the target words for each source word (analysis/retrieval.py) and reports the
same metrics (MRR, P@1, P@5, MRR by part of speech given a treebank):
- the `retrieval` stage (`retrieval_into`, K et al. 2020's alignment measure): contextual vectors of an
  encoder over each language's dev+train text, every lexicon entry whose words occur there;
- the `word_retrieval` stage (`word_retrieval_into`, Liu et al. 2020): a `static` or a `pretrain`
  artifact, scored on the same pairs for both: words with no [UNK] piece that occur in the first
  `sentences` lines of the language's dev+train text;
- `mbertlab retrieve` (`retrieve`): word2vec text files, or an encoder with two corpora, any layer.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from pydantic import Field

from mbertlab.analysis.pos_classes import most_frequent_upos, mrr_by_pos
from mbertlab.analysis.retrieval import MEMORY_MB, RetrievalScores, word_retrieval
from mbertlab.config import Config, device_field
from mbertlab.errors import ConfigError
from mbertlab.formats.muse import read_dictionary
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB

TEXT_FILES = "{lang}/text/{split}.txt"  # the generate stage's layout


class RetrievalConfig(Config):
    source: str
    target: str
    lexicon: str = Field(description="Dictionary path relative to the data artifact.")
    random_init: bool = False
    seed: int = 0
    layer: int | None = Field(None, description="Hidden-state index; default the last layer.")
    sentences: int = Field(5000, description="Sentences of each language's dev+train text streamed.")
    text_files: str = Field(TEXT_FILES, description="Where a language's text is in the text artifact.")
    device: str = device_field()


class WordRetrievalConfig(Config):
    source: str
    target: str
    lexicon: str = Field(description="Dictionary path relative to the data artifact.")
    treebank: str | None = Field("{lang}/ud/train.conllu", description="CoNLL-U of the source language (relative "
                                 "to the data artifact) giving each word its most frequent UPOS; null: no POS.")
    layer: int | None = Field(None, description="Contextual vectors: hidden-state index; default the last layer.")
    sentences: int = Field(5000, ge=1, description="Lines of each language's dev+train text streamed.")
    text_files: str = TEXT_FILES
    identical: bool = Field(True, description="Keep entries whose translation is spelled like the source word; "
                            "false scores only the pairs a shared vocabulary does not solve trivially.")
    random_init: bool = False
    seed: int = 0
    device: str = device_field()


def sides(dictionary: dict[str, list[str]]) -> tuple[set[str], set[str]]:
    """The source words and the target words of a lexicon: the words whose vectors are needed."""
    return set(dictionary), {t for ts in dictionary.values() for t in ts}


def retrieval_metrics(scores: RetrievalScores, classes: dict[str, str], with_pairs: bool = False
                      ) -> dict[str, float]:
    """mrr, p@1, p@5 (then pairs, when asked) and MRR by the source words' part of speech (`classes`)."""
    out = {"mrr": scores.mrr, "p@1": scores.p_at_1, "p@5": scores.p_at_5}
    if with_pairs:
        out["pairs"] = float(scores.pairs)
    out.update({f"mrr_{name}": v for name, v in mrr_by_pos(scores.ranks, classes).items()})
    return out


# ---- the stages ---------------------------------------------------------------------------------

def _text(config: RetrievalConfig | WordRetrievalConfig, root: Path, lang: str) -> Iterator[list[str]]:
    from mbertlab.analysis.contextual import text_sentences

    return text_sentences([root / config.text_files.format(lang=lang, split=s) for s in ("dev", "train")],
                          config.sentences)


def _lexicon_scores(config: RetrievalConfig | WordRetrievalConfig, vectors: Artifact, dictionary: dict,
                    sentences: tuple, classes: dict[str, str], out: Path) -> tuple[RetrievalScores, dict[str, float]]:
    """Scores of the vectors' artifact on the lexicon; what the encoder ran on is recorded in `out`."""
    from mbertlab.analysis.contextual import encoder_word_vectors
    from mbertlab.runtime import record_runtime, resolve_device

    device = resolve_device(config.device)
    ((src, tgt),) = encoder_word_vectors(vectors.path / "model", sentences, sides(dictionary), config.layer,
                                         random_init=config.random_init, seed=config.seed, device=device).values()
    record_runtime(out, device, "fp32")
    scores = word_retrieval(dictionary, src, tgt)
    return scores, retrieval_metrics(scores, classes)


def _record(config: RetrievalConfig | WordRetrievalConfig, vectors: Artifact, mode: str, metrics: dict,
            summary: dict, out: Path, results: ResultsDB, study: str) -> None:
    """scores.json, and one row per metric naming the artifact it came from."""
    (out / "scores.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    where = str(final_path(out))
    results.add([ResultRow(metric=k, value=v, study=study, model=f"{vectors.stage}/{vectors.hash}",
                           task="retrieval", mode=mode, train_lang=config.source, test_lang=config.target,
                           split="dev", seed=config.seed, config_hash=final_path(out).name, artifact=where,
                           extra={"pairs": summary["pairs"]}) for k, v in metrics.items()], replace_artifact=where)


def retrieval_into(config: RetrievalConfig, encoder: Artifact, data_root: Path, text_root: Path, out: Path,
                   results: ResultsDB, study: str = "") -> None:
    """Lexicon from `data_root/config.lexicon`; each language's text at `text_root/config.text_files`."""
    from mbertlab.runtime import seed_everything, setup_torch

    setup_torch()
    seed_everything(config.seed)
    dictionary = read_dictionary(data_root / config.lexicon)
    sentences = (_text(config, text_root, config.source), _text(config, text_root, config.target))
    scores, metrics = _lexicon_scores(config, encoder, dictionary, sentences, {}, out)
    mode = "random_init" if config.random_init else "pretrained"
    _record(config, encoder, mode, metrics, {**metrics, "pairs": scores.pairs}, out, results, study)


def _scored_lexicon(config: WordRetrievalConfig, data_root: Path, model_dir: Path,
                    sentences: dict[str, list[list[str]]]) -> tuple[dict[str, list[str]], int]:
    """The entries every model is scored on (words seen in the text, no [UNK] piece) and the lexicon's size."""
    from mbertlab.embeddings.words import known_words, restrict_dictionary
    from mbertlab.tokenizers.train import load_tokenizer

    tokenizer = load_tokenizer(model_dir)
    seen = {l: {w for s in sentences[l] for w in s} for l in sentences}
    full = read_dictionary(data_root / config.lexicon)
    if not config.identical:
        full = {w: ts for w, ts in full.items() if w not in ts}
    dictionary = restrict_dictionary(full, known_words(tokenizer, seen[config.source] & set(full)),
                                     known_words(tokenizer, seen[config.target]))
    return dictionary, len(full)


def word_retrieval_into(config: WordRetrievalConfig, vectors: Artifact, data_root: Path, out: Path,
                        results: ResultsDB, study: str = "", text_root: Path | None = None) -> dict:
    """Lexicon and treebank from `data_root`, text from `text_root` (default: the same); `vectors` is a `static`,
    a `pretrain` or an `hf_encoder` artifact."""
    from mbertlab.runtime import seed_everything, setup_torch

    setup_torch()
    seed_everything(config.seed)
    sentences = {l: list(_text(config, text_root or data_root, l)) for l in (config.source, config.target)}
    dictionary, entries = _scored_lexicon(config, data_root, vectors.path / "model", sentences)
    classes = most_frequent_upos([data_root / config.treebank.format(lang=config.source)]) if config.treebank else {}
    scores, metrics = _lexicon_scores(config, vectors, dictionary, (sentences[config.source],
                                                                    sentences[config.target]), classes, out)
    summary = {**metrics, "pairs": scores.pairs, "lexicon_entries": entries,
               "pairs_by_upos": dict(Counter(classes.get(w, "none") for w in scores.ranks)), "ranks": scores.ranks}
    mode = "random_init" if config.random_init else "static" if vectors.stage == "static" else "contextual"
    _record(config, vectors, mode, metrics, summary, out, results, study)
    return summary


# ---- mbertlab retrieve ----------------------------------------------------------------------------

@dataclass
class RetrievalInputs:
    dictionary: Path
    src_emb: Path | None = None
    tgt_emb: Path | None = None
    model: Path | None = None
    layer: int | None = None
    corpus_src: Path | None = None
    corpus_tgt: Path | None = None
    treebank_src: Path | None = None
    all_layers: bool = False
    csls: bool = False
    memory_mb: float = MEMORY_MB  # bound on the similarity buffers; results do not depend on it
    device: str = "auto"


def _vectors(inputs: RetrievalInputs, dictionary: dict[str, list[str]]) -> dict[int | None, tuple[dict, dict]]:
    """{layer: (source vectors, target vectors)}; the layer is None for static vectors."""
    from mbertlab.embeddings.static import load_word2vec_text

    if inputs.src_emb and inputs.tgt_emb and not inputs.model:
        if inputs.all_layers or inputs.layer is not None:
            raise ConfigError("--layer and --all-layers are for contextual vectors (--model)")
        return {None: (load_word2vec_text(inputs.src_emb), load_word2vec_text(inputs.tgt_emb))}
    if not (inputs.model and inputs.corpus_src and inputs.corpus_tgt) or inputs.src_emb or inputs.tgt_emb:
        raise ConfigError("give either --src-emb and --tgt-emb, or --model with --corpus-src and --corpus-tgt")
    from mbertlab.analysis.contextual import encoder_word_vectors, read_sentences

    sentences = (read_sentences(inputs.corpus_src), read_sentences(inputs.corpus_tgt))
    from mbertlab.runtime import resolve_device

    return encoder_word_vectors(inputs.model, sentences, sides(dictionary), inputs.layer, inputs.all_layers,
                                device=resolve_device(inputs.device))


def retrieve(inputs: RetrievalInputs) -> dict[int | None, dict[str, float]]:
    """{layer: {"mrr", "p@1", "p@5", "pairs", "mrr_<CLASS>"...}}; one pass over each corpus for all layers."""
    dictionary = read_dictionary(inputs.dictionary)
    classes = most_frequent_upos([inputs.treebank_src]) if inputs.treebank_src else {}
    return {layer: retrieval_metrics(word_retrieval(dictionary, src, tgt, inputs.csls, memory_mb=inputs.memory_mb),
                                     classes, True)
            for layer, (src, tgt) in _vectors(inputs, dictionary).items()}


def retrieval_rows(by_layer: dict[int | None, dict[str, float]], inputs: RetrievalInputs, study: str = "") -> list:
    model = str(inputs.model or inputs.src_emb)
    rows = []
    for layer, scores in by_layer.items():
        extra = {"pairs": int(scores["pairs"]), "dictionary": str(inputs.dictionary)}
        if layer is not None and (inputs.layer is not None or inputs.all_layers):
            extra["layer"] = layer
        if inputs.csls:
            extra["csls"] = True
        rows += [ResultRow(metric=k, value=v, study=study, model=model, task="retrieval",
                           mode="contextual" if inputs.model else "static", split="dev", extra=extra)
                 for k, v in scores.items() if k != "pairs"]
    return rows
