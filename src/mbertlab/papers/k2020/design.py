"""Design `k2020` (K et al. 2020): one source language, targets that each differ from it in one
controlled way; one bilingual encoder per (source, target) pair and seed; tasks fine-tuned on the source
and evaluated in-language and zero-shot on the target, beside two controls (a randomly initialised
encoder fine-tuned the same way, the majority tag) and a label-free alignment measure (word-retrieval
MRR with contextual vectors and the gold lexicon).

A condition may name its own source (K et al.'s enfake-es beside en-es) and change how its encoder is
built (K et al. Tables 4–11): its own `pretrain` / `tokenizer` keys over the spec's (model shape, NSP,
language markers, char / word-piece / word tokens), a `permute` share p of the target's pretraining word
pieces, and XNLI test pairs whose premise and hypothesis are in different languages. `tables` group
conditions into the paper's factor tables.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from mbertlab.config import Config, deep_merge
from mbertlab.errors import ConfigError
from mbertlab.studies.data import GeneratedData, StudyData
from mbertlab.studies.jobs import Job
from mbertlab.transfer.task_table import TaskName
from mbertlab.studies.spec import StudySpec


Control = Literal["random_init", "majority"]
Task = TaskName  # every task of the task table
TrainedMode = Literal["finetune", "feature", "bilstm_crf"]


class Condition(Config):
    name: str = Field(description="Row label in the table, e.g. 'fake script'.")
    target: str = Field(description="Target language name (a language of the study data).")
    test_on: str | None = Field(None, description="The language the tasks are tested on where the target's "
                                "pretraining text stands in for it (K et al. Table 3: a corpus of words drawn "
                                "from es's unigram distribution in pretraining, es's own test sets); default: the "
                                "target.")
    source: str | None = Field(None, description="The language this condition's tasks are fine-tuned on "
                               "(default: the spec's), e.g. Fake-English in K et al.'s enfake-es B-BERT.")
    permute: float | None = Field(None, ge=0.0, le=1.0, description="Share p of the target's word-piece pairs "
                                  "swapped in pretraining (K et al. word order); sets pretrain.permute[target].")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining keys over the spec's "
                                     "(deep-merged), e.g. {model: {layers: 1}} or {layout: pairs, nsp: true}.")
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="Tokenizer keys over the spec's, "
                                      "e.g. {kind: char} or {markers: true}.")
    seeds: list[int] | None = Field(None, min_length=1, description="Seeds of this condition (default: the spec's).")
    controls: list[Control] | None = Field(None, description="Controls of this condition (default: the spec's).")
    tasks: list[Task] | None = Field(None, description="Tasks of this condition (default: the spec's), e.g. no "
                                     "XNLI for a generated unigram language, which has no XNLI files.")
    mixed_pairs: bool = Field(False, description="XNLI: also test premise and hypothesis in different languages "
                              "(source-target and target-source, K et al.'s last table).")
    also: list[str] = Field(default_factory=list, description="Further languages pretrained with the source and "
                            "the target, each tested zero-shot too (K et al.'s Table 7: a four-language BERT).")


class TableRow(Config):
    condition: str = Field(description="Name of the condition measured in this row.")
    level: str | None = Field(None, description="The factor's value in this row, e.g. '0.25' (default: the "
                              "table's `key` read from the condition's settings).")
    paper: list[str] = Field(default_factory=list, description="Rows of the paper's table (published.yaml) "
                             "shown under this one, e.g. ['enfake-es, permutation 0.25', ...].")


class PaperTable(Config):
    """Which table of the paper's published.yaml a factor table mirrors, and which of its columns
    stands beside each of ours."""

    table: str = Field(description="The paper's table, e.g. 'Table 4'.")
    columns: dict[str, str] = Field(description="'<task>.source' / '<task>.target' / '<task>.delta' -> "
                                    "the paper's column, e.g. {xnli.target: Russian}.")


class FactorTable(Config):
    """One of the paper's tables: a factor's levels as rows; source score, target score and Δ per task."""

    title: str = Field(description="Caption, with the paper's table number, e.g. 'Word-order permutation'.")
    factor: str = Field(description="Header of the first column, e.g. 'p'.")
    key: str | None = Field(None, description="Dotted setting shown as a row's level when it gives none, e.g. "
                            "'pretrain.model.layers' or 'tokenizer.kind' (the condition's effective value).")
    rows: list[TableRow] = Field(min_length=1)
    paper: PaperTable | None = Field(None, description="The paper's table this one mirrors: its rows are "
                                     "shown under ours (each row's `paper`).")
    per_language: bool = Field(False, description="Per task, one column per language of the rows' conditions "
                               "(K et al.'s Table 7: en / es / hi / ru) instead of source, target and Δ; the "
                               "paper's columns are then keyed '<task>.<language>'.")
    correlate: Task | None = Field(None, description="Also report Pearson's r between this task's source score "
                                   "and Δ over the rows (every seed a point), beside the r of the paper's rows "
                                   "under them (K et al. §3.3.1: 'a strong correlation between performance on "
                                   "English and cross-lingual ability (∆)').")


class ConditionsSettings(Config):
    data: StudyData = Field(default_factory=GeneratedData, description="Generated languages "
                                            "(kind: generated) or real files (kind: files).")
    source: str = Field("src", description="The language every task is fine-tuned on.")
    conditions: list[Condition] = Field(min_length=1)
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1,
                             description="One pretraining and fine-tuning per seed and condition.")
    tasks: list[Task] = Field(default_factory=lambda: ["upos", "ner"])
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="Tokenizer config keys.")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining config keys.")
    finetune: dict[str, Any] = Field(default_factory=dict, description="Transfer config keys of every task.")
    task_finetune: dict[Task, dict[str, Any]] = Field(default_factory=dict, description="Per-task transfer keys "
                                                      "over `finetune` (e.g. more epochs for NER).")
    task_modes: dict[Task, TrainedMode] = Field(default_factory=dict, description="How the pretrained "
                                                 "encoder is trained per task (default finetune), e.g. {ner: "
                                                 "bilstm_crf}: K et al.'s NER on frozen features.")
    controls: list[Control] = Field(default_factory=lambda: ["random_init", "majority"])
    retrieval: bool = Field(True, description="Word-retrieval MRR between source and target per encoder.")
    tables: list[FactorTable] = Field(default_factory=list, description="The paper's factor tables (rows name "
                                      "conditions); none: one table per task over all conditions only.")
    run_only: list[str] | None = Field(None, description="The conditions this scale builds (default: all), e.g. "
                                       "the lab's share of a grid the gpu scale runs whole; the others keep their "
                                       "table rows and findings, which report them as not run.")
    condition_overrides: dict[str, dict[str, Any]] = Field(default_factory=dict, description="Keys over named "
                                                           "conditions (deep-merged), so that a scale changes one "
                                                           "condition without restating the list, e.g. {char "
                                                           "tokens: {pretrain: {seq_len: 256, batch_size: 64}}}.")

    @model_validator(mode="before")
    @classmethod
    def _override_conditions(cls, data: Any) -> Any:
        """Apply `condition_overrides` to the conditions they name (an unknown name is an error naming it)."""
        overrides = data.get("condition_overrides") if isinstance(data, dict) else None
        if not overrides or not isinstance(data.get("conditions"), list):
            return data
        names = [c.get("name") for c in data["conditions"] if isinstance(c, dict)]
        unknown = [n for n in overrides if n not in names]
        if unknown:
            raise ValueError(f"condition_overrides: unknown condition {unknown[0]!r} (conditions: {', '.join(names)})")
        conditions = [deep_merge(c, overrides.get(c.get("name"), {})) if isinstance(c, dict) else c
                      for c in data["conditions"]]
        return {**data, "conditions": conditions, "condition_overrides": {}}


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
                for cond in s.conditions for lang in {*condition_languages(s, cond), tested_language(cond)}
                if lang not in languages]
    names = [c.name for c in s.conditions]
    by_name = {c.name: c for c in s.conditions}
    problems += [f"{spec.source}: key 'conditions': name {n!r} is used twice" for n in names if names.count(n) > 1]
    problems += [f"{spec.source}: key 'tables': {t.title!r}: unknown condition {r.condition!r}"
                 for t in s.tables for r in t.rows if r.condition not in names]
    problems += [f"{spec.source}: key 'tables': {t.title!r}: a row of condition {r.condition!r} needs a level "
                 "(or the table a key)" for t in s.tables for r in t.rows if r.level is None and t.key is None]
    problems += [f"{spec.source}: key 'tables': {t.title!r}: per_language needs every row's condition to have "
                 "the same languages" for t in s.tables if t.per_language and len({
                     tuple(condition_languages(s, by_name[r.condition]))
                     for r in t.rows if r.condition in by_name}) > 1]
    problems += [f"{spec.source}: key 'run_only': unknown condition {n!r} (conditions: {', '.join(names)}; "
                 "null builds every one)" for n in s.run_only or () if n not in names]
    problems += [f"{spec.source}: key 'conditions': {c.name!r}: mixed_pairs needs the xnli task"
                 for c in s.conditions if c.mixed_pairs and "xnli" not in (s.tasks if c.tasks is None else c.tasks)]
    if problems:
        raise ConfigError("\n".join(dict.fromkeys(problems)))
    for table in s.tables:  # a misspelt setting key fails here, before anything is built
        [setting_value(s, by_name[r.condition], table.key) for r in table.rows if r.level is None]
    jobs: list[Job] = []
    encoders: dict[Job, str] = {}
    for cond in (c for c in s.conditions if s.run_only is None or c.name in s.run_only):
        cond_jobs = _condition_jobs(s, cond, text, data)
        for job in {j.inputs[0] for j in cond_jobs if j.kind == "transfer" and len(j.inputs) == 2}:
            if job in encoders and encoders[job] != cond.name:
                raise ConfigError(f"{spec.source}: key 'conditions': {encoders[job]!r} and {cond.name!r} pretrain "
                                  "the same encoder; list a condition once and name it in several tables")
            encoders[job] = cond.name
        jobs += cond_jobs
    return jobs


def source_of(s: ConditionsSettings, cond: Condition) -> str:
    return cond.source or s.source


def has_retrieval(s: ConditionsSettings, cond: Condition) -> bool:
    """Word retrieval needs a lexicon from the source, and the data's lexicons are from the spec's source."""
    return s.retrieval and source_of(s, cond) == s.source


def tested_language(cond: Condition) -> str:
    """The language a condition's target scores are measured on: `test_on`, else the target."""
    return cond.test_on or cond.target


