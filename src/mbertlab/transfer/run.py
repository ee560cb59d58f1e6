"""The transfer stage: a grid of training runs on the source, every listed dev file scored at every evaluation,
the model chosen on the source dev set (zero-shot protocol), the target-dev "oracle" choice recorded too.

Rows in results.db: every metric of every file at the selected point; `test_lang="avg"` averages the
targets (languages other than the sources) per split when there are two or more; `oracle_<metric>` is a
target's test score at the point its own dev set prefers. `history.jsonl` keeps every evaluation of every
grid point: every dev file's scores, and a test file's only where the point is selected so far or its
language's dev score is the best so far (the points the rows can use); without a source dev file, the last
point is the model and its test files are scored once, after the run.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mbertlab.errors import ConfigError
from mbertlab.runtime import record_runtime, resolve_device, resolve_precision, seed_everything, setup_torch
from mbertlab.store.artifacts import Artifact, ArtifactStore, external, final_path
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.transfer.adapter import TaskAdapter, TaskModel, adapter_for, read_records, with_markers
from mbertlab.transfer.config import DataFile, TransferConfig


@dataclass
class Point:
    lr: float
    batch_size: int
    step: int
    epoch: float
    scores: dict[str, dict[str, float]]  # "lang.split" -> metrics
    checkpoint: int | None = None  # the pretraining checkpoint fine-tuned (None: the final model)
    epochs: float | None = None  # the run's planned epochs, where `epochs` is a grid


@dataclass
class Selection:
    score: float = -np.inf
    point: Point | None = None
    predictions: list = field(default_factory=list)
    state: dict | None = None  # the selected weights, kept only with `save_model`
    tokenizer: Any = None
    encoder_config: Any = None


def key(file: DataFile) -> str:
    return f"{file.lang}.{file.split}"


def run_transfer(config: TransferConfig, store: ArtifactStore, results: ResultsDB,
                 encoder: Artifact | None = None, encoder_dir: Path | None = None,
                 data: Artifact | None = None, study: str = "") -> Artifact:
    """Build the transfer artifact. The encoder is a pretrain artifact (its `model/`) or any HF directory;
    relative data paths in the config resolve against the `data` artifact (e.g. generated languages)."""
    directory = encoder.path / "model" if encoder is not None else encoder_dir
    outside = external(encoder_dir) if encoder is None and encoder_dir is not None else None
    inputs = [a for a in (encoder, outside, data) if a is not None]
    name = f"{encoder.stage}/{encoder.hash}" if encoder is not None else str(directory or "")
    root = data.path if data is not None else None
    return store.build("transfer", config,
                       lambda out: run_transfer_into(config, directory, Path(out), results, name, root, study),
                       inputs)


def run_transfer_into(config: TransferConfig, encoder_dir: Path | None, out: Path, results: ResultsDB,
                      model_name: str, data_root: Path | None = None, study: str = "") -> None:
    setup_torch()
    adapter = adapter_for(config.task, config)
    train_files = [(f, read_records(adapter, f, config.max_train_sentences, data_root)) for f in config.train]
    train = [r for _, records in train_files for r in records]
    evals = [(f, read_records(adapter, f, config.max_eval_sentences, data_root)) for f in config.evaluate]
    adapter.fit_labels(train)
    source_dev = _source_dev(config)
    if config.mode == "majority":
        predictions = [adapter.majority(train, records) for _, records in evals]
        history = [Point(0.0, 0, 0, 0.0, {key(f): adapter.metrics(r, p) for (f, r), p in zip(evals, predictions)})]
        chosen = Selection(point=history[0], predictions=predictions)
    else:
        if encoder_dir is None:
            raise ConfigError(f"transfer mode {config.mode!r} needs an encoder (--encoder)")
        device = resolve_device(config.device)
        history, chosen = _grid(config, adapter, encoder_dir, train_files, evals, source_dev, device)
        record_runtime(out, device, resolve_precision(config.precision, device))
    _write_outputs(config, adapter, evals, history, chosen, out, data_root)
    results.add(_rows(config, adapter, history, chosen, source_dev, model_name, study, out),
                replace_artifact=str(final_path(out)))


def _source_dev(config: TransferConfig) -> str | None:
    devs = [key(f) for f in config.evaluate if f.split == "dev" and f.lang in config.source_langs]
    if not devs and len(config.lr) * len(config.batch_size) * len(config.epoch_grid) > 1:
        raise ConfigError("a learning-rate / batch grid needs the source language's dev file in `evaluate`")
    if not devs and config.checkpoints:
        raise ConfigError("choosing among checkpoints needs the source language's dev file in `evaluate`")
    return devs[0] if devs else None


def _grid(config, adapter: TaskAdapter, encoder_dir: Path, train_files, evals, source_dev, device):
    from mbertlab.transfer.encoder import RANDOM_INIT_MODES, Features, load_encoder

    history: list[Point] = []
    chosen = Selection()
    best_dev: dict[str, float] = {}  # each dev file's best score so far (its test file's oracle point)
    for checkpoint, directory in _candidates(config, encoder_dir):
        for lr, batch_size, epochs in ((lr, b, e) for lr in config.lr for b in config.batch_size
                                       for e in config.epoch_grid):
            seed_everything(config.seed)
            tokenizer, encoder = load_encoder(directory, config.mode in RANDOM_INIT_MODES, config.seed, device)
            features = Features(encoder, config.mode, config.probe_layer, config.freeze_layers, config.precision)
            model = TaskModel(features, adapter.head(features.n_out)).to(device)  # heads drawn on the CPU first
            pad = tokenizer.pad_token_id
            items = [i for f, records in train_files for i in _encode(config, adapter, tokenizer, f, records, True)]
            encoded = [_encode(config, adapter, tokenizer, f, records, False) for f, records in evals]

            tests = [i for i, (f, _) in enumerate(evals) if f.split == "test"]

            def score_files(indices: list[int], preds: list) -> dict[str, dict[str, float]]:
                for i in indices:
                    preds[i] = adapter.predict(model, encoded[i], evals[i][1], pad)
                return {key(evals[i][0]): adapter.metrics(evals[i][1], preds[i]) for i in indices}

            def evaluate(step: int, epoch: float) -> float | None:
                preds: list = [None] * len(evals)
                scores = score_files([i for i in range(len(evals)) if i not in tests], preds)
                score = scores[source_dev][adapter.main_metric] if source_dev else None
                # without a source dev the last point is the model: its test files are scored once, after `fit`
                selected = source_dev is None or score > chosen.score
                improved = _improved(best_dev, scores, adapter.main_metric)
                scores |= score_files([i for i in tests if f"{evals[i][0].lang}.dev" in improved
                                       or (selected and source_dev is not None)], preds)
                point = Point(lr, batch_size, step, round(epoch, 4), _in_order(evals, scores), checkpoint,
                              epochs if isinstance(config.epochs, list) else None)
                history.append(point)
                if selected:
                    chosen.score, chosen.point, chosen.predictions = (score if score is not None else 0.0), point, preds
                    chosen.state = _cpu_copy(model.state_dict()) if config.save_model else None
                    chosen.tokenizer, chosen.encoder_config = tokenizer, encoder.config
                return score

            from mbertlab.transfer.train import fit

            fit(adapter, model, items, config, lr, batch_size, epochs, pad, evaluate)
            if source_dev is None and history:  # one run (a grid needs a source dev); the model is its last point
                last = history[-1]
                last.scores = _in_order(evals, last.scores | score_files(
                    [i for i in tests if key(evals[i][0]) not in last.scores], chosen.predictions))
    return history, chosen


def _in_order(evals, scores: dict) -> dict:
    """`scores` in the order of the evaluated files (the rows' order)."""
    return {key(f): scores[key(f)] for f, _ in evals if key(f) in scores}


def _improved(best: dict[str, float], scores: dict, metric: str) -> set[str]:
    """The dev files whose score first reaches their best so far (the point `_oracle_rows`' max picks), updating
    `best`; only there and at the selected points is a test file scored (scoring 5,000-pair XNLI tests at every
    evaluation multiplied their cost by the evaluations)."""
    improved = {name for name, metrics in scores.items() if metrics[metric] > best.get(name, -np.inf)}
    best |= {name: scores[name][metric] for name in improved}
    return improved


def _encode(config: TransferConfig, adapter: TaskAdapter, tokenizer, file: DataFile, records: list,
            training: bool) -> list:
    """One file's records as model inputs; with `markers`, each [SEP] is its segment's language marker."""
    items = adapter.encode(tokenizer, records, training=training)
    if not config.markers:
        return items
    from mbertlab.tokenizers.train import marker_token

    ids = []
    for lang in [file.lang] + ([file.hypothesis_lang] if file.hypothesis_lang else []):
        found = tokenizer.convert_tokens_to_ids(marker_token(lang))
        if found is None or found == tokenizer.unk_token_id:
            raise ConfigError(f"transfer: key 'markers': the tokenizer has no {marker_token(lang)} for {file.path} "
                              f"(language {lang!r}); markers need a tokenizer trained with markers: true")
        ids.append(found)
    return with_markers(items, tokenizer.sep_token_id, ids)


def _candidates(config: TransferConfig, encoder_dir: Path) -> list[tuple[int | None, Path]]:
    """(checkpoint step, directory): the listed checkpoints of the pretrain artifact whose `model/` is
    `encoder_dir`, then the final model itself."""
    from mbertlab.transfer.encoder import checkpoint_dir

    if config.checkpoints and encoder_dir.name != "model":
        raise ConfigError(f"{encoder_dir}: checkpoints are chosen among a pretrain artifact's saves; this encoder "
                          "is not one")
    return [(step, checkpoint_dir(encoder_dir.parent, step)) for step in config.checkpoints] + [(None, encoder_dir)]


def _cpu_copy(state: dict) -> dict:
    """A snapshot of weights on the CPU (a saved model loads on any device)."""
    return {name: t.detach().to("cpu", copy=True) for name, t in state.items()}


def _write_outputs(config, adapter, evals, history, chosen: Selection, out: Path, root) -> None:
    (out / "predictions").mkdir()
    for (file, records), preds in zip(evals, chosen.predictions):
        adapter.write(file, records, preds, out / "predictions", root)
    with open(out / "history.jsonl", "w", encoding="utf-8") as f:
        for point in history:
            f.write(json.dumps(asdict(point)) + "\n")
    scores = {"selected": asdict(chosen.point), "source_dev": _source_dev(config)}
    (out / "scores.json").write_text(json.dumps(scores, indent=1) + "\n", encoding="utf-8")
    if config.save_model and chosen.state is not None:
        _save_model(adapter, chosen, out / "model")


def _save_model(adapter, chosen: Selection, folder: Path) -> None:
    """The selected weights (encoder + head) and what evaluation needs to rebuild them."""
    import torch

    folder.mkdir()
    torch.save(chosen.state, folder / "weights.pt")
    chosen.tokenizer.save_pretrained(str(folder / "tokenizer"))
    chosen.encoder_config.save_pretrained(str(folder / "encoder"))
    (folder / "labels.json").write_text(json.dumps(adapter.label_state()) + "\n", encoding="utf-8")


def _rows(config, adapter, history: list[Point], chosen: Selection, source_dev, model_name, study, out) -> list:
    artifact = str(final_path(out))
    point = chosen.point
    extra = {"lr": point.lr, "batch_size": point.batch_size, "step": point.step, "epoch": point.epoch,
             **({"checkpoint": point.checkpoint or "final"} if config.checkpoints else {}),
             **({"epochs": point.epochs} if isinstance(config.epochs, list) else {})}

    def row(metric: str, value: float, lang: str, split: str) -> ResultRow:
        return ResultRow(metric=metric, value=float(value), study=study, model=model_name, task=config.task,
                         mode=config.mode, train_lang="+".join(config.source_langs), test_lang=lang, split=split,
                         seed=config.seed, config_hash=final_path(out).name, artifact=artifact,
                         extra={**extra, "transfer": _transfer_kind(config, lang)})

    rows = []
    for name, metrics in point.scores.items():
        lang, split = name.rsplit(".", 1)
        rows += [row(m, v, lang, split) for m, v in metrics.items()]
    for split in sorted({f.split for f in config.evaluate}):
        targets = [key(f) for f in config.evaluate if f.split == split and f.lang not in config.source_langs]
        if len(targets) > 1:
            for metric in point.scores[targets[0]]:
                rows.append(row(metric, np.mean([point.scores[t][metric] for t in targets]), "avg", split))
    return rows + _oracle_rows(config, adapter, history, row)


def _transfer_kind(config, lang: str) -> str:
    """in-language (tested on a training language), zero-shot (on another), or zero-shot mean (the `avg` row):
    a scorecard selects either kind from jobs that test both."""
    if lang == "avg":
        return "zero-shot mean"
    return "in-language" if lang in config.source_langs else "zero-shot"


def _oracle_rows(config, adapter, history: list[Point], row) -> list:
    """Each target's test score at the evaluation its own dev set prefers (an upper bound, not a protocol)."""
    rows = []
    for file in config.evaluate:
        dev = f"{file.lang}.dev"
        if file.split != "test" or file.lang in config.source_langs or not history or dev not in history[0].scores:
            continue
        best = max(history, key=lambda p: p.scores[dev][adapter.main_metric])
        rows += [row(f"oracle_{m}", v, file.lang, "test") for m, v in best.scores[key(file)].items()]
    return rows
