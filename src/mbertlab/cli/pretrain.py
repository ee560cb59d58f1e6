"""CLI: pretrain — train a BERT masked-LM on token shards (also under torchrun, one process per rank)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import state


def register(app: typer.Typer) -> None:
    app.command("pretrain")(pretrain)


def pretrain(
    ctx: typer.Context,
    config: Optional[Path] = typer.Argument(None, help="A PretrainConfig YAML (defaults otherwise)."),
    shards: Path = typer.Option(..., help="A shards artifact directory."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set steps=2000 --set model.layers=2."),
) -> None:
    """Pretrain (or resume) an encoder; the artifact holds model/ (Hugging Face format), checkpoints/, metrics.

    Data-parallel: `torchrun --nproc_per_node N -m mbertlab pretrain ...` (rank 0 owns the artifact).
    """
    from mbertlab.config import load_config
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.pretrain.distributed import world_from_env
    from mbertlab.pretrain.loop import build_pretrain
    from mbertlab.store.artifacts import ArtifactStore

    store = ArtifactStore(state(ctx).workdir)
    cfg = load_config(PretrainConfig, config, set_)
    artifact = build_pretrain(store, cfg, store.open(shards, "shards"))
    if world_from_env().main:
        typer.echo(str(artifact.path))
