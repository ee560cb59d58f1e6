"""Design `lms2023` (Limisiewicz, Malkin & Stanovsky 2023): per language set and seed, three multilingual
encoders on one shared vocabulary — HL (hard labels, every language's full budget), HL balanced (hard
labels, every language cut to the smallest) and the distilled student (soft labels from monolingual
teachers, balanced data) — scored by MLM MRR against the teachers (their Eq. 3) and by POS/NER probes
in-language and zero-shot from the set's source language, or from every language (`probe_from: all`, the
paper's). With `epochs`, every model trains for as many passes over its own training data (the paper's 10
epochs: over its sentences, or with `epoch_unit: window` over its text's windows), so HL takes more steps than
HL balanced.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Literal

from pydantic import Field, model_validator

from mbertlab.config import Config, parse_config
from mbertlab.errors import ConfigError
from mbertlab.studies.data import GeneratedData
from mbertlab.studies.jobs import Job
from mbertlab.transfer.task_table import tasks_among
from mbertlab.studies.spec import StudySpec

ProbeTask = tasks_among("upos", "ner")  # the tasks this design runs, rows of the task table

VARIANTS = ("HL", "HL balanced", "distilled")
RANDOM_INIT = "random init"  # the variant tag of the probes' random-init control


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


class MonolingualSweep(Config):
    """Appendix C (Figure 3): one language's hard-label models at several corpus sizes, the largest ones also
    teachers of students distilled on the same or smaller sizes (prefixes of the teacher's data)."""
    language: str = Field(description="The language swept (the paper's German: a100).")
    shares: list[int] = Field(min_length=2, description="Corpus sizes in share points (the paper's 10, 20, 30, "
                              "50, 100 million characters).")
    teachers: list[int] = Field(min_length=1, description="The sizes whose models teach (the paper's 10, 50, 100).")
    lr_factor: float = Field(5.0, gt=0, description="The students' learning rate over the models' (the paper's "
                             "footnote 8: 5 times higher).")

    @model_validator(mode="after")
    def _teachers_among_shares(self):
        if sorted(set(self.shares)) != self.shares:
            raise ValueError(f"shares must increase without repeats, got {self.shares}")
        if not set(self.teachers) <= set(self.shares):
            raise ValueError(f"teachers {self.teachers} must be among the shares {self.shares}")
        return self

    def students(self) -> list[tuple[int, int]]:
        """(size, teacher size) of every student: each teacher distils on its own size and every smaller one."""
        return [(size, t) for t in self.teachers for size in self.shares if size <= t]


def sweep_label(size: int, teacher: int | None = None) -> str:
    """A model's label in the sweep's rows: 'HL 30', or 'distilled 30 from 100'."""
    return f"HL {size}" if teacher is None else f"distilled {size} from {teacher}"


class Lms2023Settings(Config):
    data: GeneratedData = Field(default_factory=GeneratedData, description="Generated languages; `set.languages` "
                                "lists every language of every set (fake-script variants for a diverse set).")
    unit: int = Field(100, gt=0, description="Training sentences per share point (share 100 -> 100·unit).")
    sets: list[LanguageSet] = Field(min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    epochs: int | None = Field(None, ge=1, description="Train every model (teachers included) for this many passes "
                               "over its own training data (`epoch_unit`). Null: every model takes pretrain.steps.")
    epoch_unit: Literal["sentence", "window"] = Field("sentence", description="sentence: steps = ceil(epochs × "
                                                      "sentences / batch_size), one sentence a sequence; window: "
                                                      "passes over the text itself (the engine's `epochs`, "
                                                      "resolved from the shards' tokens when the run opens; the "
                                                      "sentence count stays as the plan's estimate).")
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="One tokenizer per set, on its full text.")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining keys of every model.")
    teacher: dict[str, Any] = Field(default_factory=dict, description="Overrides of `pretrain` for the teachers.")
    hl: dict[str, Any] = Field(default_factory=dict, description="Overrides of `pretrain` for HL (every "
                               "language's full corpus), e.g. its floor of steps.")
    student: dict[str, Any] = Field(default_factory=lambda: {"temperature": 1.0, "hard_weight": 0.0},
                                    description="Overrides of `pretrain` for the student (temperature, hard_weight).")
    tasks: list[ProbeTask] = Field(default_factory=lambda: ["upos", "ner"])
    probe: dict[str, Any] = Field(default_factory=dict, description="Transfer keys of the probes (mode probe).")
    probe_runs: int = Field(1, ge=1, description="Probes per model and language, each from its own initialisation "
                            "(the paper: 5 on one pretraining). Run r > 0 seeds its probe with seed + 1000·r.")
    random_init_probes: bool = Field(True, description="In-language probes on an encoder of the models' shape with "
                                     "fresh weights, per language, task and seed: the control the probe claims' "
                                     "`learned` check holds every in-language probe above.")
    appendix_c: MonolingualSweep | None = Field(None, description="Monolingual distillation by corpus size "
                                                "(Appendix C), in the first set that has the language.")
    in_language: Literal["all", "low", "none"] = Field("all", description="Languages probed in-language besides "
                                                       "the source (whose in-language score the zero-shot job has).")
    probe_from: Literal["source", "all"] = Field("source", description="source: zero-shot probes train on the set's "
                                                 "source only; all: a probe trains on every language of the set and "
                                                 "is tested on every one (the paper's Table 3: zero-shot averages "
                                                 "every source-target pair; in-language is each probe's own "
                                                 "language, so in_language must stay 'all').")

    @model_validator(mode="after")
    def _all_sources_probe_every_language(self):
        if self.probe_from == "all" and self.in_language != "all":
            raise ValueError(f"probe_from 'all' probes every language in-language; in_language "
                             f"{self.in_language!r} would be ignored (leave it out or set it to 'all')")
        return self


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
    if s.appendix_c is not None:
        need = max(need, max(s.appendix_c.shares) * s.unit)
        if not any(l.name == s.appendix_c.language for lset in s.sets for l in lset.languages):
            problems.append(f"{spec.source}: key 'appendix_c.language': {s.appendix_c.language!r} is in no set")
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
    sweep = s.appendix_c if s.appendix_c is not None and _first_set_of(s, s.appendix_c.language) is lset else None
    sweep_shards = _sweep_shards(s, lset, data, tok, mono) if sweep is not None else {}
    jobs: list[Job] = []
    for seed in s.seeds:
        stags = tags + (("seed", str(seed)),)
        teachers = {l: stages.pretrain_job(mono[l], _for(s, {**s.pretrain, **s.teacher}, budgets[l]), seed,
                                           stags + (("variant", "teacher"), ("lang", l))) for l in names}
        models = {"HL": stages.pretrain_job(shards["full"], _for(s, {**s.pretrain, **s.hl}, n_full), seed,
                                            stags + (("variant", "HL"),)),
                  "HL balanced": stages.pretrain_job(shards["balanced"], _for(s, s.pretrain, n_balanced), seed,
                                                     stags + (("variant", "HL balanced"),)),
                  "distilled": stages.student_job(shards["balanced"], teachers,
                                                  _for(s, {**s.pretrain, **s.student}, n_balanced), seed,
                                                  stags + (("variant", "distilled"),))}
        scoring = parse_config(PretrainConfig, {**_unfloored(s.pretrain), "seed": seed}, "study key 'pretrain'")
        jobs.append(stages.balance_job(shards["full"], models, teachers, lset.groups(), scoring, stags))
        for variant, encoder in models.items():
            jobs += _probe_jobs(s, lset, data, encoder, seed, stags + (("variant", variant),))
        if s.random_init_probes:  # the models' shape and vocabulary, HL's weights thrown away
            jobs += _random_init_probe_jobs(s, lset, data, models["HL"], seed, stags + (("variant", RANDOM_INIT),))
        if sweep is not None:
            jobs.append(_sweep_job(s, sweep, sweep_shards, teachers[sweep.language], scoring, seed))
    return jobs + _majority_jobs(s, lset, data, tags)


def _majority_jobs(s: Lms2023Settings, lset: LanguageSet, data: Job, tags) -> list[Job]:
    """Each task's most frequent training label per language of the set: the floor its probes must clear (the
    claims' `learned` check; a probe that predicts one label everywhere sits on it)."""
    from mbertlab.studies import stages

    return [stages.transfer_job(None, data, task, l.name, [l.name], s.probe, 0, "majority",
                                tags + (("variant", "majority"),), label=f"{task} majority {lset.name} {l.name}")
            for task in s.tasks for l in lset.languages]


def _first_set_of(s: Lms2023Settings, language: str) -> LanguageSet:
    return next(lset for lset in s.sets if language in {l.name for l in lset.languages})


def _sweep_shards(s: Lms2023Settings, lset: LanguageSet, data: Job, tok: Job, mono: dict[str, Job]) -> dict[int, Job]:
    """Shards of each size of the swept language, with the set's tokenizer; its own share is the teacher's."""
    from mbertlab.studies import stages
    from mbertlab.tokenizers.shards import ShardsConfig

    sweep, tags = s.appendix_c, (("appendix", "C"),)
    share = next(l.share for l in lset.languages if l.name == sweep.language)
    shards = {}
    for size in sweep.shares:
        if size == share:
            shards[size] = mono[sweep.language]
            continue
        text = stages.budget_job(data, {sweep.language: size * s.unit}, False, tags,
                                 label=f"text {sweep.language} {size}")
        shards[size] = Job("shards", ShardsConfig(languages=[sweep.language]), (tok, text),
                           label=f"shards {sweep.language} {size}", tags=tags)
    return shards


def _sweep_job(s: Lms2023Settings, sweep: MonolingualSweep, shards: dict[int, Job], own_teacher: Job,
               scoring, seed: int) -> Job:
    """Appendix C for one seed: hard-label models at every size (at the language's own share, the set's
    teacher), students of each teacher size, all scored on the language's dev batches by one balance stage.
    Every model here is monolingual: the students take the teachers' settings (their floor of steps) under
    the student's."""
    from mbertlab.studies import stages

    tags = (("appendix", "C"), ("seed", str(seed)))
    lang, own = sweep.language, own_teacher.inputs[0]
    monolingual = {**s.pretrain, **s.teacher}

    def named(job: Job, *model: int) -> Job:  # the sweep's models are told apart by size and teacher
        return replace(job, label=f"Appendix C {sweep_label(*model)} {lang} seed {seed}")

    hl = {size: own_teacher if job == own else
          named(stages.pretrain_job(job, _for(s, monolingual, size * s.unit), seed, tags), size)
          for size, job in shards.items()}
    student = {**monolingual, **s.student, "lr": scoring.lr * sweep.lr_factor}
    models = {sweep_label(size): job for size, job in hl.items()}
    for size, teacher in sweep.students():
        models[sweep_label(size, teacher)] = named(stages.student_job(
            shards[size], {lang: hl[teacher]}, _for(s, student, size * s.unit), seed, tags), size, teacher)
    return stages.balance_job(own, models, {lang: own_teacher}, {}, scoring, tags)


def _for(s: Lms2023Settings, settings: dict[str, Any], sentences: int) -> dict[str, Any]:
    """Pretraining settings of a model trained on `sentences` sentences: `epochs` passes over them, if set, and
    at least `min_steps` (the engine floors the steps it resolves from windows; sentences are counted here)."""
    from mbertlab.pretrain.config import PretrainConfig

    if s.epochs is None:
        return settings
    floor, rest = settings.get("min_steps") or 1, _unfloored(settings)
    batch = parse_config(PretrainConfig, {**rest, "seed": 0}, "study key 'pretrain'").batch_size
    steps = max(floor, math.ceil(s.epochs * sentences / batch))
    if s.epoch_unit == "window":
        return {**settings, "steps": steps, "epochs": s.epochs}
    return {**rest, "steps": steps}


def _random_init_probe_jobs(s: Lms2023Settings, lset: LanguageSet, data: Job, shape: Job, seed: int,
                            tags) -> list[Job]:
    from mbertlab.studies import stages

    return [stages.transfer_job(shape, data, task, l.name, [l.name], s.probe, seed, "probe_random_init", tags,
                                label=f"{task} probe {RANDOM_INIT} {lset.name} {l.name} seed {seed}")
            for task in s.tasks for l in lset.languages]


def _unfloored(settings: dict[str, Any]) -> dict[str, Any]:
    """Pretraining keys without `min_steps`, which floors only the steps of `epochs` (scoring keys, or steps
    counted here)."""
    return {k: v for k, v in settings.items() if k != "min_steps"}


PROBE_SEED_STEP = 1000  # probe run r of model seed k seeds its probe with k + 1000·r


def _probe_jobs(s: Lms2023Settings, lset: LanguageSet, data: Job, encoder: Job, seed: int, tags) -> list[Job]:
    from mbertlab.studies import stages

    names = [l.name for l in lset.languages]
    if s.probe_from == "all":
        probes = [(l, names) for l in names]
    else:
        own = [l.name for l in lset.languages if l.name != lset.source and
               (s.in_language == "all" or (s.in_language == "low" and l.group == "low"))]
        probes = [(lset.source, names)] + [(l, [l]) for l in own]
    variant = dict(tags)["variant"]
    jobs = []
    for task in s.tasks:
        for train, langs in probes:
            for run in range(s.probe_runs):  # run 0 keeps the model's seed (and the hashes of one-run studies)
                rtags = tags + ((("probe_run", str(run)),) if s.probe_runs > 1 else ())
                label = f"{task} probe {variant} {lset.name} from {train} seed {seed}" + (f" run {run}" * bool(run))
                jobs.append(stages.transfer_job(encoder, data, task, train, langs, s.probe,
                                                seed + PROBE_SEED_STEP * run, "probe", rtags, label=label))
    return jobs

