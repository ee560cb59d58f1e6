"""Design `liu2020` (Liu, Hsu, Chuang & Lee 2020, *What makes multilingual BERT multilingual?*): a
bilingual BERT and static embeddings (word2vec skip-gram / CBOW, GloVe) trained on the same tokenised
joint corpus with the same dimension, at two data sizes (their 200k and 1000k sentences per language,
scaled by `sizes`), plus a BERT whose context window is cut to `window` tokens (their w = 20) at the
sizes in `window_sizes` (the paper cuts it at both, §2.4); each model scored on word retrieval against the
gold lexicon (MRR, P@1, MRR by part of speech) and on XNLI (and MLDoc) zero-shot with the same frozen-feature
head (BiLSTM + max-pooling). Word2vec with longer windows at the smallest size (`word2vec_windows`, Figure 4)
is scored on word retrieval only.

Real text (`data.kind: files`, `studies/liu2020-real.yaml`): every size caps each language's text, the
lexicons are MUSE dictionaries, and pretraining is joint over the source and every target (`targets`). With
`encoder:` a released encoder (a Hugging Face directory) is scored beside the models as a reference row.

Controls built in: one tokenizer (learned on the largest size's text) for every model, so only the
amount of data varies; XNLI, lexicon, retrieval text and treebank come from the largest size's data
(the generator makes them identical across sizes); the window model sees as many tokens per step as
the full one (its batch is scaled up by full / window).
"""
from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from mbertlab.config import Config, parse_config
from mbertlab.errors import ConfigError
from mbertlab.store.layout import TEXT_FILES, task_files
from mbertlab.studies.data import GeneratedData, StudyData
from mbertlab.studies.jobs import Job
from mbertlab.transfer.task_table import tasks_among
from mbertlab.studies.spec import StudySpec

ZeroShotTask = tasks_among("xnli", "mldoc")  # the tasks this design runs, rows of the task table

STATIC_NAMES = {"word2vec_sg": "word2vec (skip-gram)", "word2vec_cbow": "word2vec (CBOW)", "glove": "GloVe"}
BERT = "BERT"
RELEASED = "released encoder"


class DataSize(Config):
    name: str = Field(description="Row label, the paper's size, e.g. '200k'.")
    sentences: int = Field(ge=10, description="Training sentences per language at this scale.")
    steps: int | None = Field(None, ge=1, description="Pretraining steps of this size's BERTs (default: "
                              "pretrain.steps). Steps in proportion to the sentences give every size the same "
                              "number of epochs, so the larger size also trains longer, as in the paper.")


class Liu2020Settings(Config):
    data: StudyData = Field(default_factory=GeneratedData, description="Generated languages (gold "
                                            "lexicon, UD treebank for POS classes, XNLI- and MLDoc-style sets) or "
                                            "real text with MUSE dictionaries (kind: files; `sizes` cap each "
                                            "language's text).")
    source: str = Field("src", description="Retrieval source and the language XNLI is trained on.")
    targets: list[str] = Field(default_factory=lambda: ["same"], min_length=1, description="Retrieval targets and "
                               "zero-shot languages; pretraining is joint over the source and every target (the "
                               "paper: 15 languages, English paired with each of the 14 others).")
    sizes: list[DataSize] = Field(min_length=1, description="Data sizes, smallest first.")
    window: int | None = Field(20, ge=4, description="Pretraining window (tokens) of the short-context BERT; "
                               "null: no window model. Must be shorter than pretrain.seq_len.")
    window_sizes: list[str] | None = Field(None, min_length=1, description="The data sizes that get a window "
                                           "model (default: the largest only; the paper cuts both).")
    word2vec_windows: list[int] = Field(default_factory=list, description="Figure 4: word2vec (each word2vec "
                                        "method of static_methods) at the smallest size with these windows too, "
                                        "scored on word retrieval (the paper's 128 and 256).")
    encoder: str | None = Field(None, description="A released encoder (a Hugging Face directory, e.g. mBERT) scored "
                                "beside the models trained here as a reference row, with its own tokenizer.")
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="Tokenizer config keys (shared by all).")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining config keys.")
    static_methods: list[Literal["word2vec_sg", "word2vec_cbow", "glove"]] = Field(
        default_factory=lambda: ["word2vec_sg", "word2vec_cbow", "glove"])
    static: dict[str, Any] = Field(default_factory=dict, description="StaticConfig keys (window, negative, epochs, "
                                   "...); `dim` is always the BERT hidden size.")
    tasks: list[ZeroShotTask] = Field(default_factory=lambda: ["xnli"], description="Zero-shot tasks "
                                                  "(generated data only; [] with real data).")
    bert_mode: Literal["feature", "finetune"] = Field("feature", description="feature: BERT as frozen features "
                                                      "under the same BiLSTM head as the static vectors.")
    finetune: dict[str, Any] = Field(default_factory=dict, description="Transfer config keys.")
    retrieval: dict[str, Any] = Field(default_factory=dict, description="word_retrieval keys (sentences, layer).")
    majority: bool = Field(True, description="A majority-label control per task.")
    retrieval_only: list[dict[Literal["method", "size", "window"], str]] = Field(
        default_factory=list, description="Models scored on word retrieval only: a model whose row tags match every "
        "key of one entry (e.g. {method: word2vec (CBOW)}, {size: 200k, window: short}) gets no zero-shot task. "
        "The lab's budget: the models no zero-shot claim reads.")

    @model_validator(mode="after")
    def _check(self):
        names = [s.name for s in self.sizes]
        if len(set(names)) != len(names):
            raise ValueError(f"sizes: duplicate names {names}")
        unknown = [w for w in self.window_sizes or [] if w not in names]
        if unknown:
            raise ValueError(f"window_sizes {unknown} are not among the sizes {names}")
        if "dim" in self.static:
            raise ValueError("static.dim: leave it out, it is the BERT hidden size (pretrain.model.hidden)")
        if self.source in self.targets or len(set(self.targets)) != len(self.targets):
            raise ValueError(f"targets: each once, none the source {self.source!r}; got {self.targets}")
        allowed = {"method": {BERT, *STATIC_NAMES.values()}, "size": set(names), "window": {"full", "short"}}
        for entry in self.retrieval_only:
            bad = {k: v for k, v in entry.items() if v not in allowed[k]}
            if not entry or bad:
                raise ValueError(f"retrieval_only: {entry} names no model; each key one of "
                                 + "; ".join(f"{k}: {sorted(v)}" for k, v in allowed.items()))
        if self.data.kind == "files" and self.tasks:
            raise ValueError("tasks: real data (data.kind: files) has word retrieval only; the shared data has no "
                             "English NLI training set and XTREME's XNLI dev sets translate one another. Set tasks: []")
        return self


