"""The balance measure of Limisiewicz, Malkin & Stanovsky 2023 (Eq. 3): a model's MLM MRR minus that of the
language's monolingual teacher, every model scored on the same dev batches.

Planning a study imports this module (for `BalanceConfig`): torch and the models load inside the functions,
never at import.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import Field

from mbertlab.config import Config, device_field
from mbertlab.errors import ConfigError, DataError
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.runtime import record_runtime, resolve_device, resolve_precision, setup_torch
from mbertlab.store.artifacts import Artifact, final_path
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.tokenizers.shards import ShardReader


class BalanceConfig(Config):
    models: list[str] = Field(min_length=1, description="Row labels of the model inputs (after the shards).")
    teachers: list[str] = Field(min_length=1, description="Language of each teacher input (after the models).")
    groups: dict[str, list[str]] = Field(default_factory=dict, description="Group -> languages, e.g. low, high.")
    seed: int = 0
    seq_len: int = 16
    eval_batches: int = 4
    mask_prob: float = 0.15
    precision: str = "auto"
    device: str = device_field()


@dataclass
class Balance:
    """D(M, L): MRR of the model minus MRR of the language's teacher, per language and averaged per group."""

    per_language: dict[str, float]
    groups: dict[str, float]  # each named group, and "all"


def balance_score(mrr_model: dict[str, float], mrr_teacher: dict[str, float],
                  groups: dict[str, list[str]]) -> Balance:
    """Eq. 3 over the languages of `mrr_model` ("all") and over each group (e.g. low, high resource)."""
    missing = sorted(set(mrr_model) - set(mrr_teacher))
    unknown = sorted({l for langs in groups.values() for l in langs} - set(mrr_model))
    if missing or unknown:
        raise ConfigError(f"balance: no teacher MRR for {missing}; groups name languages without a model MRR "
                          f"{unknown}")
    diff = {lang: mrr_model[lang] - mrr_teacher[lang] for lang in mrr_model}
    means = {name: float(np.mean([diff[l] for l in langs])) for name, langs in groups.items() if langs}
    return Balance(diff, {**means, "all": float(np.mean(list(diff.values())))})


def _dev_batches(config: PretrainConfig, shards: ShardReader) -> dict[str, list]:
    """The dev batches behind the metrics.jsonl of a run with `config`'s seed and data keys."""
    from mbertlab.pretrain.data import dev_batches, training_data

    return dev_batches(config, shards, training_data(config, shards)[1])


def teacher_dev_mrr(config: PretrainConfig, shards_dir: Path) -> dict[str, float]:
    """MRR of each language's teacher (`config.teachers`) on the student's own dev batches of that language,
    the windows and masks behind the student's metrics.jsonl, so Eq. 3 compares like with like (a teacher's
    own metrics.jsonl scores other dev windows: they are drawn per shards, languages in turn)."""
    from mbertlab.pretrain.distill import load_teachers
    from mbertlab.pretrain.evaluate import dev_scores
    from mbertlab.pretrain.model import autocast_for

    shards, device = ShardReader(shards_dir), resolve_device(config.device)
    dev = _dev_batches(config, shards)
    teachers = load_teachers(config.teachers, shards, device)
    autocast = autocast_for(config, device)
    return {lang: dev_scores(teachers[lang], dev[lang], autocast)[1] for lang in shards.languages}


