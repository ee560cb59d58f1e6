"""Job constructors for the built-in stage kinds, which the designs compose into a study's plan: each one
validates its settings into the stage's config and names its inputs (the builders are in builders.py)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from mbertlab.analysis.correlate import CorrelateConfig
from mbertlab.analysis.overlap import OverlapConfig
from mbertlab.analysis.retrieve import RetrievalConfig, WordRetrievalConfig
from mbertlab.embeddings.static import StaticConfig, StaticStageConfig
from mbertlab.config import parse_config
from mbertlab.corpus.budget import BudgetConfig
from mbertlab.corpus.build import CorpusConfig, CorpusLanguage, CorpusSource
from mbertlab.corpus.taskdata import TaskDataConfig, TaskFile, TaskLanguage
from mbertlab.errors import ConfigError
from mbertlab.data.generate import preset_config
from mbertlab.data.generate.build import ordered_languages
from mbertlab.pretrain.balance import BalanceConfig
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.store.external import (LinkedFile, hf_encoder_config,
                                     task_files_config)
from mbertlab.store.layout import TEXT_FILES, task_files, text_file
from mbertlab.studies.jobs import Job
from mbertlab.tokenizers.shards import ShardsConfig
from mbertlab.tokenizers.train import TokenizerConfig
from mbertlab.transfer.config import TransferConfig
from mbertlab.transfer.task_table import get_task

def generate_job(preset: str, seed: int, overrides: dict[str, Any]) -> Job:
    return Job("generate", preset_config(preset, seed, overrides), label=f"generate {preset}")


def data_languages(job: Job) -> list[str]:
    if job.kind == "generate":
        return [lang.name for lang in ordered_languages(job.config)]
    return [lang.name for lang in job.config.languages]


def task_languages(data: Job, task: str, languages: list[str]) -> list[str]:
    """The languages of `languages` that have a test file for the task (every generated language has)."""
    if data.kind == "generate":
        return languages
    files = {lang.name: lang.tasks.get(task, {}) for lang in data.config.languages}
    return [l for l in languages if "test" in files.get(l, {})]


def files_jobs(data, source: str, spec_dir: Path) -> tuple[Job, Job]:
    """Real data: a corpus job (pretraining text, fake copies) and a taskdata job (task files, lexicons)."""
    root = (spec_dir / data.root).resolve()
    at = lambda p: str((root / p).resolve())  # noqa: E731
    _check_files_exist(data, root)
    gathered = task_files("taskdata")
    for name, lang in data.languages.items():
        for task in lang.tasks.keys() - gathered.keys():
            raise ConfigError(f"key 'data.languages.{name}.tasks.{task}': task {task!r} has no gathered layout in "
                              f"the task table; this design's taskdata stage gathers {', '.join(gathered)}")
    corpus_langs, task_langs = [], []
    for name, lang in data.languages.items():
        base = data.languages.get(lang.derive.base) if lang.derive else lang
        if base is None:
            raise ConfigError(f"data.languages.{name}.derive.from: unknown language {lang.derive.base!r} "
                              f"(known: {', '.join(data.languages)})")
        derive = lang.derive.transform if lang.derive else None
        corpus_langs.append(CorpusLanguage(name=name, sources=[CorpusSource(path=at(p)) for p in base.text],
                                           derive=derive, max_sentences=lang.max_sentences or base.max_sentences))
        files: dict[str, dict[str, TaskFile]] = {}
        for task, split, p in base.parts():
            files.setdefault(task, {})[split] = TaskFile(path=at(p.path), format=p.format_for(task), start=p.start,
                                                         end=p.end)
        task_langs.append(TaskLanguage(name=name, derive=derive, tasks=files,
                                       lexicon=at(lang.lexicon) if lang.lexicon else None,
                                       text=[at(p) for p in base.text] if derive else []))
    corpus = Job("corpus", CorpusConfig(languages=corpus_langs), label="corpus")
    taskdata = Job("taskdata", TaskDataConfig(source=source, languages=task_langs), label="task data")
    return corpus, taskdata


def _check_files_exist(data, root: Path) -> None:
    """Every missing file is one line of one ConfigError, before anything runs."""
    problems = []
    for name, lang in data.languages.items():
        named = [("text", p) for p in lang.text]
        named += [(f"tasks.{task}.{split}", p.path) for task, split, p in lang.parts()]
        named += [("lexicon", lang.lexicon)] * bool(lang.lexicon)
        problems += [f"key 'data.languages.{name}.{key}': no such file {root / p}"
                     for key, p in named if not (root / p).is_file()]
    if problems:
        raise ConfigError("\n".join(problems))


def budget_job(data: Job, budgets: dict[str, int], balanced: bool, tags, label: str | None = None) -> Job:
    """`data`'s text with each language's training sentences cut to `budgets` (all to the smallest: balanced)."""
    label = label or f"{'balanced' if balanced else 'full'} text {'+'.join(budgets)}"
    return Job("budget", BudgetConfig(languages=budgets, balanced=balanced), (data,), label=label, tags=tags)


def hf_encoder_job(directory: str | Path, key: str, tags=()) -> Job:
    """An existing encoder directory as a pretraining artifact; `key` names the spec key of its path."""
    config = hf_encoder_config(directory, key)
    return Job("hf_encoder", config, (), label=f"hf encoder {Path(config.path).name}", tags=tuple(tags))


def task_files_job(files: list[LinkedFile]) -> Job:
    return Job("task_files", task_files_config(files), (), label="task files")


def shards_job(text: Job, languages: list[str], tokenizer: dict[str, Any], tags) -> Job:
    tok_config = parse_config(TokenizerConfig, {**tokenizer, "languages": languages}, "study key 'tokenizer'")
    tok = Job("tokenizer", tok_config, (text,), label=f"tokenizer {'+'.join(languages)}", tags=tags)
    return Job("shards", ShardsConfig(languages=languages), (tok, text), label=f"shards {'+'.join(languages)}",
               tags=tags)


def pretrain_job(shards: Job, settings: dict[str, Any], seed: int, tags) -> Job:
    config = parse_config(PretrainConfig, {**settings, "seed": seed}, "study key 'pretrain'")
    return Job("pretrain", config, (shards,), label=f"pretrain {_named(tags, shards.config.languages)} seed {seed}",
               tags=tags)


def _named(tags, languages=()) -> str:
    """What a label calls a stage: its condition, else (designs without conditions, as wd2020's encoders) its
    tags' values and languages; progress lines and a SLURM submission's summary tell stages apart by label."""
    return dict(tags).get("condition") or " ".join(
        [*(v for k, v in tags if k != "seed"), *(["+".join(languages)] if languages else [])])


def encoder_shards_job(encoder: Job, text: Job, languages: list[str], tags) -> Job:
    """The languages' text under a released encoder's own tokenizer (e.g. mBERT's vocabulary for Fig. 3)."""
    return Job("shards", ShardsConfig(languages=languages), (encoder, text), label=f"shards {'+'.join(languages)}",
               tags=tags)


def transfer_job(encoder: Job | None, data: Job, task: str, source: str, languages: list[str],
                 settings: dict[str, Any], seed: int, mode: str, tags, label: str | None = None) -> Job:
    stored = task_files(data.kind)
    if task not in stored:
        raise ConfigError(f"task {task!r} has no files in {data.kind} data (has: {', '.join(stored)})")
    pattern, fmt = stored[task]
    keys = {**settings, "task": task, "mode": mode, "seed": seed,
            "train": {"lang": source, "split": "train", "path": pattern.format(lang=source, split="train"),
                      "format": fmt},
            "evaluate": [{"lang": l, "split": "test", "path": pattern.format(lang=l, split="test"), "format": fmt}
                         for l in task_languages(data, task, languages)]}
    config = parse_config(TransferConfig, keys, "study key 'finetune'")
    if len(config.lr) * len(config.batch_size) * len(config.epoch_grid) > 1:  # a grid: selected on the source dev set
        dev = {"lang": source, "split": "dev", "path": pattern.format(lang=source, split="dev"), "format": fmt}
        config = parse_config(TransferConfig, {**keys, "evaluate": [dev, *keys["evaluate"]]}, "study key 'finetune'")
    inputs = (encoder, data) if encoder is not None else (data,)
    label = label or f"{task} {mode} {_named(tags)} seed {seed}"
    return Job("transfer", config, inputs, label=label, tags=tuple(tags) + (("task", task),))


def langid_job(encoder: Job, text: Job, languages: list[str], sentences: int, seed: int, random_init: bool,
               tags) -> Job:
    """Language ID by layer over the languages' dev text (Wu & Dredze 2019 Fig. 2)."""
    from mbertlab.transfer.langid import LangFile, LangIdConfig

    files = [LangFile(lang=l, path=text_file(text.kind, l, "dev")) for l in languages]
    config = LangIdConfig(files=files, sentences=sentences, seed=seed, random_init=random_init)
    return Job("langid", config, (encoder, text), label=f"langid {'+'.join(languages)} seed {seed}", tags=tags)


def retrieval_job(encoder: Job, data: Job, text: Job, source: str, target: str, seed: int, random_init: bool,
                  tags) -> Job:
    config = RetrievalConfig(source=source, target=target, lexicon=f"lexicon/{source}-{target}.txt",
                             random_init=random_init, seed=seed, text_files=TEXT_FILES[text.kind])
    inputs = (encoder, data) if text == data else (encoder, data, text)
    return Job("retrieval", config, inputs, label=f"retrieval {target} seed {seed}", tags=tags)


def overlap_job(encoder: Job, data: Job, transfer: Job, tags=()) -> Job:
    """Subword overlap of a zero-shot transfer's training data with each target's test data (its own files
    and caps), under `encoder`'s tokenizer."""
    t = transfer.config
    source = t.train[0].lang
    tests = [f for f in t.evaluate if f.split == "test" and f.lang != source]
    if not tests:
        raise ConfigError(f"overlap: the {t.task} transfer tests no target other than its source {source!r}")
    config = OverlapConfig(task=t.task, train=t.train, tests=tests, max_train_sentences=t.max_train_sentences,
                           max_eval_sentences=t.max_eval_sentences)
    return Job("overlap", config, (encoder, data), label=f"overlap {t.task} {source} -> "
               f"{'+'.join(f.lang for f in tests)}", tags=tuple(tags) + (("task", t.task),))


def word_order_job(data: Job, transfer: Job, tags=()) -> Job:
    """Word-order distance of each target's parsing test treebank from the source's training treebank (the
    parse transfer's own files)."""
    from mbertlab.analysis.word_order import WordOrderConfig

    t = transfer.config
    source = t.train[0].lang
    tests = [f for f in t.evaluate if f.split == "test" and f.lang != source]
    if t.task != "parse" or not tests:
        raise ConfigError(f"word_order: needs a parse transfer tested on a target other than {source!r}")
    return Job("word_order", WordOrderConfig(train=t.train, tests=tests), (data,),
               label=f"word order {source} -> {'+'.join(f.lang for f in tests)}",
               tags=tuple(tags) + (("task", "parse"),))


def correlate_job(overlaps: list[Job], transfers: list[Job], seed: int, tags=(), repair: bool = False) -> Job:
    """Transfers are fine-tuned on the overlaps' source, one per task, each with the overlap job of its task.
    `repair`: NER is scored by the repaired F1, as the paper reports it (see Task.reported)."""

    tasks = [t.config.task for t in transfers]
    if len(set(tasks)) != len(tasks) or sorted(tasks) != sorted(o.config.task for o in overlaps):
        raise ConfigError(f"correlate: one transfer and one overlap job per task, got transfers of {tasks} and "
                          f"overlaps of {[o.config.task for o in overlaps]}")
    config = CorrelateConfig(metrics={t: get_task(t).reported(repair) for t in tasks}, seed=seed)
    return Job("correlate", config, (*overlaps, *transfers), label=f"correlate overlap seed {seed}",
               tags=tuple(tags))


def static_job(tokenizer: Job, text: Job, languages: list[str], settings: dict, tags=(),
               text_files: str | None = None) -> Job:
    """`tokenizer` is the BERT's tokenizer job (e.g. `shards_job(...).inputs[0]`); `text_files`: where a
    language's text is in `text` (default: the generated layout)."""
    from mbertlab.config import parse_config

    if tokenizer.kind != "tokenizer":
        raise ConfigError(f"static embeddings need a tokenizer job as first input, got a {tokenizer.kind!r} job")
    static = parse_config(StaticConfig, settings, "study key 'static'")
    config = StaticStageConfig(static=static, languages=languages,
                               **({"text_files": text_files} if text_files else {}))
    return Job("static", config, (tokenizer, text), label=f"static {static.method} {'+'.join(languages)}",
               tags=tuple(tags))


def word_retrieval_job(vectors: Job, data: Job, source: str, target: str, settings: dict, tags=(),
                       text: Job | None = None) -> Job:
    """Retrieval source → target with `data`'s gold lexicon and treebank; the languages' text is read from `text`
    where given (real data: the corpus job), else from `data`."""
    from mbertlab.config import parse_config

    keys = {**settings, "source": source, "target": target, "lexicon": f"lexicon/{source}-{target}.txt",
            **({"text_files": TEXT_FILES[text.kind]} if text is not None else {})}
    config = parse_config(WordRetrievalConfig, keys, "study key 'retrieval'")
    inputs = (vectors, data) if text is None else (vectors, data, text)
    return Job("word_retrieval", config, inputs, label=f"retrieval {source}-{target} {vectors.label}",
               tags=tuple(tags))


def student_job(shards: Job, teachers: dict[str, Job], settings: dict, seed: int, tags) -> Job:
    """A distilled student on `shards`; teacher i of `teachers` (by language) is input i + 1."""
    refs = {lang: f"inputs[{i + 1}]" for i, lang in enumerate(teachers)}
    config = PretrainConfig.model_validate({**settings, "seed": seed, "objective": "distill", "teachers": refs})
    return Job("student", config, (shards, *teachers.values()), label=f"student {_named(tags)} seed {seed}",
               tags=tags)


def balance_job(shards: Job, models: dict[str, Job], teachers: dict[str, Job], groups: dict[str, list[str]],
                pretrain: PretrainConfig, tags) -> Job:
    """Eq. 3 of each model against the teachers, all scored on `shards`' dev batches (pretrain's eval keys)."""
    config = BalanceConfig(models=list(models), teachers=list(teachers), groups=groups, seed=pretrain.seed,
                           seq_len=pretrain.seq_len, eval_batches=pretrain.eval_batches,
                           mask_prob=pretrain.mask_prob, precision=pretrain.precision)
    return Job("balance", config, (shards, *models.values(), *teachers.values()),
               label=f"balance {_named(tags)} seed {pretrain.seed}", tags=tags)
