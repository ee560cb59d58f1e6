"""CLI: transfer (train on sources, evaluate every listed file; optionally the full language matrix),
finetune / evaluate (single runs with a saved model), score (re-score any prediction file), langid."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import device_option, device_overrides, state
from mbertlab.transfer.task_table import TASKS, data_formats, get_task


def register(app: typer.Typer) -> None:
    app.command("transfer")(transfer)
    app.command("finetune")(finetune)
    app.command("evaluate")(evaluate)
    app.command("score")(score)
    app.command("langid")(langid)


def _encoder(store, encoder: Optional[Path]):
    """A pretrain artifact directory, or any Hugging Face encoder directory."""
    is_artifact = encoder is not None and (encoder / "meta.json").is_file() and (encoder / "model").is_dir()
    return (store.open(encoder, "pretrain"), None) if is_artifact else (None, encoder)


def _run(ctx: typer.Context, config_path: Path, encoder: Optional[Path], overrides: list[str], **forced):
    from mbertlab.config import load_config
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.transfer.config import TransferConfig
    from mbertlab.transfer.run import run_transfer

    workdir = state(ctx).workdir
    store = ArtifactStore(workdir)
    cfg = load_config(TransferConfig, config_path, overrides)
    cfg = cfg.model_copy(update=forced) if forced else cfg
    artifact, directory = _encoder(store, encoder)
    return cfg, lambda c: run_transfer(c, store, open_results(workdir), encoder=artifact, encoder_dir=directory)


def transfer(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="A TransferConfig YAML (task, mode, train files, evaluation files)."),
    encoder: Optional[Path] = typer.Option(None, help="A pretrain artifact, or any Hugging Face encoder directory."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set lr=[3e-5] --set seed=1."),
    matrix: bool = typer.Option(False, help="One run per train file (each language as the only source), "
                                "every run scored on every evaluation file: the language x language matrix."),
    device: Optional[str] = device_option(),
) -> None:
    """Train on the source language(s), evaluate every listed file; scores go to results.db."""
    cfg, run = _run(ctx, config, encoder, device_overrides(set_, device))
    runs = [cfg.model_copy(update={"train": [f]}) for f in cfg.train] if matrix else [cfg]
    table, paths = {}, {}
    for c in runs:
        source = "+".join(c.source_langs)
        paths[source] = run(c).path
        table[source] = json.loads((paths[source] / "scores.json").read_text())["selected"]["scores"]
    _print_table(table, cfg.task)
    for source, path in paths.items():  # the artifact last, as every stage command does
        typer.echo(f"{source} -> {path}" if matrix else str(path))


def _print_table(table: dict[str, dict[str, dict[str, float]]], task: str) -> None:
    metric = get_task(task).metric
    columns = sorted({k for scores in table.values() for k in scores})
    typer.echo(f"{metric}: train \\ eval  " + "  ".join(f"{c:>10}" for c in columns))
    for source, scores in table.items():
        cells = [f"{100 * scores[c][metric]:10.1f}" if c in scores else f"{'':>10}" for c in columns]
        typer.echo(f"{source:>20}  " + "  ".join(cells))


def finetune(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="A TransferConfig YAML."),
    encoder: Optional[Path] = typer.Option(None, help="A pretrain artifact, or any Hugging Face encoder directory."),
    set_: List[str] = typer.Option([], "--set", help="Override a key."),
    device: Optional[str] = device_option(),
) -> None:
    """One fine-tuning run that keeps the selected model (for `mbertlab evaluate`); prints its directory."""
    cfg, run = _run(ctx, config, encoder, device_overrides(set_, device), save_model=True)
    result = run(cfg)
    typer.echo(json.dumps(json.loads((result.path / "scores.json").read_text())["selected"]["scores"], indent=1))
    typer.echo(str(result.path))


def evaluate(
    run_dir: Path = typer.Argument(..., help="A transfer artifact made by `mbertlab finetune`."),
    gold: Path = typer.Argument(..., help="A file of the run's task (CoNLL-U, NER columns, XNLI or MLDoc TSV)."),
    lang: str = typer.Option("", help="Its language (names the prediction file)."),
    fmt: Optional[str] = typer.Option(None, "--format", help=f"{', '.join(data_formats())} (default: by task)."),
    out: Path = typer.Option(Path("."), help="Folder for the prediction file."),
    device: Optional[str] = device_option(),
) -> None:
    """Predict a file with a saved model; writes predictions in the file's format and prints metrics as JSON."""
    from mbertlab.config import parse_config
    from mbertlab.transfer.config import DataFile, TransferConfig
    from mbertlab.transfer.evaluate import evaluate_file

    task = TransferConfig.model_validate_json((run_dir / "config.json").read_text()).task
    file = parse_config(DataFile, {"lang": lang or gold.stem, "split": "eval", "path": str(gold),
                                   "format": fmt or get_task(task).format_of(gold)}, "evaluate")
    metrics, path = evaluate_file(run_dir, file, out, device or "auto")
    typer.echo(json.dumps(metrics, indent=1))
    typer.echo(str(path))


