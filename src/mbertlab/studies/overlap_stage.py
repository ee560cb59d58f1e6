"""Stage kinds for Wu & Dredze 2019 §5.4: subword overlap between the source and each target under an
encoder's own tokenizer (`overlap`), and its Pearson correlation with zero-shot scores (`correlate`).

`overlap`: the first `sentences` lines of each language's text, tokenized by the encoder's tokenizer
(special and unknown pieces left out, so [UNK] never counts as shared); p_type and p_token per target
(corpus/overlap.py). Rows: task `overlap`, metric p_type / p_token, train_lang = source, test_lang = target.

`correlate`: reads the overlap artifact and transfer artifacts (their `scores.json`, the point the run
selected) and computes, per task and pooled over tasks (scores z-scored within each task), Pearson's r
between overlap and zero-shot test score over the targets. Beside each r, the 95th percentile of r under
random re-pairings of the same points (a one-sided permutation test at 5%), so "r is positive beyond
chance" is a comparison of two rows the scorecard can make.
"""
from __future__ import annotations

import json
from itertools import islice
from pathlib import Path

import numpy as np
from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import ConfigError, DataError
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow
from mbertlab.studies.jobs import Job, RunContext

OVERLAPS = ("p_type", "p_token")
POOLED = "pooled"


class OverlapConfig(Config):
    source: str
    targets: list[str] = Field(min_length=1)
    sentences: int = Field(2000, ge=1, description="Lines of each language's text tokenized.")
    split: str = Field("train", description="Which text split is read.")
    text_files: str = Field("{lang}/text/{split}.txt", description="Where a language's text is in the text artifact.")


class CorrelateConfig(Config):
    metrics: dict[str, str] = Field(description="task -> the score metric correlated (e.g. upos: accuracy).")
    permutations: int = Field(2000, ge=100, description="Random re-pairings for the null distribution of r.")
    seed: int = 0


# ---- jobs -------------------------------------------------------------------------------------

def overlap_job(encoder: Job, text: Job, source: str, targets: list[str], sentences: int, text_files: str,
                tags=()) -> Job:
    config = OverlapConfig(source=source, targets=targets, sentences=sentences, text_files=text_files)
    return Job("overlap", config, (encoder, text), label=f"overlap {source} -> {'+'.join(targets)}", tags=tuple(tags))


def correlate_job(overlap: Job, transfers: list[Job], seed: int, tags=()) -> Job:
    """Transfers are fine-tuned on the overlap's source and score its targets; one per task."""
    from mbertlab.transfer.config import MAIN_METRIC

    tasks = [t.config.task for t in transfers]
    if len(set(tasks)) != len(tasks):
        raise ConfigError(f"correlate: one transfer job per task, got tasks {tasks}")
    config = CorrelateConfig(metrics={t: MAIN_METRIC[t] for t in tasks}, seed=seed)
    return Job("correlate", config, (overlap, *transfers), label=f"correlate overlap seed {seed}", tags=tuple(tags))


# ---- overlap ----------------------------------------------------------------------------------

def language_pieces(tokenizer, path: Path, sentences: int) -> list[str]:
    """Subword pieces of the file's first lines, without special or unknown pieces."""
    from mbertlab.formats.text import read_lines

    if not path.is_file():
        raise DataError(path, None, "no such text file (needed for the overlap statistics)")
    skip = set(tokenizer.all_special_tokens)
    pieces: list[str] = []
    for line in islice(read_lines(path), sentences):
        pieces += [p for p in tokenizer.tokenize(line) if p not in skip]
    return pieces


