"""CLI: analysis commands (thin: parse, call one library function, print)."""
from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from mbertlab.cli.common import device_option, state

analyze_app = typer.Typer(help="Analyses over results.db (regression, correlation, by-layer plots) and of task files.",
                          no_args_is_help=True)


def register(app: typer.Typer) -> None:
    """Add this module's commands to the root app."""
    app.add_typer(analyze_app, name="analyze")
    app.command("embed")(embed)
    app.command("retrieve")(retrieve)


def _filters(study: Optional[str], task: Optional[str], where: List[str]) -> dict:
    from mbertlab.errors import ConfigError
    from mbertlab.store.results import COLUMNS

    filters = {k: v for k, v in (("study", study), ("task", task)) if v is not None}
    for item in where:
        key, sep, value = item.partition("=")
        if not sep or key not in COLUMNS:
            raise ConfigError(f"--where {item!r}: expected COLUMN=VALUE with a column among {', '.join(COLUMNS)}")
        filters[key] = int(value) if key == "seed" else value
    return filters


STUDY = typer.Option(None, help="Only rows of this study (also the study of the rows written).")
TASK = typer.Option(None, help="Only score rows of this task.")
WHERE = typer.Option([], help="Column filter COLUMN=VALUE on the score rows (repeatable).")


@analyze_app.command("regress")
def regress(ctx: typer.Context, score: str = typer.Option(..., help="Metric regressed (e.g. f1)."),
            factors: str = typer.Option(..., help="Comma-separated factors: extra keys or metrics per test "
                                        "language; log2:NAME takes log2."),
            study: Optional[str] = STUDY, task: Optional[str] = TASK, where: List[str] = WHERE) -> None:
    """OLS of a score on factors: univariate and multivariate fits, LR tests; rows written to results.db."""
    from mbertlab.analysis.regress import (
        fit_ols,
        regression_rows,
        table_from_results,
        univariate,
    )
    from mbertlab.store.results import open_results

    names = [f.strip() for f in factors.split(",") if f.strip()]
    db = open_results(state(ctx).workdir, existing=True)
    factor_rows = [r for n in names for r in db.query(metric=n.removeprefix("log2:"))]
    table = table_from_results(db.query(metric=score, **_filters(study, task, where)), factor_rows, score, names)
    fits, full = univariate(table, score, names), fit_ols(table, score, names)
    rows = regression_rows(fits, full, study or "")
    db.add(rows)
    for fit in [*fits, full]:
        typer.echo(f"{score} ~ {' + '.join(fit.factors)}   R2={fit.r2:.4f}  logL={fit.llf:.3f}  n={fit.nobs}")
        for c in fit.coefficients:
            typer.echo(f"  {c.name:<20} {c.coef:>10.4f}  p={c.p_value:.3g}  95% CI [{c.ci_low:.4f}, {c.ci_high:.4f}]")
    for r in rows:
        if r.metric == "lr_test":
            typer.echo(f"LR test {r.extra['restricted']} vs {r.extra['full']}: {r.value:.4f} "
                       f"(df {r.extra['df']}, p={r.extra['p_value']:.3g})")


@analyze_app.command("correlate")
def correlate(ctx: typer.Context, score: str = typer.Option(..., help="Zero-shot metric (e.g. accuracy)."),
              overlap: str = typer.Option("p_type", help="Overlap metric: p_type or p_token."),
              plot: Optional[Path] = typer.Option(None, help="Scatter plot PNG (default WORKDIR/analysis/...)."),
              study: Optional[str] = STUDY, task: Optional[str] = TASK, where: List[str] = WHERE) -> None:
    """Pearson r between zero-shot scores and subword overlap, per task, with a scatter plot."""
    from mbertlab.analysis.correlate import correlation_rows, pearson, points_from_results
    from mbertlab.report.plots import save_png, scatter_png
    from mbertlab.store.results import open_results

    work = state(ctx).workdir
    db = open_results(work, existing=True)
    points = points_from_results(db.query(metric=score, **_filters(study, task, where)), db.query(metric=overlap))
    found = [pearson(t, overlap, xs, ys) for t, (xs, ys) in sorted(points.items())]
    db.add(correlation_rows(found, score, study or ""))
    out = save_png(scatter_png(points, overlap, score), plot or work / "analysis" / f"correlate-{score}-{overlap}.png")
    for c in found:
        typer.echo(f"{c.task:<12} r={c.r:.4f}  p={c.p_value:.3g}  n={c.n}")
    typer.echo(f"plot: {out}")


