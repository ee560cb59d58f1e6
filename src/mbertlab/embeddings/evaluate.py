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
    all_layers: bool = False
    csls: bool = False


def _vectors(inputs: RetrievalInputs, dictionary: dict[str, list[str]]) -> dict[int | None, tuple[dict, dict]]:
    """{layer: (source vectors, target vectors)}; the layer is None for static vectors."""
    from mbertlab.embeddings.static import load_word2vec_text

    if inputs.src_emb and inputs.tgt_emb and not inputs.model:
        if inputs.all_layers or inputs.layer is not None:
            raise ConfigError("--layer and --all-layers are for contextual vectors (--model)")
        return {None: (load_word2vec_text(inputs.src_emb), load_word2vec_text(inputs.tgt_emb))}
    if not (inputs.model and inputs.corpus_src and inputs.corpus_tgt) or inputs.src_emb or inputs.tgt_emb:
        raise ConfigError("give either --src-emb and --tgt-emb, or --model with --corpus-src and --corpus-tgt")
    from mbertlab.analysis.contextual import contextual_vectors, read_sentences
    from mbertlab.transfer.encoder import load_encoder

    tokenizer, model = load_encoder(inputs.model, False, 0)
    last = model.config.num_hidden_layers
    layers = list(range(last + 1)) if inputs.all_layers else [inputs.layer if inputs.layer is not None else last]
    targets = {t for ts in dictionary.values() for t in ts}
    src, tgt = (contextual_vectors(model, tokenizer, read_sentences(path), words, layers)
                for path, words in ((inputs.corpus_src, set(dictionary)), (inputs.corpus_tgt, targets)))
    return {layer: (src[layer], tgt[layer]) for layer in layers}


def retrieve(inputs: RetrievalInputs) -> dict[int | None, dict[str, float]]:
    """{layer: {"mrr", "p@1", "p@5", "pairs", "mrr_<CLASS>"...}}; one pass over each corpus for all layers."""
    from mbertlab.analysis.pos_classes import most_frequent_upos, mrr_by_pos
    from mbertlab.analysis.retrieval import word_retrieval
    from mbertlab.formats.muse import read_dictionary

    dictionary = read_dictionary(inputs.dictionary)
    upos = most_frequent_upos([inputs.treebank_src]) if inputs.treebank_src else None
    by_layer = {}
    for layer, (src, tgt) in _vectors(inputs, dictionary).items():
        scores = word_retrieval(dictionary, src, tgt, csls=inputs.csls)
        out = {"mrr": scores.mrr, "p@1": scores.p_at_1, "p@5": scores.p_at_5, "pairs": float(scores.pairs)}
        if upos is not None:
            out.update({f"mrr_{name}": v for name, v in mrr_by_pos(scores.ranks, upos).items()})
        by_layer[layer] = out
    return by_layer


def retrieval_rows(by_layer: dict[int | None, dict[str, float]], inputs: RetrievalInputs, study: str = "") -> list:
    from mbertlab.store.results import ResultRow

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
