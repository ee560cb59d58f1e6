"""The transfer stage: train on the source, evaluate every listed language, write predictions and rows."""
from __future__ import annotations

import json
from pathlib import Path

from mbertlab.formats.ner_columns import write_ner
from mbertlab.formats.records import TaggedSentence
from mbertlab.runtime import seed_everything, setup_torch
from mbertlab.store.artifacts import Artifact, ArtifactStore, final_path
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.tagging import (freeze_bottom, load_encoder, load_tagged, majority_predictions, tagged_windows,
                                       metrics_for, predict, train_tagger)


def run_transfer(config: TransferConfig, store: ArtifactStore, results: ResultsDB,
                 encoder: Artifact | None = None, encoder_dir: Path | None = None,
                 data: Artifact | None = None, study: str = "") -> Artifact:
    """Build the transfer artifact. The encoder is a pretrain artifact (its `model/`) or any HF directory;
    relative data paths in the config resolve against the `data` artifact (e.g. generated languages)."""
    directory = encoder.path / "model" if encoder is not None else encoder_dir
    inputs = [a for a in (encoder, data) if a is not None]
    name = f"{encoder.stage}/{encoder.hash}" if encoder is not None else str(directory or "")
    root = data.path if data is not None else None
    return store.build("transfer", config,
                       lambda out: run_transfer_into(config, directory, Path(out), results, name, root, study),
                       inputs)


def run_transfer_into(config: TransferConfig, encoder_dir: Path | None, out: Path, results: ResultsDB,
                      model_name: str, data_root: Path | None = None, study: str = "") -> None:
    setup_torch()
    seed_everything(config.seed)
    train = load_tagged(config.train, config.task, config.max_train_sentences, data_root)
    evals = [(f, load_tagged(f, config.task, config.max_eval_sentences, data_root)) for f in config.evaluate]
    if config.mode == "majority":
        predictions = [majority_predictions(train, sents) for _, sents in evals]
    else:
        predictions = _fine_tune_and_predict(config, encoder_dir, train, evals)
    rows, scores = [], {}
    (out / "predictions").mkdir()
    for (file, gold), pred in zip(evals, predictions):
        metrics = metrics_for(config.task, [s.tags for s in gold], pred)
        scores[f"{file.lang}.{file.split}"] = metrics
        write_predictions(file, config.task, gold, pred, out / "predictions", data_root)
        rows += [ResultRow(metric=k, value=v, study=study, model=model_name, task=config.task,
                           mode=config.mode, train_lang=config.train.lang, test_lang=file.lang, split=file.split,
                           seed=config.seed, config_hash=final_path(out).name, artifact=str(final_path(out)))
                 for k, v in metrics.items()]
    (out / "scores.json").write_text(json.dumps(scores, indent=1) + "\n", encoding="utf-8")
    results.add(rows, replace_artifact=str(final_path(out)))


def write_predictions(file: DataFile, task: str, gold: list[TaggedSentence], pred: list[list[str]],
                      folder: Path, root: Path | None) -> Path:
    """Predictions in the input's format: CoNLL-U with predicted UPOS, XTREME TSV, or NER columns."""
    stem = f"{task}.{file.lang}.{file.split}"
    if file.format == "conllu":
        from itertools import islice

        from mbertlab.formats.conllu import read_conllu, write_conllu

        source = Path(file.path) if root is None or Path(file.path).is_absolute() else root / file.path
        sentences = list(islice(read_conllu(source, v1_to_v2=True), len(gold)))
        for sentence, tags in zip(sentences, pred):
            sentence.upos = list(tags)
        write_conllu(sentences, folder / f"{stem}.conllu")
        return folder / f"{stem}.conllu"
    path = folder / f"{stem}.{'tsv' if file.format == 'udpos' else 'txt'}"
    write_ner([TaggedSentence(s.tokens, p) for s, p in zip(gold, pred)], path)
    return path


def _fine_tune_and_predict(config: TransferConfig, encoder_dir: Path | None, train, evals) -> list[list[list[str]]]:
    from mbertlab.tasks.tagging import Tagger

    if encoder_dir is None:
        raise ValueError("a transfer run other than 'majority' needs an encoder")
    tokenizer, encoder = load_encoder(encoder_dir, config.mode == "random_init", config.seed)
    labels = sorted({t for s in train for t in s.tags})
    index = {t: i for i, t in enumerate(labels)}
    model = Tagger(encoder, len(labels), config.dropout)
    if config.mode == "freeze":
        freeze_bottom(encoder, config.freeze_layers)
    train_tagger(config, model, tagged_windows(tokenizer, train, index, config.max_length), tokenizer.pad_token_id)
    out = []
    for _, sents in evals:
        windows = tagged_windows(tokenizer, sents, index, config.max_length)
        out.append(predict(model, windows, tokenizer.pad_token_id, labels, len(sents), [len(s.tokens) for s in sents]))
    return out
