"""Stage kinds for Liu et al. 2020: static embeddings on a BERT's tokenised corpus, and word retrieval
(MRR, P@k, MRR by part of speech) for static or contextual vectors on the same words.

`static`: word2vec (skip-gram / CBOW) or GloVe trained on the languages' text, tokenised by the same
tokenizer artifact as the BERT it is compared with; the artifact's `model/` is a static-vector encoder
directory, so a transfer job in `feature` mode runs XNLI / MLDoc on it (transfer/static_features.py).

`word_retrieval`: vectors of the lexicon's words from a `static` or a `pretrain` artifact. Both kinds
score the same pairs: words with no [UNK] piece that occur in the first `sentences` lines of the
language's dev+train text (the text contextual vectors are averaged over).
"""
from __future__ import annotations

import json
from itertools import chain, islice
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.embeddings.static import StaticConfig
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.studies.jobs import Job, RunContext

TEXT_FILES = "{lang}/text/{split}.txt"  # the generate stage's layout (studies/stages.py TEXT_FILES)


class StaticStageConfig(Config):
    static: StaticConfig = Field(default_factory=StaticConfig, description="Method, dimension, window, epochs.")
    languages: list[str] = Field(min_length=1, description="Their train text is interleaved line by line.")
    text_files: str = Field(TEXT_FILES, description="Where a language's text is in the text artifact.")


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


# ---- jobs -------------------------------------------------------------------------------------

def static_job(tokenizer: Job, text: Job, languages: list[str], settings: dict, tags=()) -> Job:
    """`tokenizer` is the BERT's tokenizer job (e.g. `shards_job(...).inputs[0]`)."""
    from mbertlab.config import parse_config

    if tokenizer.kind != "tokenizer":
        raise ConfigError(f"static embeddings need a tokenizer job as first input, got a {tokenizer.kind!r} job")
    static = parse_config(StaticConfig, settings, "study key 'static'")
    config = StaticStageConfig(static=static, languages=languages)
    return Job("static", config, (tokenizer, text), label=f"static {static.method} {'+'.join(languages)}",
               tags=tuple(tags))


def word_retrieval_job(vectors: Job, data: Job, source: str, target: str, settings: dict, tags=()) -> Job:
    """Retrieval source → target with `data`'s gold lexicon; text and treebank are read from `data` too."""
    from mbertlab.config import parse_config

    keys = {**settings, "source": source, "target": target, "lexicon": f"lexicon/{source}-{target}.txt"}
    config = parse_config(WordRetrievalConfig, keys, "study key 'retrieval'")
    return Job("word_retrieval", config, (vectors, data), label=f"retrieval {source}-{target} {vectors.label}",
               tags=tuple(tags))


# ---- builders ---------------------------------------------------------------------------------

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
    from mbertlab.embeddings.static import load_word2vec_text, train_static_into
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


def _build_static(config: StaticStageConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    tok, text = inputs
    return ctx.store.build("static", config, lambda out: static_into(config, tok.path, text.path, Path(out)), inputs)


def _sentences(config: WordRetrievalConfig, root: Path, lang: str) -> list[list[str]]:
    from mbertlab.analysis.contextual import read_sentences

    files = [root / config.text_files.format(lang=lang, split=s) for s in ("dev", "train")]
    return list(islice(chain(*(read_sentences(f) for f in files if f.is_file())), config.sentences))


def retrieval_vectors(config: WordRetrievalConfig, vectors: Artifact, sentences: dict[str, list[list[str]]],
                      words: dict[str, set[str]]):
    """{lang: {word: vector}} and the model's tokenizer; `words` are already the scored words."""
    if vectors.stage == "static":
        import numpy as np

        from mbertlab.embeddings.words import word_vectors
        from mbertlab.transfer.static_features import load_static_encoder

        tokenizer, encoder = load_static_encoder(vectors.path / "model", config.random_init, config.seed)
        table = encoder.embeddings.weight.numpy()
        vocab = tokenizer.get_vocab()
        pieces = {p: np.asarray(table[i]) for p, i in vocab.items()}
        return {lang: word_vectors(tokenizer, pieces, words[lang]) for lang in words}
    from mbertlab.analysis.contextual import contextual_vectors
    from mbertlab.transfer.encoder import load_encoder

    tokenizer, model = load_encoder(vectors.path / "model", config.random_init, config.seed)
    layer = config.layer if config.layer is not None else model.config.num_hidden_layers
    return {lang: contextual_vectors(model, tokenizer, sentences[lang], words[lang], [layer])[layer]
            for lang in words}


def word_retrieval_into(config: WordRetrievalConfig, vectors: Artifact, data_root: Path, out: Path,
                        ctx: RunContext) -> dict:
    from mbertlab.analysis.pos_classes import most_frequent_upos, mrr_by_pos
    from mbertlab.analysis.retrieval import word_retrieval
    from mbertlab.embeddings.words import known_words, restrict_dictionary
    from mbertlab.formats.muse import read_dictionary
    from mbertlab.runtime import seed_everything, setup_torch
    from mbertlab.store.results import ResultRow
    from mbertlab.tokenizers.train import load_tokenizer

    setup_torch()
    seed_everything(config.seed)
    tokenizer = load_tokenizer(vectors.path / "model")
    sentences = {l: _sentences(config, data_root, l) for l in (config.source, config.target)}
    seen = {l: {w for s in sentences[l] for w in s} for l in sentences}
    full = read_dictionary(data_root / config.lexicon)
    if not config.identical:
        full = {w: ts for w, ts in full.items() if w not in ts}
    dictionary = restrict_dictionary(full, known_words(tokenizer, seen[config.source] & set(full)),
                                     known_words(tokenizer, seen[config.target]))
    words = {config.source: set(dictionary), config.target: {t for ts in dictionary.values() for t in ts}}
    vecs = retrieval_vectors(config, vectors, sentences, words)
    scores = word_retrieval(dictionary, vecs[config.source], vecs[config.target])
    metrics = {"mrr": scores.mrr, "p@1": scores.p_at_1, "p@5": scores.p_at_5}
    classes = {}
    if config.treebank:
        classes = most_frequent_upos([data_root / config.treebank.format(lang=config.source)])
        metrics.update({f"mrr_{name}": v for name, v in mrr_by_pos(scores.ranks, classes).items()})
    counts = {}
    for word in scores.ranks:
        counts[classes.get(word, "none")] = counts.get(classes.get(word, "none"), 0) + 1
    summary = {**metrics, "pairs": scores.pairs, "lexicon_entries": len(full), "pairs_by_upos": counts,
               "ranks": scores.ranks}
    (out / "scores.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    mode = vectors.stage if vectors.stage == "static" else "contextual"
    where = str(final_path(out))
    ctx.results.add([ResultRow(metric=k, value=v, study=ctx.study, model=f"{vectors.stage}/{vectors.hash}",
                               task="retrieval", mode=("random_init" if config.random_init else mode),
                               train_lang=config.source, test_lang=config.target, split="dev", seed=config.seed,
                               config_hash=final_path(out).name, artifact=where, extra={"pairs": scores.pairs})
                     for k, v in metrics.items()], replace_artifact=where)
    return summary


def _build_word_retrieval(config: WordRetrievalConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    vectors, data = inputs
    if vectors.stage not in ("static", "pretrain"):
        raise ConfigError(f"word_retrieval reads a static or pretrain artifact, got {vectors.stage!r}")
    return ctx.store.build("word_retrieval", config,
                           lambda out: word_retrieval_into(config, vectors, data.path, Path(out), ctx), inputs)