@analyze_app.command("layers")
def layers(ctx: typer.Context, metric: str = typer.Option("accuracy", help="Metric plotted by layer."),
           plot: Optional[Path] = typer.Option(None, help="Line plot PNG (default WORKDIR/analysis/...)."),
           study: Optional[str] = STUDY, task: Optional[str] = TASK, where: List[str] = WHERE) -> None:
    """A metric by layer (language ID accuracy, retrieval MRR) as a line plot; rows need extra.layer."""
    from mbertlab.analysis.correlate import layer_series
    from mbertlab.report.plots import layer_png, save_png
    from mbertlab.errors import ConfigError
    from mbertlab.store.results import open_results

    work = state(ctx).workdir
    series = layer_series(open_results(work, existing=True).query(metric=metric, **_filters(study, task, where)))
    if not series:
        raise ConfigError(f"no {metric!r} rows match")
    out = save_png(layer_png(series, metric), plot or work / "analysis" / f"layers-{metric}.png")
    for name, values in sorted(series.items()):
        typer.echo(f"{name}: " + "  ".join(f"{l}:{values[l]:.4f}" for l in sorted(values)))
    typer.echo(f"plot: {out}")


@analyze_app.command("ner-cues")
def ner_cues(train: Path = typer.Option(..., help="The source's NER training file (word<TAB>TAG)."),
             test: Path = typer.Option(..., help="A target's NER file to score on.")) -> None:
    """Entity F1 of model-free taggers fitted on the source, one surface cue each (shared names, case, the
    words beside a name): what a zero-shot NER transfer could ride on without an encoder."""
    from mbertlab.analysis.ner_cues import ner_cue_scores

    for name, f1 in ner_cue_scores(train, test).items():
        typer.echo(f"{name:<20} F1 {100 * f1:.1f}")


def embed(tokenizer: Path = typer.Option(..., help="Tokenizer directory (the BERT artifact's)."),
          files: List[Path] = typer.Argument(..., help="Text files, one sentence per line."),
          out: Path = typer.Option(..., help="Output directory (vectors.txt, stats.json)."),
          method: str = typer.Option("word2vec_sg", help="word2vec_sg, word2vec_cbow or glove."),
          dim: int = typer.Option(768), window: int = typer.Option(5), negative: int = typer.Option(5),
          epochs: int = typer.Option(5), min_count: int = typer.Option(1), seed: int = typer.Option(0)) -> None:
    """Static embeddings on the same word pieces as a BERT model (Liu et al. 2020 baselines)."""
    from mbertlab.config import parse_config
    from mbertlab.embeddings.static import StaticConfig, train_static_into

    values = {"method": method, "dim": dim, "window": window, "negative": negative, "epochs": epochs,
              "min_count": min_count, "seed": seed}
    config = parse_config(StaticConfig, values, "command line")
    stats = train_static_into(config, tokenizer, files, out)
    typer.echo(f"{stats['vocab']} vectors of dim {stats['dim']} from {stats['tokens']} word pieces -> {out}")


def retrieve(ctx: typer.Context, dict_: Path = typer.Option(..., "--dict", help="MUSE dictionary (src tgt per line)."),
             src_emb: Optional[Path] = typer.Option(None, help="Source vectors (word2vec text)."),
             tgt_emb: Optional[Path] = typer.Option(None, help="Target vectors (word2vec text)."),
             model: Optional[Path] = typer.Option(None, help="HF encoder directory (contextual vectors)."),
             layer: Optional[int] = typer.Option(None, help="Hidden-state index (0 = embeddings; default last)."),
             corpus_src: Optional[Path] = typer.Option(None, help="Source text for contextual vectors."),
             corpus_tgt: Optional[Path] = typer.Option(None, help="Target text for contextual vectors."),
             treebank_src: Optional[Path] = typer.Option(None, help="Source CoNLL-U: MRR by part of speech."),
             all_layers: bool = typer.Option(False, "--all-layers",
                                             help="Contextual vectors of every layer, one pass; a row set per layer."),
             csls: bool = typer.Option(False, "--csls", help="Rank by CSLS (k = 10) instead of cosine."),
             memory_mb: Optional[float] = typer.Option(None, min=1.0, help="MiB the similarity buffers may take "
                                                       "(default 512; the sources x targets matrix is computed "
                                                       "in blocks of source rows); results do not depend on it."),
             study: str = typer.Option("", help="Study name of the rows written."),
             device: Optional[str] = device_option()) -> None:
    """Word retrieval MRR / P@1 / P@5 (and MRR by POS); rows written to results.db."""
    from mbertlab.analysis.retrieval import MEMORY_MB
    from mbertlab.analysis.retrieve import RetrievalInputs, retrieval_rows
    from mbertlab.analysis.retrieve import retrieve as run_retrieval
    from mbertlab.store.results import open_results

    inputs = RetrievalInputs(dict_, src_emb, tgt_emb, model, layer, corpus_src, corpus_tgt, treebank_src,
                             all_layers, csls, memory_mb or MEMORY_MB, device or "auto")
    by_layer = run_retrieval(inputs)
    open_results(state(ctx).workdir).add(retrieval_rows(by_layer, inputs, study))
    for layer, scores in by_layer.items():
        if len(by_layer) > 1:
            typer.echo(f"layer {layer}")
        for name, value in scores.items():
            typer.echo(f"{name:<12} {value:.4f}" if name != "pairs" else f"{name:<12} {int(value)}")


