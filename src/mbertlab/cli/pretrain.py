"""CLI: pretrain — train a BERT masked-LM on token shards (also under torchrun, one process per rank)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import device_option, device_overrides, state


def register(app: typer.Typer) -> None:
    app.command("pretrain")(pretrain)
    app.command("teacher-cache")(teacher_cache)


def pretrain(
    ctx: typer.Context,
    config: Optional[Path] = typer.Argument(None, help="A PretrainConfig YAML (defaults otherwise)."),
    shards: Path = typer.Option(..., help="A shards artifact directory."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set steps=2000 --set model.layers=2."),
    device: Optional[str] = device_option(),
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
    cfg = load_config(PretrainConfig, config, device_overrides(set_, device))
    artifact = build_pretrain(store, cfg, store.open(shards, "shards"))  # every rank has passed its last barrier
    world = world_from_env()
    if world.main:
        typer.echo(str(artifact.path))
    world.close()


def teacher_cache(
    ctx: typer.Context,
    config: Optional[Path] = typer.Argument(None, help="The student's PretrainConfig YAML (objective: distill, "
                                            "teachers)."),
    shards: Path = typer.Option(..., help="The shards directory the students train on."),
    k: int = typer.Option(64, help="Teacher probabilities kept per masked position (k = vocabulary: exact)."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set steps=2000."),
    device: Optional[str] = device_option(),
) -> None:
    """Run the teachers once over the student's batches and keep their top-k probabilities; students read it
    with `--set teacher_cache=DIR` instead of running teachers. Prints the cache's directory."""
    from mbertlab.config import load_config
    from mbertlab.errors import ConfigError
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.pretrain.teacher_cache import TeacherCacheConfig, cache_teacher_topk_into, data_fingerprint
    from mbertlab.runtime import record_runtime, resolve_device, resolve_precision
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.tokenizers.shards import ShardReader

    store = ArtifactStore(state(ctx).workdir)
    cfg = load_config(PretrainConfig, config, device_overrides(set_, device))
    if cfg.objective != "distill" or not cfg.teachers or cfg.teacher_cache:
        raise ConfigError("teacher-cache needs a student config with objective: distill, teachers, and no "
                          "teacher_cache")
    key = TeacherCacheConfig(student=cfg, k=k, data=data_fingerprint(cfg, ShardReader(shards)))

    def build(out: Path) -> None:  # in a subdirectory: the store keeps its own meta.json at the top
        (Path(out) / "cache").mkdir()
        cache_teacher_topk_into(cfg, shards, Path(out) / "cache", k)
        device = resolve_device(cfg.device)
        record_runtime(out, device, resolve_precision(cfg.precision, device))

    typer.echo(str(store.build("teacher_cache", key, build).path / "cache"))
