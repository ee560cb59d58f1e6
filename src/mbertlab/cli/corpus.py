"""CLI: corpus build | transform."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import plain_console, state

corpus_app = typer.Typer(help="Build corpora and apply controlled manipulations.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(corpus_app, name="corpus")
    app.command("overlap", help="Subword overlap p_type / p_token (same as `corpus overlap`).")(overlap_cmd)


@corpus_app.command("build")
def build(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="A CorpusConfig YAML (languages with sources, budgets, fake script)."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set dev_fraction=0.05."),
) -> None:
    """Build a corpus artifact: per language train/dev text and statistics (sentences, tokens, WikiSize)."""
    from mbertlab.config import load_config
    from mbertlab.corpus.build import CorpusConfig, build_corpus_into
    from mbertlab.store.artifacts import ArtifactStore

    cfg = load_config(CorpusConfig, config, set_)
    artifact = ArtifactStore(state(ctx).workdir).build("corpus", cfg, lambda out: build_corpus_into(cfg, out))
    typer.echo(str(artifact.path))


@corpus_app.command("transform")
def transform(
    kind: str = typer.Argument(..., help="A manipulation: fake-script, unigram, window, permute (and any "
                               "registered word-by-word one)."),
    src: Path = typer.Argument(..., help="Input text, one sentence per line."),
    dst: Path = typer.Argument(..., help="Output text."),
    seed: int = typer.Option(0, help="Seed (unigram, permute)."),
    p: float = typer.Option(1.0, help="permute: share of ⌊L/2⌋ word pairs swapped."),
    w: int = typer.Option(20, help="window: at most w words per segment."),
    shift: Optional[int] = typer.Option(None, help="fake-script: code-point shift (default: into plane 15)."),
) -> None:
    """Apply a text-level manipulation to a plain-text file."""
    from mbertlab.corpus.manipulations import MANIPULATIONS, PLANE_15, ManipulationOptions
    from mbertlab.formats.text import read_lines, write_lines

    manipulate = MANIPULATIONS.get(kind)
    opts = ManipulationOptions(seed=seed, p=p, w=w, shift=shift if shift is not None else PLANE_15)
    out = manipulate(list(read_lines(src)), opts)
    write_lines(out, dst)
    typer.echo(f"{dst}: {len(out)} lines")


@corpus_app.command("overlap")
def overlap_cmd(
    source: Path = typer.Argument(..., help="Source text, one sentence per line."),
    target: Path = typer.Argument(..., help="Target text."),
    tokenizer: Optional[Path] = typer.Option(None, help="A tokenizer directory (default: whitespace tokens)."),
) -> None:
    """Subword overlap of a target text against a source text: p_type and p_token (Wu & Dredze 2019)."""
    import json

    from mbertlab.corpus.overlap import overlap
    from mbertlab.formats.text import read_lines

    if tokenizer is not None:
        from mbertlab.tokenizers.train import load_tokenizer

        tok = load_tokenizer(tokenizer)
        split = lambda line: tok.tokenize(line)  # noqa: E731
    else:
        split = str.split
    tokens = lambda path: (t for line in read_lines(path) for t in split(line))  # noqa: E731
    typer.echo(json.dumps(overlap(tokens(source), tokens(target)), indent=1))


@corpus_app.command("stats")
def stats_cmd(
    paths: List[Path] = typer.Argument(..., help="Corpus artifact directories or plain-text files."),
) -> None:
    """Sentences, whitespace tokens, characters, bytes, MB and WikiSize (log2 MB) per language and split."""
    import json

    from rich.table import Table

    from mbertlab.corpus.stats import text_stats

    table = Table("corpus", "language", "split", "sentences", "tokens", "characters", "MB", "WikiSize")
    for path in paths:
        if path.is_dir():
            rows = json.loads((path / "stats.json").read_text(encoding="utf-8"))
        else:
            rows = {path.stem: {"file": text_stats(path)}}
        for lang, splits in rows.items():
            for split, s in splits.items():
                if split == "sampling":
                    continue
                table.add_row(path.name, lang, split, str(s["sentences"]), str(s["tokens"]), str(s["characters"]),
                              f"{s['mb']:.3f}", "-" if s["wikisize"] is None else f"{s['wikisize']:.2f}")
    plain_console().print(table)
