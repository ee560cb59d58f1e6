"""CLI: data check — read any supported file strictly and print its counts."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

data_app = typer.Typer(help="Inspect data files.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")


@data_app.command("check")
def check(
    path: Path = typer.Argument(..., help="A data file."),
    format: Optional[str] = typer.Option(None, "--format", "-f",
                                         help="conllu, ner, udpos, xnli, mldoc, langid, muse or text "
                                              "(default: guessed from the name)."),
    skip_invalid: bool = typer.Option(False, help="Skip malformed sentences and count them."),
    v1_to_v2: bool = typer.Option(False, "--v1-to-v2", help="CoNLL-U: map UD v1 labels (CONJ, dobj, ...) to v2."),
) -> None:
    """Read a file strictly; print sentences/examples, tokens and the label inventory, or the first error."""
    from rich.console import Console

    from mbertlab.formats.guess import summarize

    info = summarize(path, format, skip_invalid, v1_to_v2)
    console = Console()
    if info["format"] == "conllu":
        counts = (f"{info['items']} sentences, {info['words']} syntactic words, {info['tokens']} surface tokens, "
                  f"{info['multiword']} multiword tokens, {info['empty']} empty nodes")
    else:
        counts = f"{info['items']} items, {info['tokens']} tokens"
    console.print(f"{info['path']} ({info['format']}): {counts}"
                  + (f", {info['skipped']} skipped" if info["skipped"] else ""))
    if info["labels"]:
        console.print("labels: " + ", ".join(f"{k} {v}" for k, v in info["labels"].items()))


@data_app.command("get")
def get(
    ctx: typer.Context,
    kind: str = typer.Argument(..., help="ud, wikiann, xnli, muse or wikipedia."),
    names: List[str] = typer.Argument(
        None, help="Items: a UD version (2.12), MUSE pairs (en-de), wiki languages (en)."),
    cache: Optional[Path] = typer.Option(None, help="Cache directory (default <workdir>/downloads)."),
    base_url: Optional[str] = typer.Option(None, help="Fetch from this base URL instead (a mirror)."),
    sha256: Optional[str] = typer.Option(None, help="Expected SHA-256; a mismatching file is removed."),
) -> None:
    """Download public data into the cache (resumable, checksum-verified)."""
    from mbertlab.cli.common import state
    from mbertlab.data.downloads import get as fetch

    for path in fetch(kind, list(names or []), cache or state(ctx).workdir / "downloads", base_url, sha256):
        typer.echo(str(path))
