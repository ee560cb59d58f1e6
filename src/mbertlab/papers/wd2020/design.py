"""Design `wd2020` (Wu & Dredze 2020, "Are all languages created equal in mBERT?"): languages of very
different sizes; for each, in-language NER / UPOS / parsing with a multilingual encoder (every language,
α-smoothed sampling as mBERT), a monolingual encoder, and a bilingual encoder that pairs a low-resource
language with a related, larger one; the Table 4 variants (base / small / smaller vocabulary / shorter
sequences) of the monolingual and bilingual encoders; vocabulary frequency curves (Fig. 3); the
regression of scores on WikiSize and task-data size (Table 2); dev score per saved checkpoint (Fig. 4);
optionally (`baseline`) a non-BERT baseline per language (Fig. 1): frozen word2vec vectors of the language's
own text with a BiLSTM head (+ CRF for NER), tagged `encoder: baseline`. With `encoder:` (a Hugging Face
directory such as mBERT) the multilingual encoder is that released model, as in the paper, not one pretrained here.

Generated data: the generator writes every language at one size, so a `budget` stage cuts each
language's pretraining text to its own budget; WikiSize is then measured from that text exactly as the
corpus stage measures real text. Real data (`data.kind: files`) goes through the corpus stage itself.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field, model_validator

from mbertlab.analysis.regress import NestedTest, check_fit_factors
from mbertlab.config import Config, deep_merge, parse_config
from mbertlab.errors import ConfigError
from mbertlab.store.layout import task_files
from mbertlab.studies.data import GeneratedData, StudyData
from mbertlab.studies.jobs import Job
from mbertlab.transfer.task_table import tasks_among
from mbertlab.studies.spec import StudySpec
from mbertlab.papers.wd2020.task_files import has_split, has_task, majority_jobs

Task = tasks_among("upos", "ner", "parse")
Encoder = Literal["monolingual", "bilingual", "multilingual"]


class Language(Config):
    name: str
    resource: Literal["low", "mid", "high"] = Field(description="The role the study gives the language (tags "
                                                    "rows); tables group by the measured WikiSize too.")
    sentences: int | None = Field(None, ge=1, description="Pretraining budget in sentences (generated data; "
                                  "real data: data.languages.<name>.max_sentences).")
    related: str | None = Field(None, description="The larger, related language a bilingual encoder pairs "
                                "this one with (low-resource languages).")
    task_sentences: int | None = Field(None, ge=1, description="Fine-tuning sentences of this language "
                                       "(default: finetune.max_train_sentences).")
    generate: dict[str, Any] = Field(default_factory=dict, description="Generated data: the generator's "
                                     "language keys (base, shared_vocabulary, word_order, ...).")



class Variant(Config):
    name: str = Field(description="Row label of Table 4, e.g. 'small'.")
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="Tokenizer keys over the study's.")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretrain keys over the study's.")
    encoders: list[Literal["monolingual", "bilingual"]] = Field(default_factory=lambda: ["monolingual", "bilingual"],
        min_length=1, description="Low-resource encoders this variant trains (the base trains all; the paper "
        "varies only the monolingual BERT).")


class Curve(Config):
    """Fig. 4: each saved checkpoint of the first seed's base encoders, fine-tuned and scored on dev."""

    task: Task = "ner"
    encoders: list[Encoder] = Field(default_factory=lambda: ["monolingual", "bilingual", "multilingual"])


# The baseline's transfer mode per task: a BiLSTM-CRF tagger for NER (Pan et al. 2017's kind of system), a
# BiLSTM for POS and under the biaffine parser (Che et al. 2018 read word embeddings into BiLSTMs).
BASELINE_MODES = {"ner": "bilstm_crf", "upos": "feature", "parse": "feature"}


class Baseline(Config):
    """The paper's baselines are published systems (Pan et al. 2017 for NER, Che et al. 2018 for POS and
    parsing) that read word embeddings, not a pretrained language model. Ours: word2vec vectors trained on the
    language's own pretraining text under its monolingual tokenizer, frozen, with a BiLSTM head trained on the
    language's task data and selected on its dev set."""

    static: dict[str, Any] = Field(default_factory=dict, description="StaticConfig keys (method, window, "
                                   "epochs ...); dim is the BERT hidden size.")
    finetune: dict[str, Any] = Field(default_factory=dict, description="Transfer keys over `finetune`.")

    @model_validator(mode="after")
    def _no_dim(self):
        if "dim" in self.static:
            raise ValueError("static.dim: leave it out, it is the BERT hidden size (pretrain.model.hidden)")
        return self