def plan(spec: StudySpec) -> list[Job]:
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.studies import stages
    from mbertlab.studies.stages import static_job, word_retrieval_job
    from mbertlab.tokenizers.shards import ShardsConfig
    from mbertlab.tokenizers.train import TokenizerConfig

    s: Liu2020Settings = spec.settings  # type: ignore[assignment]
    langs = [s.source, *s.targets]
    text, evaluation = _data_jobs(s, spec)
    largest = max(s.sizes, key=lambda z: z.sentences).name
    retrieval_text = None if s.data.kind == "generated" else text[largest]
    _check_languages(s, spec, text[largest])
    retrieval = _retrieval_settings(s)
    tok = Job("tokenizer", parse_config(TokenizerConfig, {**s.tokenizer, "languages": langs}, "study key 'tokenizer'"),
              (text[largest],), label=f"tokenizer {'+'.join(langs)}")
    full = parse_config(PretrainConfig, {**s.pretrain, "seed": 0}, "study key 'pretrain'")
    static_settings = {**s.static, "dim": full.model.hidden}
    text_files = None if s.data.kind == "generated" else TEXT_FILES["corpus"]
    jobs: list[Job] = []
    if s.majority:
        jobs += [stages.transfer_job(None, evaluation, task, s.source, langs, s.finetune, 0, "majority",
                                     (("method", "majority"),)) for task in s.tasks]
    for seed in s.seeds:
        models: list[tuple[Job, tuple]] = []  # (model, the tags of its rows)
        for size in s.sizes:
            shards = Job("shards", ShardsConfig(languages=langs), (tok, text[size.name]), label=f"shards {size.name}")
            tags = (("size", size.name), ("window", "full"), ("seed", str(seed)))
            bert = _pretrain_settings(s, size)
            models.append((stages.pretrain_job(shards, bert, seed, (("method", BERT),) + tags), ()))
            for method in s.static_methods:
                models.append((static_job(tok, text[size.name], langs,
                                          {**static_settings, "method": method, "seed": seed},
                                          (("method", STATIC_NAMES[method]),) + tags, text_files=text_files), ()))
            if s.window is not None and size.name in windowed_sizes(s):
                models.append((_window_model(s, bert, full, shards, seed, size.name), ()))
        if s.encoder:  # one artifact for every seed: the seed is the task head's
            models.append((stages.hf_encoder_job(s.encoder, "encoder"), (("method", RELEASED), ("seed", str(seed)))))
        for model, own in models:
            tags = own or model.tags
            if model.kind != "hf_encoder" or seed == s.seeds[0]:  # a released encoder's retrieval has no seed
                jobs += [word_retrieval_job(model, evaluation, s.source, t, retrieval, tags, retrieval_text)
                         for t in s.targets]
            mode = s.bert_mode if model.kind in ("pretrain", "hf_encoder") else "feature"
            jobs += [stages.transfer_job(model, evaluation, task, s.source, langs, s.finetune, seed, mode, tags)
                     for task in s.tasks if zero_shot(s, dict(tags))]
        smallest = min(s.sizes, key=lambda z: z.sentences).name
        jobs += _word2vec_window_jobs(s, tok, text[smallest], evaluation, static_settings, smallest, seed,
                                      retrieval, retrieval_text)
    return jobs


