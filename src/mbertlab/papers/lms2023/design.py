"""Design `lms2023` (Limisiewicz, Malkin & Stanovsky 2023): per language set and seed, three multilingual
encoders on one shared vocabulary — HL (hard labels, every language's full budget), HL balanced (hard
labels, every language cut to the smallest) and the distilled student (soft labels from monolingual
teachers, balanced data) — scored by MLM MRR against the teachers (their Eq. 3) and by POS/NER probes
in-language and zero-shot from the set's source language. With `epochs`, every model trains for as many passes
over its own training sentences (the paper's 10 epochs), so HL takes more steps than HL balanced.
"""
from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from mbertlab.config import Config, parse_config
from mbertlab.errors import ConfigError
from mbertlab.studies.data import GeneratedData
from mbertlab.studies.jobs import Job
from mbertlab.studies.spec import StudySpec

VARIANTS = ("HL", "HL balanced", "distilled")


class SetLanguage(Config):
    name: str = Field(description="A language of the generated data.")
    share: int = Field(gt=0, description="Relative corpus size (their Table 1: 100/100/50/30/20/10/10).")
    group: Literal["high", "low"] = Field(description="Resource group for Eq. 3 and the probe columns.")
    paper: str | None = Field(None, description="The paper's language this one stands for (their Table 1, e.g. "
                              "'de'): the report puts that language's published numbers beside ours.")


class LanguageSet(Config):
    name: str = Field(description="Table label, e.g. 'shared script'.")
    source: str = Field(description="Zero-shot probes train on this language.")
    languages: list[SetLanguage] = Field(min_length=2)
    paper: str | None = Field(None, description="The paper's label of this set in its tables ('Shared', "
                              "'Diverse'): the report puts its published numbers beside ours.")

    @model_validator(mode="after")
    def _source_in_set(self):
        names = [l.name for l in self.languages]
        if self.source not in names:
            raise ValueError(f"source {self.source!r} is not one of the set's languages {names}")
        if len(set(names)) != len(names):
            raise ValueError(f"languages repeat: {names}")
        return self

    def budgets(self, unit: int) -> dict[str, int]:
        return {l.name: l.share * unit for l in self.languages}

    def groups(self) -> dict[str, list[str]]:
        return {g: [l.name for l in self.languages if l.group == g] for g in ("low", "high")}


class Lms2023Settings(Config):
    data: GeneratedData = Field(default_factory=GeneratedData, description="Generated languages; `set.languages` "
                                "lists every language of every set (fake-script variants for a diverse set).")
    unit: int = Field(100, gt=0, description="Training sentences per share point (share 100 -> 100·unit).")
    sets: list[LanguageSet] = Field(min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    epochs: int | None = Field(None, ge=1, description="Train every model (teachers included) for this many passes "
                               "over its own training sentences: steps = ceil(epochs × sentences / batch_size), one "
                               "sentence a sequence. Null: every model takes pretrain.steps.")
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="One tokenizer per set, on its full text.")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining keys of every model.")
    teacher: dict[str, Any] = Field(default_factory=dict, description="Overrides of `pretrain` for the teachers.")
    student: dict[str, Any] = Field(default_factory=lambda: {"temperature": 1.0, "hard_weight": 0.0},
                                    description="Overrides of `pretrain` for the student (temperature, hard_weight).")
    tasks: list[Literal["upos", "ner"]] = Field(default_factory=lambda: ["upos", "ner"])
    probe: dict[str, Any] = Field(default_factory=dict, description="Transfer keys of the probes (mode probe).")
    in_language: Literal["all", "low", "none"] = Field("all", description="Languages probed in-language besides "
                                                       "the source (whose in-language score the zero-shot job has).")


def plan(spec: StudySpec) -> list[Job]:
    from mbertlab.studies import stages

    s: Lms2023Settings = spec.settings  # type: ignore[assignment]
    data = stages.generate_job(s.data.preset, s.data.seed, s.data.set)
    _check(spec, s, data)
    jobs: list[Job] = []
    for lset in s.sets:
        jobs += _set_jobs(s, lset, data)
    return jobs


