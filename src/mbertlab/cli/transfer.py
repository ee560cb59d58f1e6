"""CLI: transfer (fine-tune and evaluate across languages) and score (re-score any prediction file)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import state


def register(app: typer.Typer) -> None:
    app.command("transfer")(transfer)
    app.command("score")(score)


def transfer(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="A TransferConfig YAML (task, mode, train file, evaluation files)."),
    encoder: Optional[Path] = typer.Option(None, help="A pretrain artifact, or any Hugging Face encoder directory."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set lr=3e-5 --set seed=1."),
) -> None:
    """Train on the source language, evaluate every listed language; scores go to results.db."""
    from mbertlab.config import load_config
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.store.results import open_results
    from mbertlab.transfer.config import TransferConfig
    from mbertlab.transfer.run import run_transfer

    workdir = state(ctx).workdir
    store = ArtifactStore(workdir)
    cfg = load_config(TransferConfig, config, set_)
    artifact_dir = encoder is not None and (encoder / "meta.json").is_file() and (encoder / "model").is_dir()
    pretrained = store.open(encoder, "pretrain") if artifact_dir else None
    result = run_transfer(cfg, store, open_results(workdir), encoder=pretrained,
                          encoder_dir=None if pretrained else encoder)
    typer.echo((result.path / "scores.json").read_text().strip())
    typer.echo(str(result.path))


def score(
    task: str = typer.Argument(..., help="upos or ner."),
    gold: Path = typer.Argument(..., help="Gold file (CoNLL-U or XTREME TSV for UPOS; column file for NER)."),
    pred: Path = typer.Argument(..., help="Predictions in the same format."),
) -> None:
    """Re-score a prediction file against gold with the code that scores runs; prints JSON."""
    from mbertlab.errors import DataError
    from mbertlab.transfer.config import DataFile
    from mbertlab.transfer.tagging import load_tagged, metrics_for

    def fmt(path: Path) -> str:
        return "conllu" if path.suffix == ".conllu" else "udpos" if task == "upos" else "ner"

    g = load_tagged(DataFile(lang="", path=str(gold), format=fmt(gold)), task, None)
    p = load_tagged(DataFile(lang="", path=str(pred), format=fmt(pred)), task, None)
    if [s.tokens for s in g] != [s.tokens for s in p]:
        raise DataError(pred, None, f"expected the same sentences and tokens as {gold}")
    typer.echo(json.dumps(metrics_for(task, [s.tags for s in g], [s.tags for s in p]), indent=1))