def overlap_into(config: OverlapConfig, encoder: Artifact, text_root: Path, out: Path, ctx: RunContext) -> dict:
    from transformers import AutoTokenizer

    from mbertlab.corpus.overlap import overlap

    tokenizer = AutoTokenizer.from_pretrained(str(encoder.path / "model"))
    file = lambda lang: text_root / config.text_files.format(lang=lang, split=config.split)  # noqa: E731
    source = set(language_pieces(tokenizer, file(config.source), config.sentences))
    stats = {t: overlap(source, language_pieces(tokenizer, file(t), config.sentences)) for t in config.targets}
    (out / "overlap.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    artifact = str(final_path(out))
    rows = [ResultRow(metric=kind, value=values[kind], study=ctx.study, model=f"{encoder.stage}/{encoder.hash}",
                      task="overlap", mode="overlap", train_lang=config.source, test_lang=target, split=config.split,
                      config_hash=final_path(out).name, artifact=artifact)
            for target, values in stats.items() for kind in OVERLAPS]
    ctx.results.add(rows, replace_artifact=artifact)
    return stats


def _build_overlap(config: OverlapConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    encoder, text = inputs
    return ctx.store.build("overlap", config, lambda out: overlap_into(config, encoder, text.path, Path(out), ctx),
                           inputs)


# ---- correlate --------------------------------------------------------------------------------

def selected_scores(transfer: Path) -> tuple[dict, dict[str, dict[str, float]]]:
    """A transfer artifact's config and its selected point's scores by 'lang.split'."""
    config = json.loads((transfer / "config.json").read_text(encoding="utf-8"))
    scores = json.loads((transfer / "scores.json").read_text(encoding="utf-8"))
    return config, scores["selected"]["scores"]


def task_points(config: CorrelateConfig, overlap: dict, transfers: list[Path]) -> dict[str, tuple[list, list]]:
    """Per task and overlap kind: [(overlap, score)] over the targets the task was tested on, as
    {(task, kind): (xs, ys)}."""
    points = {}
    for path in transfers:
        tconfig, scores = selected_scores(path)
        task = tconfig["task"]
        metric = config.metrics[task]
        tested = {f["lang"] for f in tconfig["evaluate"] if f["split"] == "test"}
        for kind in OVERLAPS:
            xs, ys = [], []
            for target, values in overlap.items():
                key = f"{target}.test"
                if target not in tested:
                    continue  # real data: a target without this task's test set is not a point of its task
                if key not in scores:
                    raise DataError(path, None, f"no test score for target {target!r} (needed for the correlation)")
                xs.append(values[kind])
                ys.append(scores[key][metric])
            points[(task, kind)] = (xs, ys)
    return points


def pearson_r(xs: np.ndarray, ys: np.ndarray) -> float:
    if np.ptp(xs) < 1e-12 or np.ptp(ys) < 1e-12:  # a constant side (e.g. every target at chance): r undefined
        return float("nan")
    return float(np.corrcoef(xs, ys)[0, 1])


def null_quantile(groups: list[tuple[np.ndarray, np.ndarray]], permutations: int, seed: int) -> float:
    """95th percentile of pooled r when x is shuffled within each group (the pairing is all that changes)."""
    rng = np.random.default_rng(seed)
    ys = np.concatenate([y for _, y in groups])
    rs = []
    for _ in range(permutations):
        xs = np.concatenate([rng.permutation(x) for x, _ in groups])
        rs.append(pearson_r(xs, ys))
    rs = np.asarray(rs)
    rs = rs[~np.isnan(rs)]
    return float(np.quantile(rs, 0.95)) if len(rs) else float("nan")


def zscore(values: list[float]) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    return (arr - arr.mean()) / arr.std() if arr.std() > 0 else arr - arr.mean()


def correlations(config: CorrelateConfig, points: dict) -> list[dict]:
    """One record per (task or pooled, overlap kind): r, its p-value, n and the permutation null's 95th pct."""
    from scipy import stats

    out = []
    tasks = sorted({task for task, _ in points})
    for kind in OVERLAPS:
        groups = {task: (np.asarray(points[(task, kind)][0], float), np.asarray(points[(task, kind)][1], float))
                  for task in tasks}
        pooled = [(x, zscore(list(y))) for x, y in groups.values()]
        for name, members in [(t, [groups[t]]) for t in tasks] + [(POOLED, pooled)]:
            xs = np.concatenate([x for x, _ in members])
            ys = np.concatenate([y for _, y in members])
            r = pearson_r(xs, ys)
            if len(xs) < 3 or np.isnan(r):
                continue  # no row: a finding on it reads "not run" rather than a made-up value
            p = float(stats.pearsonr(xs, ys).pvalue)
            out.append({"task": name, "overlap": kind, "r": r, "p_value": p, "n": int(len(xs)),
                        "null95": null_quantile(members, config.permutations, config.seed)})
    return out


def correlate_into(config: CorrelateConfig, inputs: list[Artifact], out: Path, ctx: RunContext) -> list[dict]:
    overlap_artifact, transfers = inputs[0], inputs[1:]
    overlap = json.loads((overlap_artifact.path / "overlap.json").read_text(encoding="utf-8"))
    records = correlations(config, task_points(config, overlap, [t.path for t in transfers]))
    (out / "correlations.json").write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    artifact = str(final_path(out))
    rows = []
    for rec in records:
        extra = {"overlap": rec["overlap"], "p_value": rec["p_value"], "n": rec["n"],
                 "score": config.metrics.get(rec["task"], "z-scored main metric")}
        for metric, value in (("pearson_r", rec["r"]), ("pearson_r_null95", rec["null95"])):
            rows.append(ResultRow(metric=metric, value=value, study=ctx.study, task=rec["task"], mode="correlate",
                                  seed=config.seed, config_hash=final_path(out).name, artifact=artifact, extra=extra))
    ctx.results.add(rows, replace_artifact=artifact)
    return records


def _build_correlate(config: CorrelateConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("correlate", config, lambda out: correlate_into(config, inputs, Path(out), ctx), inputs)

