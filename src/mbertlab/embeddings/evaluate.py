"""Word retrieval on static vectors (word2vec text files) or an encoder's contextual vectors, with MRR by
part of speech when a treebank is given; scores become results.db rows."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from mbertlab.errors import ConfigError


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


def _vectors(inputs: RetrievalInputs, dictionary: dict[str, list[str]]):
    from mbertlab.embeddings.static import load_word2vec_text

    if inputs.src_emb and inputs.tgt_emb and not inputs.model:
        return load_word2vec_text(inputs.src_emb), load_word2vec_text(inputs.tgt_emb)
    if not (inputs.model and inputs.corpus_src and inputs.corpus_tgt) or inputs.src_emb or inputs.tgt_emb:
        raise ConfigError("give either --src-emb and --tgt-emb, or --model with --corpus-src and --corpus-tgt")
    from mbertlab.analysis.contextual import contextual_vectors, read_sentences
    from mbertlab.transfer.encoder import load_encoder

    tokenizer, model = load_encoder(inputs.model, False, 0)
    layer = inputs.layer if inputs.layer is not None else model.config.num_hidden_layers
    targets = {t for ts in dictionary.values() for t in ts}
    out = [contextual_vectors(model, tokenizer, read_sentences(path), words, [layer])[layer]
           for path, words in ((inputs.corpus_src, set(dictionary)), (inputs.corpus_tgt, targets))]
    return out[0], out[1]


def retrieve(inputs: RetrievalInputs) -> dict[str, float]:
    """{"mrr", "p@1", "p@5", "pairs", "mrr_<CLASS>"...}."""
    from mbertlab.analysis.pos_classes import most_frequent_upos, mrr_by_pos
    from mbertlab.analysis.retrieval import word_retrieval
    from mbertlab.formats.muse import read_dictionary

    dictionary = read_dictionary(inputs.dictionary)
    src, tgt = _vectors(inputs, dictionary)
    scores = word_retrieval(dictionary, src, tgt)
    out = {"mrr": scores.mrr, "p@1": scores.p_at_1, "p@5": scores.p_at_5, "pairs": float(scores.pairs)}
    if inputs.treebank_src:
        by_pos = mrr_by_pos(scores.ranks, most_frequent_upos([inputs.treebank_src]))
        out.update({f"mrr_{name}": v for name, v in by_pos.items()})
    return out


def retrieval_rows(scores: dict[str, float], inputs: RetrievalInputs, study: str = "") -> list:
    from mbertlab.store.results import ResultRow

    model = str(inputs.model or inputs.src_emb)
    extra = {"pairs": int(scores["pairs"]), "dictionary": str(inputs.dictionary)}
    if inputs.layer is not None:
        extra["layer"] = inputs.layer
    return [ResultRow(metric=k, value=v, study=study, model=model, task="retrieval",
                      mode="contextual" if inputs.model else "static", split="dev", extra=extra)
            for k, v in scores.items() if k != "pairs"]