class Regression(Config):
    """Table 2: univariate fits on each factor, a multivariate fit, and likelihood-ratio tests of nested fits."""
    factors: list[str] = Field(default_factory=lambda: ["wikisize", "log2:train_sentences"],
                               description="Rows of the sizes stage: wikisize, mb, sentences, train_sentences, "
                               "train_vocab (word types of the task's training data).")
    multivariate: list[str] | None = Field(None, description="Factors of the multivariate fit (the paper's: "
                                           "training size and WikiSize); null: every factor.")
    nested: list[NestedTest] = Field(default_factory=list, description="Likelihood-ratio tests (the paper's: "
                                     "training vocabulary added to training size).")
    encoder: Encoder = "multilingual"
    alpha: float = 0.05

    @model_validator(mode="after")
    def _known_factors(self):
        check_fit_factors(self.factors, self.multivariate, self.nested)
        return self


class Wd2020Settings(Config):
    data: StudyData = Field(default_factory=GeneratedData)
    languages: list[Language] = Field(min_length=2)
    encoders: list[Encoder] = Field(default_factory=lambda: ["monolingual", "bilingual", "multilingual"])
    encoder: str | None = Field(None, description="A released multilingual encoder (a Hugging Face directory, "
                                "e.g. mBERT, the paper's object) used as the multilingual encoder instead of "
                                "pretraining one; its own tokenizer gives Fig. 3's multilingual curve. It has no "
                                "saved checkpoints, so Fig. 4 leaves it out.")
    monolingual_for: Literal["low", "all"] = Field("low", description="Languages that get a monolingual encoder.")
    variants: list[Variant] = Field(default_factory=lambda: [Variant(name="base")], min_length=1,
                                    description="Table 4: the first is the base; each other variant trains "
                                    "the low-resource encoders its `encoders` names.")
    seeds: list[int] = Field(default_factory=lambda: [0, 1], min_length=1)
    tasks: list[Task] = Field(default_factory=lambda: ["ner", "upos", "parse"], min_length=1)
    alpha: float = Field(0.7, ge=0, description="Multilingual language sampling p ∝ n^alpha (mBERT: 0.7).")
    pair_vocabulary: Literal["proportional", "balanced"] = Field(
        "proportional", description="The bilingual encoder's vocabulary: learned from each language's text in "
        "proportion, or from the same number of sentences of both (the paper, §3.3).")
    tokenizer: dict[str, Any] = Field(default_factory=dict)
    pretrain: dict[str, Any] = Field(default_factory=dict)
    multilingual_pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretrain keys over `pretrain` "
                                                  "for the multilingual encoder alone: it learns every language "
                                                  "from one budget (mBERT itself trained far longer than the "
                                                  "paper's monolingual BERTs).")
    finetune: dict[str, Any] = Field(default_factory=dict)
    equal_steps: bool = Field(True, description="Fine-tune every language for the same number of optimiser "
                              "steps (epochs × largest task_sentences / the language's), so a small task set is "
                              "not also a shorter fine-tuning. finetune.steps (the paper's protocol) makes every "
                              "language's steps equal by itself.")
    checkpoint_selection: Literal["final", "best"] = Field("final", description="best: the monolingual and "
                                                           "bilingual encoders' every saved checkpoint is a candidate "
                                                           "of each fine-tuning, chosen on the language's dev set "
                                                           "(§3.3: the best of five); final: the last one.")
    vocab_curves: bool = True
    curve: Curve | None = Field(default_factory=Curve)
    regression: Regression | None = Field(default_factory=Regression)
    baseline: Baseline | None = Field(None, description="A non-BERT baseline per language (Fig. 1); null: none.")
    wikisize_bins: list[float] = Field(default_factory=list, description="Edges of the WikiSize groups in the "
                                       "tables (log2 MB); empty: one group per resource role.")

    @model_validator(mode="after")
    def _languages_known(self):
        names = [l.name for l in self.languages]
        problems = [f"languages.{l.name}.related: unknown language {l.related!r}" for l in self.languages
                    if l.related is not None and l.related not in names]
        problems += [f"languages: {n!r} listed twice" for n in dict.fromkeys(n for n in names if names.count(n) > 1)]
        if self.data.kind == "generated":
            problems += [f"languages.{l.name}.sentences: required with generated data" for l in self.languages
                         if l.sentences is None]
        if self.encoder is not None and "multilingual" not in self.encoders:
            problems.append("encoder: a released encoder stands for the multilingual encoder; list 'multilingual' "
                            "in encoders")
        if problems:
            raise ValueError("; ".join(problems))
        return self


