"""CLI: data check (read any supported file strictly and print its counts) and data get (downloads)."""
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
    from mbertlab.cli.common import plain_console
    from mbertlab.formats.guess import summarize

    info = summarize(path, format, skip_invalid, v1_to_v2)
    console = plain_console()
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
        None, help="Items: a UD release (2.12), MUSE pairs (en-de), wiki languages (en)."),
    cache: Optional[Path] = typer.Option(None, help="Cache directory (default <workdir>/downloads)."),
    base_url: Optional[str] = typer.Option(None, help="Fetch from this http://, https:// or file:// base URL "
                                                      "instead (a mirror with the same layout)."),
    sha256: Optional[str] = typer.Option(None, help="Expected SHA-256 of the one file (replaces the pinned one); "
                                                    "a mismatching download is discarded."),
    unpack: bool = typer.Option(True, help="Unpack archives (.tgz, .tar, .zip) into the cache, member by member "
                                           "checked, and print the directory."),
) -> None:
    """Download public data into the cache: resumable, complete only when every byte arrived, checksum-verified
    where a digest is pinned or given; archives are unpacked safely."""
    from mbertlab.cli.common import state
    from mbertlab.data.downloads import get as fetch

    cache_dir = cache or state(ctx).workdir / "downloads"
    for path in fetch(kind, list(names or []), cache_dir, base_url, sha256, extract=unpack):
        typer.echo(str(path))
