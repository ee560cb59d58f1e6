"""The retrieval stage: contextual word vectors of both languages, then MRR against the gold lexicon."""
from __future__ import annotations

import json
from itertools import chain, islice
from pathlib import Path

from mbertlab.analysis.contextual import contextual_vectors, read_sentences
from mbertlab.analysis.retrieval import word_retrieval
from mbertlab.formats.muse import read_dictionary
from mbertlab.runtime import seed_everything, setup_torch
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB


def retrieval_into(config, encoder: Artifact, data_root: Path, text_root: Path, out: Path, results: ResultsDB,
                   study: str = "") -> None:
    """Lexicon from `data_root/config.lexicon`; each language's text at `text_root/config.text_files`."""
    from mbertlab.transfer.encoder import load_encoder

    setup_torch()
    seed_everything(config.seed)
    tokenizer, model = load_encoder(encoder.path / "model", config.random_init, config.seed)
    dictionary = read_dictionary(data_root / config.lexicon)
    vectors = {}
    for lang, words in ((config.source, set(dictionary)), (config.target, {t for ts in dictionary.values() for t in ts})):
        sentences = chain(*(read_sentences(text_root / config.text_files.format(lang=lang, split=split))
                            for split in ("dev", "train")))
        layer = config.layer if config.layer is not None else model.config.num_hidden_layers
        vectors[lang] = contextual_vectors(model, tokenizer, islice(sentences, config.sentences), words, [layer])[layer]
    scores = word_retrieval(dictionary, vectors[config.source], vectors[config.target])
    metrics = {"mrr": scores.mrr, "p@1": scores.p_at_1, "p@5": scores.p_at_5}
    (out / "scores.json").write_text(json.dumps({**metrics, "pairs": scores.pairs}, indent=1) + "\n")
    mode = "random_init" if config.random_init else "pretrained"
    where = str(final_path(out))
    results.add([ResultRow(metric=k, value=v, study=study, model=f"{encoder.stage}/{encoder.hash}",
                           task="retrieval", mode=mode, train_lang=config.source, test_lang=config.target,
                           split="dev", seed=config.seed, config_hash=final_path(out).name, artifact=where,
                           extra={"pairs": scores.pairs}) for k, v in metrics.items()], replace_artifact=where)