def low_languages(s: Wd2020Settings) -> list[Language]:
    return [l for l in s.languages if l.resource == "low"]


def plan(spec: StudySpec) -> list[Job]:
    from mbertlab.studies import stages

    s: Wd2020Settings = spec.settings  # type: ignore[assignment]
    text, data = _data_jobs(s, spec)
    available = stages.data_languages(data)
    missing = [l.name for l in s.languages if l.name not in available]
    if missing:
        raise ConfigError(f"{spec.source}: key 'languages': not in the data: {', '.join(missing)}")
    sizes = _sizes_job(s, text, data)
    jobs: list[Job] = [sizes]
    transfers: dict[tuple[str, str], list[Job]] = {}  # (encoder, variant) -> transfer jobs
    for encoder, variant, langs, evaluated, tags in _encoders(s):
        released = stages.hf_encoder_job(s.encoder, "encoder", tags) if encoder == "multilingual" and s.encoder \
            else None
        if released is None:
            shards = stages.shards_job(text, langs, _tokenizer(s, variant, langs, encoder), tags)
        else:  # the released encoder's own vocabulary on the languages' text
            shards = stages.encoder_shards_job(released, text, langs, tags)
        if s.vocab_curves:
            jobs.append(Job("vocab_curve", _vocab_config(text), (shards, text), label=f"vocab {'+'.join(langs)}",
                            tags=tags))
        for seed in s.seeds:
            settings = _pretrain(s, variant, encoder)
            model = released or stages.pretrain_job(shards, settings, seed, tags + (("seed", str(seed)),))
            for lang in evaluated:
                ltags = tags + (("seed", str(seed)), ("lang", lang.name), ("resource", lang.resource))
                for task in s.tasks:
                    if not has_task(data, task, lang.name):
                        continue
                    job = _transfer_job(s, model, data, task, lang, seed, encoder, ltags)
                    transfers.setdefault((encoder, variant.name), []).append(job)
                    jobs.append(job)
                if s.curve and seed == s.seeds[0] and variant is s.variants[0] and encoder in s.curve.encoders \
                        and released is None and lang.resource == "low" and has_task(data, s.curve.task, lang.name):
                    jobs += _curve_jobs(s, model, data, lang, settings, seed, ltags)
    if s.regression:
        jobs += _regression_jobs(s, sizes, transfers.get((s.regression.encoder, s.variants[0].name), []))
    if s.baseline is not None:
        jobs += _baseline_jobs(s, text, data)
    return jobs + majority_jobs(s.languages, s.tasks, data, lambda lang: _finetune(s, lang))


def _transfer_job(s: Wd2020Settings, model: Job, data: Job, task: str, lang: Language, seed: int, encoder: str,
                  tags) -> Job:
    """In-language fine-tuning of the final model, or (checkpoint_selection: best, the encoders trained here)
    of the best saved checkpoint on the language's dev set."""
    from mbertlab.studies import stages

    keys = _finetune(s, lang)
    if not _selects_checkpoints(s, encoder) or not has_split(data, task, lang.name, "dev"):
        return stages.transfer_job(model, data, task, lang.name, [lang.name], keys, seed, "finetune",
                                   tags + (("checkpoint", "final"),))
    steps = checkpoint_steps({"steps": model.config.steps, "checkpoint_every": model.config.checkpoint_every})[:-1]
    return _in_language_job(model, data, task, lang.name, {**keys, "checkpoints": steps}, seed, "finetune",
                            tags + (("checkpoint", "best"),))


def _selects_checkpoints(s: Wd2020Settings, encoder: str) -> bool:
    """The paper picks the best of five checkpoints of the BERTs it trains, not of Google's mBERT."""
    return s.checkpoint_selection == "best" and encoder in ("monolingual", "bilingual")


