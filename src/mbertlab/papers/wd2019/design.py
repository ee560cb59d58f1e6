"""Design `wd2019` (Wu & Dredze 2019, *Beto, Bentz, Becas*): one multilingual encoder (pretrained on every
language of the study, or an existing Hugging Face encoder directory such as mBERT given by path), each
task fine-tuned on the source language and tested zero-shot on every target.

The grid, per seed:
- the five tasks (XNLI, MLDoc, NER, UPOS, parsing) with all weights fine-tuned (their Table 1 layout);
- the transfer strategies: fine-tune all, freeze the bottom layers 0..k (layer 0 = embeddings; k scaled to
  depth, {0, L/4, L/2, 3L/4} by default, tagged with the paper's n = 12k/L), feature-based (frozen encoder,
  scalar mix of every layer);
- parsing with gold UPOS embeddings beside parsing without;
- optionally (`in_language`) each task fine-tuned and tested on every target's own data (the paper's
  in-language supervised rows);
- language identification from each layer's mean-pooled vectors (with a randomly initialised encoder of
  the same shape as a control);
- subword overlap (p_type, p_token) per task, of the source's training data with each target's test data under
  the encoder's tokenizer (§5.4), and its Pearson correlation with the fine-tune-all zero-shot scores (per
  task and pooled over tasks).
Controls: the majority label per task.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from mbertlab.config import Config, parse_config
from mbertlab.errors import ConfigError
from mbertlab.store.layout import linked_task_file, task_files, text_file
from mbertlab.studies.data import FilesData, GeneratedData, StudyData, part
from mbertlab.transfer.task_table import TaskName
from mbertlab.studies.jobs import Job
from mbertlab.studies.spec import StudySpec

Task = TaskName  # every task of the task table
Strategy = Literal["finetune", "freeze", "feature"]
FINETUNE_ALL, FEATURE, MAJORITY, IN_LANGUAGE = "fine-tune all", "feature-based", "majority", "in-language"


def freeze_label(level: int) -> str:
    """The strategy name of freezing layers 0..level (layer 0 = the embeddings)."""
    return "freeze 0" if level == 0 else f"freeze 0-{level}"


def paper_n(level: int, depth: int) -> int:
    """The paper's n (layers 0..n frozen of mBERT's 12) that freezing 0..level of a `depth`-layer encoder stands
    for: the tag findings select by, the same at every scale (lab: 0..3 of 4 -> n = 0, 3, 6, 9)."""
    return round(12 * level / depth)


class LangIdSettings(Config):
    sentences: int = Field(200, ge=10, description="Dev sentences per language (30% held out for testing).")
    random_init: bool = Field(True, description="Also probe a randomly initialised encoder of the same shape.")


class Wd2019Settings(Config):
    data: StudyData = Field(default_factory=GeneratedData, description="Generated languages "
                                            "(every task of the paper has files) or real files (kind: files, "
                                            "with `encoder`).")
    source: str = Field("src", description="The language every task is fine-tuned on (the paper: English).")
    targets: list[str] | None = Field(None, description="Zero-shot targets (default: every other language).")
    seeds: list[int] = Field(default_factory=lambda: [0, 1, 2], min_length=1)
    tasks: list[Task] = Field(default_factory=lambda: ["xnli", "mldoc", "ner", "upos", "parse"], min_length=1)
    encoder: str | None = Field(None, description="A Hugging Face encoder directory (e.g. mBERT) used instead "
                                "of pretraining; its tokenizer tokenizes everything.")
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="Tokenizer config keys (pretraining).")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining config keys.")
    finetune: dict[str, Any] = Field(default_factory=dict, description="Transfer config keys of every task.")
    task_finetune: dict[Task, dict[str, Any]] = Field(default_factory=dict, description="Per-task transfer keys "
                                                      "over `finetune` (the paper tunes lr and batch per task).")
    feature_finetune: dict[str, Any] = Field(default_factory=dict, description="Transfer keys over those of the "
                                             "feature-based strategy (the paper: Adam 1e-3, batch 32, BiLSTM d_h).")
    in_language: list[Task] = Field(default_factory=list, description="Tasks also fine-tuned and tested on each "
                                    "target's own data (the paper's in-language supervised rows: MLDoc, NER, POS "
                                    "and parsing; its XNLI has none).")
    strategies: list[Strategy] = Field(default_factory=lambda: ["finetune", "freeze", "feature"], min_length=1)
    strategy_tasks: list[Task] | None = Field(None, description="Tasks of the strategy comparison "
                                              "(default: every task).")
    freeze: list[int] | None = Field(None, description="Freeze layers 0..k for each k (0 = embeddings); "
                                     "default {0, L/4, L/2, 3L/4} of the encoder's L layers.")
    gold_upos: bool = Field(True, description="Parsing also with gold UPOS embeddings (mBERT + POS).")
    langid: LangIdSettings | None = Field(default_factory=LangIdSettings, description="null: no language ID.")
    overlap: bool = Field(True, description="Subword overlap per task and its correlation with zero-shot scores.")
    majority: bool = Field(True, description="A majority-label control per task.")
    word_order: bool = Field(True, description="Table 6's word-order distance of each parsing target from the "
                             "source, measured from the treebanks (analysis/word_order.py).")

    @model_validator(mode="after")
    def _check(self):
        if self.encoder is not None and (self.pretrain or self.tokenizer):
            raise ValueError("encoder: with an existing encoder directory leave out 'pretrain' and 'tokenizer'")
        if any(k < 0 for k in self.freeze or []):
            raise ValueError(f"freeze: layers must be >= 0, got {self.freeze}")
        if self.data.kind == "files":
            _check_linkable(self.data)
        return self


def encoder_depth(s: Wd2019Settings) -> int:
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.store.external import encoder_layers

    if s.encoder is not None:
        if not Path(s.encoder).expanduser().is_dir():
            raise ConfigError(f"key 'encoder': no such encoder directory {s.encoder}")
        return encoder_layers(Path(s.encoder).expanduser())
    return parse_config(PretrainConfig, {**s.pretrain, "seed": 0}, "study key 'pretrain'").model.layers


def freeze_levels(s: Wd2019Settings, depth: int) -> list[int]:
    """The paper's {0, 3, 6, 9} of 12 layers, scaled to `depth` (duplicates dropped)."""
    if s.freeze is not None:
        too_deep = [k for k in s.freeze if k >= depth]
        if too_deep:
            raise ConfigError(f"key 'freeze': {too_deep} would freeze every layer of a {depth}-layer encoder "
                              f"(use 0..{depth - 1})")
        return sorted(set(s.freeze))
    return sorted({0, depth // 4, depth // 2, 3 * depth // 4})


def study_languages(spec: StudySpec, data: Job) -> tuple[list[str], list[str]]:
    """(every language of the study, the targets), checked against the data."""
    from mbertlab.studies import stages

    s: Wd2019Settings = spec.settings  # type: ignore[assignment]
    available = stages.data_languages(data) if data.kind == "generate" else list(s.data.languages)
    targets = s.targets if s.targets is not None else [l for l in available if l != s.source]
    unknown = [l for l in [s.source, *targets] if l not in available]
    if unknown:
        raise ConfigError(f"{spec.source}: keys 'source'/'targets': unknown language(s) {', '.join(unknown)} "
                          f"(data: {', '.join(available)})")
    if s.source in targets or not targets:
        raise ConfigError(f"{spec.source}: key 'targets': needs one or more languages other than the source")
    return [s.source, *targets], targets


def data_job(spec: StudySpec) -> Job:
    from mbertlab.studies import stages
    s: Wd2019Settings = spec.settings  # type: ignore[assignment]
    if s.data.kind == "generated":
        return stages.generate_job(s.data.preset, s.data.seed, s.data.set)
    if s.encoder is None:
        raise ConfigError(f"{spec.source}: key 'encoder': real task files (data.kind: files) need an existing "
                          "encoder directory (the paper used mBERT); this design pretrains only on generated data")
    return task_files_for(s.data, Path(spec.source).parent)


def plan(spec: StudySpec) -> list[Job]:
    from mbertlab.studies import stages

    s: Wd2019Settings = spec.settings  # type: ignore[assignment]
    data = data_job(spec)
    languages, targets = study_languages(spec, data)
    depth = encoder_depth(s)
    levels = freeze_levels(s, depth)
    jobs: list[Job] = []
    if s.majority:
        jobs += [_transfer(s, None, data, task, languages, 0, "majority", {},
                           (("strategy", MAJORITY),) + _pos_tag(task, False))
                 for task in s.tasks]
    shared = stages.hf_encoder_job(s.encoder, "encoder") if s.encoder is not None else None
    shards = stages.shards_job(data, languages, s.tokenizer, ()) if shared is None else None
    for seed in s.seeds:
        seed_tag = (("seed", str(seed)),)
        encoder = shared or stages.pretrain_job(shards, s.pretrain, seed, seed_tag)
        jobs += _seed_jobs(s, encoder, data, languages, targets, levels, depth, seed)
    if s.word_order and "parse" in s.tasks:
        parse = next(j for j in jobs if j.kind == "transfer" and j.config.task == "parse"
                     and j.tag("strategy") == FINETUNE_ALL and j.tag("upos_input") == "none")
        if any(f.split == "test" and f.lang != s.source for f in parse.config.evaluate):
            jobs.append(stages.word_order_job(data, parse))
    return jobs


def _seed_jobs(s: Wd2019Settings, encoder: Job, data: Job, languages: list[str], targets: list[str],
               levels: list[int], depth: int, seed: int) -> list[Job]:
    from mbertlab.studies.stages import correlate_job, overlap_job

    tags = (("seed", str(seed)),)
    main = [_transfer(s, encoder, data, task, languages, seed, "finetune", {},
                      tags + (("strategy", FINETUNE_ALL),) + _pos_tag(task, False)) for task in s.tasks]
    jobs = list(main)
    for task in s.strategy_tasks or s.tasks:
        pos = _pos_tag(task, False)
        if "freeze" in s.strategies:
            jobs += [_transfer(s, encoder, data, task, languages, seed, "freeze", {"freeze_layers": k + 1},
                               tags + (("strategy", freeze_label(k)), ("freeze", str(k)),
                                       ("paper_n", str(paper_n(k, depth)))) + pos) for k in levels]
        if "feature" in s.strategies:
            jobs.append(_transfer(s, encoder, data, task, languages, seed, "feature", {},
                                  tags + (("strategy", FEATURE),) + pos))
    if s.gold_upos and "parse" in s.tasks:
        jobs.append(_transfer(s, encoder, data, "parse", languages, seed, "finetune", {"gold_upos": True},
                              tags + (("strategy", FINETUNE_ALL),) + _pos_tag("parse", True)))
    jobs += [_transfer(s, encoder, data, task, [lang], seed, "finetune", {},
                       tags + (("strategy", IN_LANGUAGE),) + _pos_tag(task, False), train_lang=lang)
             for task in s.in_language for lang in targets if task_file(s, data, lang, task, "train") is not None]
    with_text = text_languages(s, data, languages)
    if s.langid is not None and len(with_text) >= 2:
        for random_init in (False, True) if s.langid.random_init else (False,):
            control = (("control", "random_init" if random_init else "pretrained"),)
            jobs.append(_langid(s, encoder, data, with_text, seed, random_init, tags + control))
    tested = [job for job in main if any(f.split == "test" and f.lang != s.source for f in job.config.evaluate)]
    if s.overlap and tested:
        overlaps = [overlap_job(encoder, data, job, tags) for job in tested]
        jobs += overlaps + [correlate_job(overlaps, tested, seed, tags, repair=True)]  # NER F1 repaired, §5.1
    return jobs


def _pos_tag(task: str, gold: bool) -> tuple:
    return (("upos_input", "gold" if gold else "none"),) if task == "parse" else ()


def _transfer(s: Wd2019Settings, encoder: Job | None, data: Job, task: str, languages: list[str], seed: int,
              mode: str, keys: dict[str, Any], tags, train_lang: str | None = None) -> Job:
    """Trained on the source's train file (or `train_lang`'s: in-language); scores the training language's dev
    file (the run selects its model there: the zero-shot protocol, no target data) and every language's test
    file."""
    from mbertlab.config import deep_merge
    from mbertlab.transfer.config import TransferConfig

    train_lang = train_lang or s.source
    train = task_file(s, data, train_lang, task, "train")
    if train is None:
        raise ConfigError(f"key 'data.languages.{train_lang}.tasks.{task}.train': the training language needs a "
                          "training file")
    dev = task_file(s, data, train_lang, task, "dev") if mode != "majority" else None
    tests = [f for f in (task_file(s, data, l, task, "test") for l in languages) if f is not None]
    settings = deep_merge(s.finetune, s.task_finetune.get(task, {}))
    settings = {**(deep_merge(settings, s.feature_finetune) if mode == "feature" else settings), **keys}
    config = parse_config(TransferConfig, {**settings, "task": task, "mode": mode, "seed": seed, "train": train,
                                           "evaluate": ([dev] if dev else []) + tests}, "study key 'finetune'")
    inputs = (encoder, data) if encoder is not None else (data,)
    label = f"{task} {mode} {dict(tags).get('strategy', '')} seed {seed}"
    return Job("transfer", config, inputs, label=label, tags=tuple(tags) + (("task", task),))


def _langid(s: Wd2019Settings, encoder: Job, data: Job, languages: list[str], seed: int, random_init: bool,
            tags) -> Job:
    """Language ID by layer over the languages' text (Wu & Dredze 2019 Fig. 2)."""
    from mbertlab.transfer.langid import LangFile, LangIdConfig

    files = [LangFile(lang=l, path=text_path(data, l)) for l in languages]
    config = LangIdConfig(files=files, sentences=s.langid.sentences, seed=seed, random_init=random_init)
    return Job("langid", config, (encoder, data), label=f"langid {'+'.join(languages)} seed {seed}", tags=tags)


# ---- where the files are ------------------------------------------------------------------------

def _check_linkable(data: FilesData) -> None:
    """This design links real files as they are (an existing encoder tokenizes them): no derived language,
    no second text file, and two or more languages."""
    if len(data.languages) < 2:
        raise ValueError("data.languages: needs a source and one or more targets")
    for lang, language in data.languages.items():
        if language.derive is not None or language.lexicon is not None or language.max_sentences is not None:
            raise ValueError(f"data.languages.{lang}: derive, lexicon and max_sentences need a design that "
                             "pretrains on the text (k2020, liu2020, wd2020); wd2019 links the files as they are")
        if len(language.text) > 1:
            raise ValueError(f"data.languages.{lang}.text: one file (language ID reads it), got {len(language.text)}")


def task_files_for(data: FilesData, spec_dir: Path) -> Job:
    """The task_files job linking every file the spec names (each missing file is one line of the error)."""
    from mbertlab.store.external import linked_file
    from mbertlab.studies.stages import task_files_job

    root = (spec_dir / data.root).resolve()
    files, problems = [], []
    for lang, language in data.languages.items():
        named = [("text", text_file("task_files", lang, "train"), language.text[0])] if language.text else []
        named += [(f"tasks.{task}.{split}", linked_task_file(lang, task, split, f.path), f.path)
                  for task, split, f in language.parts()]
        for key, dest, path in named:
            try:
                files.append(linked_file(dest, root / path, f"data.languages.{lang}.{key}"))
            except ConfigError as err:
                problems.append(str(err))
    if problems:
        raise ConfigError("\n".join(problems))
    return task_files_job(files)


def task_file(s: Wd2019Settings, data: Job, lang: str, task: str, split: str) -> dict | None:
    """The DataFile keys of a language's task split (paths relative to the data artifact), or None."""
    if data.kind == "generate":
        pattern, fmt = task_files("generate")[task]
        return {"lang": lang, "split": split, "path": pattern.format(lang=lang, split=split), "format": fmt}
    entry = s.data.languages[lang].tasks.get(task, {}).get(split)
    if entry is None:
        return None
    f = part(entry)
    return {"lang": lang, "split": split, "path": linked_task_file(lang, task, split, f.path),
            "format": f.format_for(task), "start": f.start, "end": f.end}


def text_languages(s: Wd2019Settings, data: Job, languages: list[str]) -> list[str]:
    if data.kind == "generate":
        return list(languages)
    return [l for l in languages if s.data.languages[l].text]


def text_path(data: Job, lang: str) -> str:
    """Language ID reads generated dev text (held out from pretraining), or a real language's one text file."""
    return text_file(data.kind, lang, "dev" if data.kind == "generate" else "train")