def _check(spec: StudySpec, s: Lms2023Settings, data: Job) -> None:
    from mbertlab.studies import stages

    languages = stages.data_languages(data)
    problems = [f"{spec.source}: key 'sets': {lset.name!r}: unknown language {l.name!r} (data: {', '.join(languages)})"
                for lset in s.sets for l in lset.languages if l.name not in languages]
    need = max(l.share for lset in s.sets for l in lset.languages) * s.unit
    if data.config.sentences.train < need:
        problems.append(f"{spec.source}: key 'data.set.sentences.train': {data.config.sentences.train} sentences, "
                        f"the largest share × unit needs {need}")
    if problems:
        raise ConfigError("\n".join(problems))


def _set_jobs(s: Lms2023Settings, lset: LanguageSet, data: Job) -> list[Job]:
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.studies import stages
    from mbertlab.tokenizers.shards import ShardsConfig
    from mbertlab.tokenizers.train import TokenizerConfig

    names = [l.name for l in lset.languages]
    tags = (("set", lset.name),)
    budgets = lset.budgets(s.unit)
    full = stages.budget_job(data, budgets, False, tags)
    balanced = stages.budget_job(data, budgets, True, tags)
    tok = Job("tokenizer", parse_config(TokenizerConfig, {**s.tokenizer, "languages": names}, "study key 'tokenizer'"),
              (full,), label=f"tokenizer {lset.name}", tags=tags)
    shards = {"full": Job("shards", ShardsConfig(languages=names), (tok, full), label=f"shards {lset.name}", tags=tags),
              "balanced": Job("shards", ShardsConfig(languages=names), (tok, balanced),
                              label=f"shards {lset.name} balanced", tags=tags)}
    mono = {l: Job("shards", ShardsConfig(languages=[l]), (tok, full), label=f"shards {l}", tags=tags) for l in names}
    n_full, n_balanced = sum(budgets.values()), len(budgets) * min(budgets.values())
    jobs: list[Job] = []
    for seed in s.seeds:
        stags = tags + (("seed", str(seed)),)
        teachers = {l: stages.pretrain_job(mono[l], _for(s, {**s.pretrain, **s.teacher}, budgets[l]), seed,
                                           stags + (("variant", "teacher"), ("lang", l))) for l in names}
        models = {"HL": stages.pretrain_job(shards["full"], _for(s, s.pretrain, n_full), seed,
                                            stags + (("variant", "HL"),)),
                  "HL balanced": stages.pretrain_job(shards["balanced"], _for(s, s.pretrain, n_balanced), seed,
                                                     stags + (("variant", "HL balanced"),)),
                  "distilled": stages.student_job(shards["balanced"], teachers,
                                                  _for(s, {**s.pretrain, **s.student}, n_balanced), seed,
                                                  stags + (("variant", "distilled"),))}
        scoring = parse_config(PretrainConfig, {**s.pretrain, "seed": seed}, "study key 'pretrain'")
        jobs.append(stages.balance_job(shards["full"], models, teachers, lset.groups(), scoring, stags))
        for variant, encoder in models.items():
            jobs += _probe_jobs(s, lset, data, encoder, seed, stags + (("variant", variant),))
    return jobs


def _for(s: Lms2023Settings, settings: dict[str, Any], sentences: int) -> dict[str, Any]:
    """Pretraining settings of a model trained on `sentences` sentences: `epochs` passes over them, if set."""
    from mbertlab.pretrain.config import PretrainConfig

    if s.epochs is None:
        return settings
    batch = parse_config(PretrainConfig, {**settings, "seed": 0}, "study key 'pretrain'").batch_size
    return {**settings, "steps": max(1, math.ceil(s.epochs * sentences / batch))}


def _probe_jobs(s: Lms2023Settings, lset: LanguageSet, data: Job, encoder: Job, seed: int, tags) -> list[Job]:
    from mbertlab.studies import stages

    names = [l.name for l in lset.languages]
    own = [l.name for l in lset.languages if l.name != lset.source and
           (s.in_language == "all" or (s.in_language == "low" and l.group == "low"))]
    variant = dict(tags)["variant"]
    jobs = []
    for task in s.tasks:
        for train, langs, kind in [(lset.source, names, "zero-shot")] + [(l, [l], "in-language") for l in own]:
            label = f"{task} probe {variant} {lset.name} {kind} from {train} seed {seed}"
            jobs.append(stages.transfer_job(encoder, data, task, train, langs, s.probe, seed, "probe",
                                            tags + (("probe", kind),), label=label))
    return jobs

