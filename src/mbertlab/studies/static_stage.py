"""Stage kinds for Liu et al. 2020: static embeddings on a BERT's tokenised corpus (`static`,
embeddings/static.py) and word retrieval for static or contextual vectors on the same words
(`word_retrieval`, analysis/retrieve.py)."""
from __future__ import annotations

from pathlib import Path

from mbertlab.analysis.retrieve import WordRetrievalConfig, word_retrieval_into
from mbertlab.embeddings.static import StaticConfig, StaticStageConfig, static_into
from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import Job, RunContext


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

def _build_static(config: StaticStageConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    tok, text = inputs
    return ctx.store.build("static", config, lambda out: static_into(config, tok.path, text.path, Path(out)), inputs)


def _build_word_retrieval(config: WordRetrievalConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    vectors, data = inputs
    if vectors.stage not in ("static", "pretrain"):
        raise ConfigError(f"word_retrieval reads a static or pretrain artifact, got {vectors.stage!r}")
    return ctx.store.build("word_retrieval", config, lambda out: word_retrieval_into(
        config, vectors, data.path, Path(out), ctx.results, ctx.study), inputs)