@analyze_app.command("alignability")
def alignability(source: Path = typer.Option(..., help="Source text, one sentence per line, whitespace tokens."),
                 target: Path = typer.Option(..., help="Target text, one sentence per line, whitespace tokens."),
                 lexicon: Path = typer.Option(..., help="Bilingual lexicon, MUSE format (source target per line)."),
                 classes: Optional[Path] = typer.Option(None, help="CoNLL-U file: each source word's class is its "
                                                        "most frequent UPOS there (rows per class)."),
                 candidates: str = typer.Option("class", help="Rank a held-out translation among every lexicon "
                                                "translation of its class (class) or only the held-out ones "
                                                "(held-out)."),
                 dim: int = typer.Option(50, help="Skip-gram vector dimension."),
                 window: int = typer.Option(5, help="Skip-gram context window (words each side)."),
                 epochs: int = typer.Option(5, help="Skip-gram passes over each corpus."),
                 min_count: int = typer.Option(1, help="Words rarer than this get no vector."),
                 seed: int = typer.Option(0, help="Seeds the skip-gram models and the lexicon's split."),
                 max_sentences: Optional[int] = typer.Option(None, help="Only the first N lines of each corpus."),
                 as_json: bool = typer.Option(False, "--json", help="Print the table as JSON.")) -> None:
    """MRR of lexicon translations retrieved from skip-gram vectors mapped by Procrustes, per word class,
    beside frequency rank alone and chance: how much two corpora offer for aligning their words, no model."""
    from dataclasses import asdict

    from mbertlab.analysis.alignability import AlignabilitySettings
    from mbertlab.analysis.alignability import alignability as measure

    settings = AlignabilitySettings(dim, window, epochs, min_count, seed, max_sentences, candidates)
    result = measure(source, target, lexicon, classes, settings)
    if as_json:
        import json

        typer.echo(json.dumps({**asdict(result), "settings": asdict(settings)}, indent=1))
        return
    typer.echo(f"{'class':<8} {'words':>6} {'context':>8} {'frequency':>9} {'chance':>7}")
    for row in result.rows:
        typer.echo(f"{row.name:<8} {row.words:>6} {row.context:>8.3f} {row.frequency:>9.3f} {row.chance:>7.3f}")
    typer.echo(f"{result.pairs} usable lexicon pairs, {result.fit_pairs} fit the map, the rest are retrieved")


@analyze_app.command("verb-geometry")
def verb_geometry_cmd(generate: Path = typer.Option(..., help="A `mbertlab generate` artifact folder (its config "
                                                    "gives the verbs' forms and their points in the world)."),
                      encoder: List[Path] = typer.Option(..., help="A saved encoder: a pretrain or static "
                                                         "artifact's model/ folder (repeatable)."),
                      lang: str = typer.Option("src", help="The language whose verb forms are looked up."),
                      as_json: bool = typer.Option(False, "--json", help="Print the rows as JSON.")) -> None:
    """How much of the world's verb meaning (the NLI's synonyms, antonyms, unrelated verbs) each encoder's word
    vectors hold: Spearman with the world's verb cosines, synonym nearest, synonym MRR, and chance. Seconds, no
    fine-tuning: read it before a claim rests on the generated XNLI (the MLM loss does not say it)."""
    from dataclasses import asdict

    from mbertlab.analysis.verb_geometry import encoder_vectors, verb_geometry, world_verbs

    words, points = world_verbs(generate, lang)
    rows = {str(path): verb_geometry(encoder_vectors(path, words), points) for path in encoder}
    if as_json:
        import json

        typer.echo(json.dumps({path: asdict(row) for path, row in rows.items()}, indent=1))
        return
    first = next(iter(rows.values()))
    typer.echo(f"{first.verbs} verbs of {lang}; chance: synonym nearest {first.chance_nearest:.3f}, "
               f"synonym MRR {first.chance_mrr:.3f}, Spearman 0")
    typer.echo(f"{'spearman':>8} {'nearest':>8} {'MRR':>6}  encoder")
    for path, row in rows.items():
        typer.echo(f"{row.spearman:>8.3f} {row.nearest_is_synonym:>8.3f} {row.synonym_mrr:>6.3f}  {path}")