def _baseline_jobs(s: Wd2020Settings, text: Job, data: Job) -> list[Job]:
    """Per language and seed: word2vec vectors of its text (its monolingual tokenizer), then each task with a
    BiLSTM head on the frozen vectors, trained, selected (dev) and tested on the language's own data."""
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.studies import stages
    from mbertlab.store.layout import TEXT_FILES

    base = s.variants[0]
    hidden = parse_config(PretrainConfig, {**_pretrain(s, base, "monolingual"), "seed": 0},
                          "study key 'pretrain'").model.hidden
    jobs: list[Job] = []
    for lang in s.languages:
        tags = (("encoder", "baseline"), ("variant", base.name))
        tok = stages.shards_job(text, [lang.name], _tokenizer(s, base, [lang.name], "monolingual"),
                                _tags("monolingual", base)).inputs[0]
        keys = deep_merge(_finetune(s, lang), s.baseline.finetune)
        for seed in s.seeds:
            ltags = tags + (("seed", str(seed)), ("lang", lang.name), ("resource", lang.resource))
            vectors = stages.static_job(tok, text, [lang.name], {**s.baseline.static, "dim": hidden, "seed": seed},
                                        ltags, text_files=TEXT_FILES[text.kind])
            for task in s.tasks:
                if has_task(data, task, lang.name):
                    jobs.append(_in_language_job(vectors, data, task, lang.name, keys, seed, BASELINE_MODES[task],
                                                 ltags + (("checkpoint", "final"),)))
            jobs.append(vectors)
    return jobs


def _in_language_config(data: Job, task: str, lang: str, keys: dict[str, Any], seed: int, mode: str):
    """A TransferConfig trained on the language's train file, selected on its dev file where it has one, and
    tested on its test file."""
    from mbertlab.transfer.config import TransferConfig

    pattern, fmt = task_files(data.kind)[task]
    files = {sp: {"lang": lang, "split": sp, "path": pattern.format(lang=lang, split=sp), "format": fmt}
             for sp in ("train", "dev", "test") if has_split(data, task, lang, sp)}
    return parse_config(TransferConfig, {**keys, "task": task, "mode": mode, "seed": seed, "train": files["train"],
                                         "evaluate": [f for k, f in files.items() if k != "train"]},
                        "study key 'finetune'")


def _in_language_job(encoder: Job, data: Job, task: str, lang: str, keys: dict[str, Any], seed: int, mode: str,
                     tags) -> Job:
    config = _in_language_config(data, task, lang, keys, seed, mode)
    return Job("transfer", config, (encoder, data), label=f"{task} {mode} {dict(tags).get('encoder')} {lang} "
               f"seed {seed}", tags=tuple(tags) + (("task", task),))


def _data_jobs(s: Wd2020Settings, spec: StudySpec) -> tuple[Job, Job]:
    from mbertlab.studies import stages

    if s.data.kind == "files":
        return stages.files_jobs(s.data, s.languages[0].name, Path(spec.source).parent)
    sentences = {"train": max(l.sentences for l in s.languages)}
    languages = [{"name": l.name, "sample_seed": i + 1, **l.generate} for i, l in enumerate(s.languages)]
    overrides = deep_merge({"sentences": sentences}, s.data.set)
    generated = stages.generate_job(s.data.preset, s.data.seed, {**overrides, "languages": languages})
    budgets = {l.name: l.sentences for l in s.languages}
    return stages.budget_job(generated, budgets, False, (), label="budgets"), generated


def _sizes_job(s: Wd2020Settings, text: Job, data: Job) -> Job:
    from mbertlab.corpus.stats import SizesConfig

    stored = task_files(data.kind)
    langs = []
    for lang in s.languages:
        tasks = [{"task": t, "path": stored[t][0].format(lang=lang.name, split="train"),
                  "cap": _finetune(s, lang).get("max_train_sentences"), "format": stored[t][1]}
                 for t in s.tasks if has_task(data, t, lang.name)]
        langs.append({"name": lang.name, "tasks": tasks})
    return Job("wd2020_sizes", SizesConfig(languages=langs), (text, data), label="sizes (WikiSize)")


def _encoders(s: Wd2020Settings):
    """(encoder kind, variant, pretraining languages, languages scored in-language, tags) per encoder."""
    base = s.variants[0]
    if "multilingual" in s.encoders:
        yield "multilingual", base, [l.name for l in s.languages], s.languages, _tags("multilingual", base)
    mono = low_languages(s) if s.monolingual_for == "low" else s.languages
    for variant in s.variants:
        if "monolingual" in s.encoders:
            for lang in mono:
                if variant is base or (lang.resource == "low" and "monolingual" in variant.encoders):
                    yield "monolingual", variant, [lang.name], [lang], _tags("monolingual", variant)
        if "bilingual" in s.encoders and (variant is base or "bilingual" in variant.encoders):
            for lang in low_languages(s):
                if lang.related:
                    yield ("bilingual", variant, [lang.name, lang.related], [lang],
                           _tags("bilingual", variant) + (("paired_with", lang.related),))


