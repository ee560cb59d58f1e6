"""CLI: tokenizer train | encode."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, List

import typer

from mbertlab.cli.common import state

if TYPE_CHECKING:
    from mbertlab.store.artifacts import Artifact

tokenizer_app = typer.Typer(help="Train tokenizers and encode corpora into token shards.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(tokenizer_app, name="tokenizer")


def _corpus_languages(corpus: Artifact, split: str) -> list[str]:
    return [p.parent.name for p in sorted(corpus.path.glob(f"*/{split}.txt"))]


def _corpus_files(corpus: Artifact, languages: list[str], split: str) -> dict[str, Path]:
    """The text of `languages` in the corpus, or of every language it has when none is listed."""
    from mbertlab.store.layout import text_path

    return {l: text_path(corpus, l, split) for l in languages or _corpus_languages(corpus, split)}


@tokenizer_app.command("train")
def train(
    ctx: typer.Context,
    config: Path = typer.Argument(..., help="A TokenizerConfig YAML (kind, vocab_size, languages, markers)."),
    corpus: Path = typer.Option(..., help="A corpus artifact directory (<lang>/train.txt per language)."),
    set_: List[str] = typer.Option([], "--set", help="Override a key, e.g. --set vocab_size=4000."),
) -> None:
    """Learn a vocabulary; the artifact is a Hugging Face tokenizer directory."""
    from mbertlab.config import load_config
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.tokenizers.train import TokenizerConfig, check_languages, train_tokenizer_into

    store = ArtifactStore(state(ctx).workdir)
    source = store.open(corpus, "corpus")
    cfg = load_config(TokenizerConfig, config, set_)
    files = _corpus_files(source, cfg.languages, "train")
    check_languages(cfg, files)
    artifact = store.build("tokenizer", cfg, lambda out: train_tokenizer_into(cfg, files, out), [source])
    typer.echo(str(artifact.path))


@tokenizer_app.command("encode")
def encode(
    ctx: typer.Context,
    tokenizer: Path = typer.Option(..., help="A tokenizer artifact directory."),
    corpus: Path = typer.Option(..., help="A corpus artifact directory."),
    languages: List[str] = typer.Option(..., "--lang", help="Languages to encode (repeatable)."),
    shift_ids: List[str] = typer.Option([], "--shift-ids", help="A language whose non-special ids move to a "
                                        "disjoint range (vocabulary-ID fake copy; repeatable)."),
) -> None:
    """Encode a corpus into memory-mapped token shards for pretraining."""
    from mbertlab.config import parse_config
    from mbertlab.errors import ConfigError
    from mbertlab.store.artifacts import ArtifactStore
    from mbertlab.tokenizers.shards import ShardsConfig, write_shards_into

    store = ArtifactStore(state(ctx).workdir)
    tok, source = store.open(tokenizer, "tokenizer"), store.open(corpus, "corpus")
    cfg = parse_config(ShardsConfig, {"languages": list(languages), "shift_ids": list(shift_ids)}, "tokenizer encode")
    texts = {l: {s: source.path / l / f"{s}.txt" for s in cfg.splits} for l in cfg.languages}
    missing = [l for l, files in texts.items() if not all(path.is_file() for path in files.values())]
    if missing:
        raise ConfigError(f"tokenizer encode: --lang {', '.join(missing)}: not in the corpus (it has "
                          f"{', '.join(_corpus_languages(source, 'train')) or 'none'})")
    artifact = store.build("shards", cfg, lambda out: write_shards_into(cfg, tok.path, texts, out), [tok, source])
    typer.echo(str(artifact.path))