def score(
    task: str = typer.Argument(..., help=", ".join(TASKS) + "."),
    gold: Path = typer.Argument(..., help="Gold file (CoNLL-U or XTREME TSV for UPOS; column file for NER; "
                                "CoNLL-U for parse; TSV for xnli/mldoc)."),
    pred: Path = typer.Argument(..., help="Predictions in the same format."),
    gold_v1_to_v2: bool = typer.Option(False, "--gold-v1-to-v2", help="CoNLL-U: map gold's UD v1 labels to v2."),
    pred_v1_to_v2: bool = typer.Option(False, "--pred-v1-to-v2", help="CoNLL-U: map the predictions' UD v1 labels "
                                       "to v2 (off: scored as written, as the CoNLL 2018 scorer does)."),
) -> None:
    """Re-score a prediction file against gold with the code that scores runs; prints JSON."""
    from mbertlab.transfer.config import DataFile
    from mbertlab.transfer.evaluate import score_files

    files = [DataFile(lang="", path=str(p), format=get_task(task).format_of(p), v1_to_v2=v1)
             for p, v1 in ((gold, gold_v1_to_v2), (pred, pred_v1_to_v2))]
    typer.echo(json.dumps(score_files(task, *files), indent=1))


def langid(
    ctx: typer.Context,
    encoder: Path = typer.Option(..., help="A pretrain artifact, or any Hugging Face encoder directory."),
    text: List[str] = typer.Option(..., help="LANG=PATH of a plain-text file (one sentence per line); repeat."),
    sentences: int = typer.Option(1000, help="Sentences per language."),
    seed: int = typer.Option(0),
    device: Optional[str] = device_option(),
) -> None:
    """Language-ID accuracy of a linear probe on every layer of a frozen encoder (Wu & Dredze 2019)."""
    from mbertlab.errors import ConfigError
    from mbertlab.store.artifacts import ArtifactStore, external
    from mbertlab.store.results import open_results
    from mbertlab.config import parse_config
    from mbertlab.transfer.langid import LangIdConfig, run_langid_into

    if any("=" not in t for t in text):
        raise ConfigError("--text expects LANG=PATH")
    files = [{"lang": t.split("=", 1)[0], "path": t.split("=", 1)[1]} for t in text]
    config = parse_config(LangIdConfig, {"files": files, "sentences": sentences, "seed": seed,
                                         "device": device or "auto"}, "langid")
    workdir = state(ctx).workdir
    store = ArtifactStore(workdir)
    artifact, directory = _encoder(store, encoder)
    source = artifact or external(directory)
    directory = artifact.path / "model" if artifact is not None else directory
    results = open_results(workdir)
    built = store.build("langid", config, lambda out: run_langid_into(config, directory, out, results,
                                                                       str(encoder)), [source])
    scores = json.loads((built.path / "scores.json").read_text())["accuracy_by_layer"]
    for layer, value in enumerate(scores):
        typer.echo(f"layer {layer:2d}  accuracy {100 * value:5.1f}")
