"""CLI: generate — build generated languages (the embedded default data)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import plain_console, state


def register(app: typer.Typer) -> None:
    app.command("generate")(generate)


def generate(
    ctx: typer.Context,
    preset: str = typer.Option("quick", help="Named set of languages (see docs/generated-languages.md)."),
    config: Optional[Path] = typer.Option(None, help="A GenerateConfig YAML instead of a preset."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set sentences.train=5000."),
    seed: int = typer.Option(0, help="Seed of the grammar, lexicons and samples."),
) -> None:
    """Generate languages with gold UPOS, trees, entities and lexicons; print the artifact and counts."""
    from rich.table import Table

    from mbertlab.config import apply_overrides, blaming_overrides, load_config
    from mbertlab.data.generate import GenerateConfig, build_generated, preset_config
    from mbertlab.store.artifacts import ArtifactStore

    if config is not None:
        cfg = load_config(GenerateConfig, config, set_)
    else:
        cfg = blaming_overrides(lambda sets: preset_config(preset, seed, apply_overrides({}, sets)), list(set_),
                                f"preset {preset}")
    artifact = build_generated(cfg, ArtifactStore(state(ctx).workdir))
    import json

    summary = json.loads((artifact.path / "languages.json").read_text(encoding="utf-8"))
    table = Table("language", "split", "sentences", "tokens", "word types")
    for lang, info in summary.items():
        for split in ("train", "dev", "test"):
            c = info[split]
            table.add_row(lang, split, str(c["sentences"]), str(c["tokens"]), str(c["types"]))
    console = plain_console()
    console.print(table)
    console.print(str(artifact.path))