def condition_languages(s: ConditionsSettings, cond: Condition, tested: bool = False) -> list[str]:
    """The languages a condition's encoder is pretrained on (tested: those it is tested on): the source first,
    then the target."""
    target = tested_language(cond) if tested else cond.target
    return list(dict.fromkeys((source_of(s, cond), target, *cond.also)))


def condition_settings(s: ConditionsSettings, cond: Condition) -> tuple[dict[str, Any], dict[str, Any]]:
    """The (tokenizer, pretrain) keys of a condition: the spec's with the condition's merged over them."""
    pretrain = deep_merge(s.pretrain, cond.pretrain)
    if cond.permute is not None:
        pretrain["permute"] = {**pretrain.get("permute", {}), cond.target: cond.permute}
    return deep_merge(s.tokenizer, cond.tokenizer), pretrain


def setting_value(s: ConditionsSettings, cond: Condition, key: str) -> str:
    """A condition's effective setting, e.g. 'pretrain.model.layers' -> '4' (defaults included)."""
    from mbertlab.config import parse_config
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.tokenizers.train import TokenizerConfig

    tokenizer, pretrain = condition_settings(s, cond)
    head, _, rest = key.partition(".")
    configs = {"pretrain": lambda: parse_config(PretrainConfig, pretrain, "study key 'pretrain'"),
               "tokenizer": lambda: parse_config(TokenizerConfig, tokenizer, "study key 'tokenizer'")}
    if head not in configs or not rest:
        raise ConfigError(f"key 'tables': key {key!r}: expected pretrain.<key> or tokenizer.<key>")
    value = configs[head]()
    for part in rest.split("."):
        if not hasattr(value, part):
            raise ConfigError(f"key 'tables': key {key!r}: no setting {part!r}")
        value = getattr(value, part)
    return str(value)


