"""Design `conditions` (K et al. 2020 Tables 1–3): one source language, targets that each differ from
it in one controlled way; one bilingual encoder per (source, target) pair and seed; tasks fine-tuned on
the source and evaluated in-language and zero-shot on the target, beside two controls (a randomly
initialised encoder fine-tuned the same way, the majority tag) and a label-free alignment measure
(word-retrieval MRR with contextual vectors and the gold lexicon).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import ConfigError
from mbertlab.studies.designs import DESIGNS, Design
from mbertlab.studies.jobs import Job
from mbertlab.studies.spec import StudySpec


class Condition(Config):
    name: str = Field(description="Row label in the table, e.g. 'fake script'.")
    target: str = Field(description="Target language name (a language of the study data).")


class GeneratedData(Config):
    kind: Literal["generated"] = "generated"
    preset: str = Field("quick", description="Preset of `mbertlab generate`.")
    seed: int = 0
    set: dict[str, Any] = Field(default_factory=dict, description="Overrides of the generator config.")


class LanguageFiles(Config):
    """A real language: pretraining text and task files (paths relative to `data.root`)."""

    text: list[str] = Field(default_factory=list, description="One-sentence-per-line text for pretraining.")
    fake_script_of: str | None = Field(None, description="This language is a fake-script copy of another "
                                       "(its text, task files and a gold lexicon are derived).")
    upos: dict[str, str] = Field(default_factory=dict, description="split -> CoNLL-U or XTREME UPOS TSV file.")
    ner: dict[str, str] = Field(default_factory=dict, description="split -> NER column file.")
    lexicon: str | None = Field(None, description="MUSE dictionary from the source to this language.")
    max_sentences: int | None = Field(None, description="Pretraining text budget in sentences.")


class FilesData(Config):
    kind: Literal["files"]
    root: str = Field(".", description="Folder the paths are relative to; relative to the spec file itself.")
    languages: dict[str, LanguageFiles]


class ConditionsSettings(Config):
    data: GeneratedData | FilesData = Field(default_factory=GeneratedData, description="Generated languages "
                                            "(kind: generated) or real files (kind: files).")
    source: str = Field("src", description="The language every task is fine-tuned on.")
    conditions: list[Condition] = Field(min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1,
                             description="One pretraining and fine-tuning per seed and condition.")
    tasks: list[Literal["upos", "ner", "parse", "xnli", "mldoc"]] = Field(default_factory=lambda: ["upos", "ner"])
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="Tokenizer config keys.")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining config keys.")
    finetune: dict[str, Any] = Field(default_factory=dict, description="Transfer config keys.")
    controls: list[Literal["random_init", "majority"]] = Field(default_factory=lambda: ["random_init", "majority"])
    retrieval: bool = Field(True, description="Word-retrieval MRR between source and target per encoder.")


def plan(spec: StudySpec) -> list[Job]:
    from mbertlab.studies import stages

    s: ConditionsSettings = spec.settings  # type: ignore[assignment]
    if s.data.kind == "files":
        text, data = stages.files_jobs(s.data, s.source, Path(spec.source).parent)
    else:
        text = data = stages.generate_job(s.data.preset, s.data.seed, s.data.set)
    languages = stages.data_languages(data)
    problems = [f"{spec.source}: key 'conditions': {cond.name!r}: unknown language {lang!r} "
                f"(data: {', '.join(languages)})"
                for cond in s.conditions for lang in dict.fromkeys((s.source, cond.target)) if lang not in languages]
    if problems:
        raise ConfigError("\n".join(dict.fromkeys(problems)))
    jobs: list[Job] = []
    for cond in s.conditions:
        jobs += _condition_jobs(s, cond, text, data)
    return jobs


def _condition_jobs(s: ConditionsSettings, cond: Condition, text: Job, data: Job) -> list[Job]:
    from mbertlab.studies import stages

    pair = [s.source, cond.target]
    tags = (("condition", cond.name),)
    shards = stages.shards_job(text, pair, s.tokenizer, tags)
    jobs: list[Job] = []
    if "majority" in s.controls:
        jobs += [stages.transfer_job(None, data, task, s.source, pair, s.finetune, 0, "majority",
                                     tags + (("control", "majority"),)) for task in s.tasks]
    for seed in s.seeds:
        encoder = stages.pretrain_job(shards, s.pretrain, seed, tags + (("seed", str(seed)),))
        variants = [("pretrained", "finetune")] + ([("random_init", "random_init")] if "random_init" in s.controls else [])
        for control, mode in variants:
            vtags = tags + (("seed", str(seed)), ("control", control))
            jobs += [stages.transfer_job(encoder, data, task, s.source, pair, s.finetune, seed, mode, vtags)
                     for task in s.tasks]
            if s.retrieval:
                jobs.append(stages.retrieval_job(encoder, data, text, s.source, cond.target, seed,
                                                 control == "random_init", vtags))
    return jobs


def report(spec: StudySpec, store, results):
    from mbertlab.studies.designs.conditions_report import conditions_report

    return conditions_report(spec, store, results)


DESIGNS.register("conditions")(Design(ConditionsSettings, plan, report))
