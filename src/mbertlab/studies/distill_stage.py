"""Stage kinds of the distillation study (Limisiewicz, Malkin & Stanovsky 2023); its budgets are the shared
`budget` stage (`corpus/budget.py`):

- `student`: a distilled pretraining run whose teachers are its input artifacts. The config names them
  by input position (`inputs[i]`), so its hash depends on the teachers' hashes, never on the workdir;
  the paths are filled in at build time;
- `balance`: MLM MRR of every model and every teacher on one fixed set of dev batches per language,
  and their Eq. 3 balance D(M, L) per language and per group (low, high, all), as results rows.
"""
from __future__ import annotations

import re
from pathlib import Path

from mbertlab.errors import ConfigError
from mbertlab.pretrain.balance import BalanceConfig, balance_into
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import Job, RunContext

TEACHER_REF = re.compile(r"^inputs\[(\d+)\]$")


# ---- jobs -------------------------------------------------------------------------------------

def student_job(shards: Job, teachers: dict[str, Job], settings: dict, seed: int, tags) -> Job:
    """A distilled student on `shards`; teacher i of `teachers` (by language) is input i + 1."""
    refs = {lang: f"inputs[{i + 1}]" for i, lang in enumerate(teachers)}
    config = PretrainConfig.model_validate({**settings, "seed": seed, "objective": "distill", "teachers": refs})
    return Job("student", config, (shards, *teachers.values()), label=f"student {dict(tags).get('set', '')} "
               f"seed {seed}", tags=tags)


def balance_job(shards: Job, models: dict[str, Job], teachers: dict[str, Job], groups: dict[str, list[str]],
                pretrain: PretrainConfig, tags) -> Job:
    """Eq. 3 of each model against the teachers, all scored on `shards`' dev batches (pretrain's eval keys)."""
    config = BalanceConfig(models=list(models), teachers=list(teachers), groups=groups, seed=pretrain.seed,
                           seq_len=pretrain.seq_len, eval_batches=pretrain.eval_batches,
                           mask_prob=pretrain.mask_prob, precision=pretrain.precision)
    return Job("balance", config, (shards, *models.values(), *teachers.values()),
               label=f"balance {dict(tags).get('set', '')} seed {pretrain.seed}", tags=tags)


# ---- builders ---------------------------------------------------------------------------------

def resolved_teachers(config: PretrainConfig, inputs: list[Artifact]) -> PretrainConfig:
    """The config with each `inputs[i]` teacher replaced by that input artifact's path."""
    teachers = {}
    for lang, ref in config.teachers.items():
        match = TEACHER_REF.match(ref)
        if not match or not 1 <= int(match[1]) < len(inputs):
            raise ConfigError(f"student: teachers.{lang}: expected 'inputs[i]' with 1 <= i < {len(inputs)}, "
                              f"got {ref!r}")
        teachers[lang] = str(inputs[int(match[1])].path)
    return config.model_copy(update={"teachers": teachers})


def _build_student(config: PretrainConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.pretrain.loop import pretrain_into

    run = resolved_teachers(config, inputs)
    return ctx.store.build("pretrain", config, lambda out: pretrain_into(run, inputs[0].path, Path(out)),
                           inputs, resumable=True)


def _build_balance(config: BalanceConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    """Inputs: the shards, then the models, then the teachers (as `balance_job` lists them)."""
    models = 1 + len(config.models)
    return ctx.store.build("balance", config, lambda out: balance_into(
        config, inputs[0], inputs[1:models], inputs[models:], Path(out), ctx.results, ctx.study), inputs)