def _check_languages(s: Liu2020Settings, spec: StudySpec, text: Job) -> None:
    from mbertlab.studies import stages

    languages = stages.data_languages(text) if s.data.kind == "generated" else list(s.data.languages)
    missing = [l for l in [s.source, *s.targets] if l not in languages]
    if missing:
        raise ConfigError(f"{spec.source}: keys 'source'/'targets': unknown language(s) {', '.join(missing)} "
                          f"(data: {', '.join(languages)})")


def _data_jobs(s: Liu2020Settings, spec: StudySpec) -> tuple[dict[str, Job], Job]:
    """(each size's text job, the evaluation data job). Generated: one generation per size, evaluated on the
    largest (the generator makes XNLI, lexicon and treebank identical across sizes). Real: one corpus job per
    size (each language's text cut to the size) and one taskdata job (MUSE lexicons, treebank)."""
    from pathlib import Path

    from mbertlab.studies import stages

    if s.data.kind == "generated":
        text = {z.name: stages.generate_job(s.data.preset, s.data.seed, _with_train_size(s.data.set, z.sentences))
                for z in s.sizes}
        return text, text[max(s.sizes, key=lambda z: z.sentences).name]
    text, taskdata = {}, None
    for z in s.sizes:
        capped = s.data.model_copy(update={"languages": {
            name: lang.model_copy(update={"max_sentences": z.sentences}) for name, lang in s.data.languages.items()}})
        text[z.name], taskdata = stages.files_jobs(capped, s.source, Path(spec.source).parent)
    return text, taskdata


def _retrieval_settings(s: Liu2020Settings) -> dict[str, Any]:
    """Real data: POS classes from the source's UPOS training file where the spec gives one (none otherwise)."""
    if s.data.kind == "generated" or "treebank" in s.retrieval:
        return s.retrieval
    has_train = "train" in s.data.languages[s.source].tasks.get("upos", {}) if s.source in s.data.languages else False
    pattern = task_files("taskdata")["upos"][0]
    return {**s.retrieval, "treebank": pattern.replace("{split}", "train") if has_train else None}


def _word2vec_window_jobs(s: Liu2020Settings, tok: Job, text: Job, evaluation: Job, static_settings: dict,
                          size: str, seed: int, retrieval: dict, retrieval_text: Job | None) -> list[Job]:
    """Figure 4: word2vec with each of `word2vec_windows` on the small data, scored on word retrieval."""
    from mbertlab.studies.stages import static_job, word_retrieval_job

    text_files = None if s.data.kind == "generated" else TEXT_FILES["corpus"]
    jobs = []
    for method, window in word2vec_grid(s):
        tags = (("method", STATIC_NAMES[method]), ("size", size), ("window", str(window)), ("seed", str(seed)))
        vectors = static_job(tok, text, [s.source, *s.targets],
                             {**static_settings, "method": method, "seed": seed, "window": window}, tags,
                             text_files=text_files)
        jobs += [word_retrieval_job(vectors, evaluation, s.source, t, retrieval, tags, retrieval_text)
                 for t in s.targets]
    return jobs


def word2vec_grid(s: Liu2020Settings) -> list[tuple[str, int]]:
    """(word2vec method, window) of Figure 4's models."""
    return [(m, w) for m in s.static_methods if m.startswith("word2vec") for w in s.word2vec_windows]


def zero_shot(s: Liu2020Settings, tags: dict[str, str]) -> bool:
    """Whether the model of these row tags gets the zero-shot tasks (no `retrieval_only` entry matches it)."""
    return not any(all(tags.get(k) == v for k, v in entry.items()) for entry in s.retrieval_only)


def windowed_sizes(s: Liu2020Settings) -> list[str]:
    """The data sizes with a short-window BERT, smallest first (default: the largest size)."""
    names = [z.name for z in s.sizes]
    largest = max(s.sizes, key=lambda z: z.sentences).name
    return [n for n in names if n in (s.window_sizes or [largest])]


def _with_train_size(overrides: dict[str, Any], sentences: int) -> dict[str, Any]:
    from mbertlab.config import deep_merge

    return deep_merge(overrides, {"sentences": {"train": sentences}})


def _pretrain_settings(s: Liu2020Settings, size: DataSize) -> dict[str, Any]:
    """The pretraining keys of a size's BERTs: its own steps where it sets them."""
    return s.pretrain if size.steps is None else {**s.pretrain, "steps": size.steps}


def _window_model(s: Liu2020Settings, bert: dict[str, Any], full, shards: Job, seed: int, size: str) -> Job:
    """The size's pretraining (`bert`) with windows of `s.window` tokens and as many tokens per step."""
    from mbertlab.studies import stages

    if s.window >= full.seq_len:
        raise ConfigError(f"window {s.window} must be shorter than pretrain.seq_len {full.seq_len} (the full context)")
    batch = max(1, round(full.batch_size * full.seq_len / s.window))
    settings = {**bert, "seq_len": s.window, "batch_size": batch}
    tags = (("method", BERT), ("size", size), ("window", "short"), ("seed", str(seed)))
    return stages.pretrain_job(shards, settings, seed, tags)