def _tags(encoder: str, variant: Variant) -> tuple[tuple[str, str], ...]:
    return (("encoder", encoder), ("variant", variant.name))


def _tokenizer(s: Wd2020Settings, variant: Variant, langs: list[str], encoder: str) -> dict[str, Any]:
    """mBERT's vocabulary is learned from each language's text in proportion (it is not balanced); a pair's
    too, unless `pair_vocabulary: balanced` (the tokenizer's default: the smaller language's count of each)."""
    keys = deep_merge(s.tokenizer, variant.tokenizer)
    balanced = encoder == "bilingual" and s.pair_vocabulary == "balanced"
    if len(langs) > 1 and "sentences_per_language" not in keys and not balanced:
        keys["sentences_per_language"] = max(l.sentences or 0 for l in s.languages) or None
    return keys


def _pretrain(s: Wd2020Settings, variant: Variant, encoder: str) -> dict[str, Any]:
    keys = deep_merge(s.pretrain, variant.pretrain)
    if encoder == "multilingual":
        keys = deep_merge(keys, s.multilingual_pretrain)
        keys.setdefault("alpha", s.alpha)
    if s.curve is not None or _selects_checkpoints(s, encoder):  # keep every save (Fig. 4, best of checkpoints)
        every = keys.get("checkpoint_every", 500)
        keys["keep_checkpoints"] = max(keys.get("keep_checkpoints", 2), -(-keys.get("steps", 1000) // every))
    return keys


def _finetune(s: Wd2020Settings, lang: Language) -> dict[str, Any]:
    keys = {**s.finetune, **({"max_train_sentences": lang.task_sentences} if lang.task_sentences else {})}
    largest = max((l.task_sentences or 0) for l in s.languages)
    if s.equal_steps and lang.task_sentences and largest > lang.task_sentences and "steps" not in keys:
        epochs, scale = keys.get("epochs", 2.0), largest / lang.task_sentences
        keys["epochs"] = [e * scale for e in epochs] if isinstance(epochs, list) else epochs * scale
    return keys


def checkpoint_steps(settings: dict[str, Any]) -> list[int]:
    steps, every = settings.get("steps", 1000), settings.get("checkpoint_every", 500)
    return sorted({*range(every, steps + 1, every), steps})


def _curve_jobs(s: Wd2020Settings, model: Job, data: Job, lang: Language, settings, seed: int, tags) -> list[Job]:
    from mbertlab.transfer.checkpoint import CheckpointTransferConfig

    transfer = _in_language_config(data, s.curve.task, lang.name, _finetune(s, lang), seed, "finetune")
    return [Job("wd2020_checkpoint", CheckpointTransferConfig(step=step, transfer=transfer), (model, data),
                label=f"{s.curve.task} checkpoint {step} {dict(tags).get('encoder')} {lang.name}",
                tags=tags + (("checkpoint", str(step)), ("step", str(step)), ("task", s.curve.task)))
            for step in checkpoint_steps(settings)]


def _regression_jobs(s: Wd2020Settings, sizes: Job, transfers: list[Job]) -> list[Job]:
    from mbertlab.analysis.regress import RegressConfig
    from mbertlab.transfer.task_table import get_task

    jobs = []
    for task in s.tasks:
        scored = [j for j in transfers if j.tag("task") == task]
        if scored:
            r = s.regression
            config = RegressConfig(task=task, metric=get_task(task).reported(repair=True), factors=r.factors,
                                   multivariate=r.multivariate, nested=r.nested, alpha=r.alpha)
            jobs.append(Job("wd2020_regress", config, (sizes, *scored), label=f"regression {task}",
                            tags=(("task", task), ("encoder", s.regression.encoder))))
    return jobs


def _vocab_config(text: Job):
    from mbertlab.analysis.vocab import VocabCurveConfig
    from mbertlab.store.layout import TEXT_FILES

    return VocabCurveConfig(text_files=TEXT_FILES[text.kind])