def _condition_jobs(s: ConditionsSettings, cond: Condition, text: Job, data: Job) -> list[Job]:
    from mbertlab.studies import stages

    pair, source = condition_languages(s, cond), source_of(s, cond)
    tested = condition_languages(s, cond, tested=True)
    tags = (("condition", cond.name),)
    tokenizer, pretrain = condition_settings(s, cond)
    controls = s.controls if cond.controls is None else cond.controls
    tasks = s.tasks if cond.tasks is None else cond.tasks
    shards = stages.shards_job(text, pair, tokenizer, tags)
    jobs: list[Job] = []
    finetune = {task: deep_merge(s.finetune, s.task_finetune.get(task, {})) for task in tasks}
    if "majority" in controls:
        jobs += [stages.transfer_job(None, data, task, source, tested, finetune[task], 0, "majority",
                                     tags + (("control", "majority"),)) for task in tasks]
    # an encoder pretrained with language markers reads them in its task inputs too (K et al.'s input format)
    marked = {"markers": True} if pretrain.get("markers") else {}
    for seed in cond.seeds or s.seeds:
        encoder = stages.pretrain_job(shards, pretrain, seed, tags + (("seed", str(seed)),))
        variants = [("pretrained", None)]
        variants += [("random_init", "random_init")] if "random_init" in controls else []
        for control, mode in variants:
            vtags = tags + (("seed", str(seed)), ("control", control))
            for task in tasks:
                job = stages.transfer_job(encoder, data, task, source, tested, {**finetune[task], **marked}, seed,
                                          mode or s.task_modes.get(task, "finetune"), vtags)
                jobs.append(_mixed(job, data, source, tested_language(cond))
                            if cond.mixed_pairs and task == "xnli" else job)
            if has_retrieval(s, cond):
                jobs.append(stages.retrieval_job(encoder, data, text, source, cond.target, seed,
                                                 control == "random_init", vtags))
    return jobs


def mixed_lang(premise: str, hypothesis: str) -> str:
    """`test_lang` of XNLI rows whose premise and hypothesis are in different languages."""
    return f"{premise}-{hypothesis}"


def _mixed(job: Job, data: Job, source: str, target: str) -> Job:
    """The XNLI job also scoring source premises with target hypotheses and the reverse (parallel files)."""
    from mbertlab.store.layout import task_files
    from mbertlab.transfer.config import DataFile, TransferConfig

    pattern, fmt = task_files(data.kind)["xnli"]
    extra = [DataFile(lang=mixed_lang(p, h), split="test", path=pattern.format(lang=p, split="test"), format=fmt,
                      hypothesis_path=pattern.format(lang=h, split="test"), hypothesis_lang=h)
             for p, h in ((source, target), (target, source))]
    config = TransferConfig.model_validate({**job.config.model_dump(), "evaluate": [
        *[f.model_dump() for f in job.config.evaluate], *[f.model_dump() for f in extra]]})
    return Job(job.kind, config, job.inputs, job.label + " (mixed pairs)", job.tags)