def final_mrr(path: str | Path) -> dict[str, float]:
    """Dev MLM MRR per language at the last evaluated step of a pretrain artifact (or its metrics.jsonl)."""
    path = Path(path)
    metrics = path / "metrics.jsonl" if path.is_dir() else path
    if not metrics.is_file():
        raise DataError(metrics, None, "no metrics.jsonl (expected a pretrain artifact)")
    rows = []
    for n, line in enumerate(metrics.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
            rows.append((int(row["step"]), str(row["lang"]), float(row["mrr"])))
        except (ValueError, KeyError, TypeError):
            raise DataError(metrics, n, "expected a JSON object with step, lang and mrr") from None
    if not rows:
        raise DataError(metrics, None, "no evaluation rows")
    last = max(step for step, _, _ in rows)
    return {lang: mrr for step, lang, mrr in rows if step == last}


# ---- the balance stage's work: every model and teacher on one set of dev batches ----------------

def balance_into(config: BalanceConfig, shards: Artifact, models: list[Artifact], teachers: list[Artifact],
                 out: Path, results: ResultsDB, study: str) -> None:
    """Score every model (labelled `config.models`) and every teacher (of the languages `config.teachers`) on
    the same dev batches of `shards`; write out/balance.json and mlm_mrr, mlm_loss and eq3 rows for `study`."""
    setup_torch()
    if len(models) != len(config.models) or len(teachers) != len(config.teachers):
        raise ConfigError(f"balance: {len(models)} models and {len(teachers)} teachers, expected "
                          f"{len(config.models)} models and {len(config.teachers)} teachers")
    reader = ShardReader(shards.path)
    if sorted(config.teachers) != sorted(reader.languages):
        raise ConfigError(f"balance: teachers {config.teachers} must be the shards' languages {reader.languages}")
    device = resolve_device(config.device)
    score = _scorer(config, reader, device)
    teacher = {lang: score(a, [lang])[lang] for lang, a in zip(config.teachers, teachers)}
    row = _row_maker(config, out, study)
    rows, summary = [], {"teacher": {lang: {"loss": s[0], "mrr": s[1]} for lang, s in teacher.items()}}
    for (lang, (loss, mrr)), a in zip(teacher.items(), teachers):
        rows += [row("mlm_mrr", mrr, "teacher", lang, "language", a),
                 row("mlm_loss", loss, "teacher", lang, "language", a)]
    for variant, a in zip(config.models, models):
        own = score(a, reader.languages)
        balance = balance_score({l: s[1] for l, s in own.items()}, {l: s[1] for l, s in teacher.items()},
                                config.groups)
        summary[variant] = {"per_language": {l: {"loss": s[0], "mrr": s[1], "eq3": balance.per_language[l]}
                                             for l, s in own.items()}, "groups": balance.groups}
        for lang, (loss, mrr) in own.items():
            rows += [row("mlm_mrr", mrr, variant, lang, "language", a),
                     row("mlm_loss", loss, variant, lang, "language", a),
                     row("eq3", balance.per_language[lang], variant, lang, "language", a)]
        rows += [row("eq3", value, variant, group, "group", a) for group, value in balance.groups.items()]
    (out / "balance.json").write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    record_runtime(out, device, resolve_precision(config.precision, device))
    results.add(rows, replace_artifact=str(final_path(out)))


def _scorer(config: BalanceConfig, shards: ShardReader, device):
    """score(artifact, languages) -> {language: (dev loss, dev MRR)} on `device`, on the dev batches of a
    pretraining run with the config's seed and evaluation keys."""
    from mbertlab.pretrain.distill import resolve_teacher
    from mbertlab.pretrain.evaluate import dev_scores
    from mbertlab.pretrain.model import autocast_for, load_model
    from mbertlab.runtime import attention_for

    eval_config = PretrainConfig(seed=config.seed, seq_len=config.seq_len, eval_batches=config.eval_batches,
                                 mask_prob=config.mask_prob, precision=config.precision)
    dev, autocast = _dev_batches(eval_config, shards), autocast_for(eval_config, device)

    def score(artifact: Artifact, langs: list[str]) -> dict[str, tuple[float, float]]:
        model = load_model(resolve_teacher(artifact.path), attention_for(device)).eval().to(device)
        return {lang: dev_scores(model, dev[lang], autocast) for lang in langs}

    return score


def _row_maker(config: BalanceConfig, out: Path, study: str):
    """row(metric, value, variant, language or group, level, scored artifact) -> a ResultRow of this stage."""
    group_of = {lang: g for g, langs in config.groups.items() for lang in langs}
    where = final_path(out)

    def row(metric: str, value: float, variant: str, lang: str, level: str, source: Artifact) -> ResultRow:
        return ResultRow(metric=metric, value=float(value), study=study, model=variant, task="mlm", mode=variant,
                         test_lang=lang, split="dev", seed=config.seed, config_hash=where.name,
                         artifact=str(where), extra={"variant": variant, "level": level,
                                                     "group": group_of.get(lang, lang if level == "group" else ""),
                                                     "scored": f"{source.stage}/{source.hash}"})

    return row
