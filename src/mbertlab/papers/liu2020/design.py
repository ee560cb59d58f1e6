"""Design `liu2020` (Liu, Hsu, Chuang & Lee 2020, *What makes multilingual BERT multilingual?*): a
bilingual BERT and static embeddings (word2vec skip-gram / CBOW, GloVe) trained on the same tokenised
joint corpus with the same dimension, at two data sizes (their 200k and 1000k sentences per language,
scaled by `sizes`), plus a BERT whose context window is cut to `window` tokens (their w = 20) at the
sizes in `window_sizes` (the paper cuts it at both, §2.4); each model scored on word retrieval against the
gold lexicon (MRR, P@1, MRR by part of speech) and on XNLI (and MLDoc) zero-shot with the same frozen-feature
head (BiLSTM + max-pooling). Word2vec with longer windows at the smallest size (`word2vec_windows`, Figure 4)
is scored on word retrieval only.

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
from mbertlab.studies.data import GeneratedData
from mbertlab.studies.jobs import Job
from mbertlab.studies.spec import StudySpec

STATIC_NAMES = {"word2vec_sg": "word2vec (skip-gram)", "word2vec_cbow": "word2vec (CBOW)", "glove": "GloVe"}
BERT = "BERT"


class DataSize(Config):
    name: str = Field(description="Row label, the paper's size, e.g. '200k'.")
    sentences: int = Field(ge=10, description="Training sentences per language at this scale.")


class Liu2020Settings(Config):
    data: GeneratedData = Field(default_factory=GeneratedData, description="Generated languages (gold lexicon, "
                                "UD treebank for POS classes, XNLI- and MLDoc-style sets).")
    source: str = Field("src", description="Retrieval source and the language XNLI is trained on.")
    target: str = Field("same", description="Retrieval target and zero-shot XNLI language.")
    sizes: list[DataSize] = Field(min_length=1, description="Data sizes, smallest first.")
    window: int | None = Field(20, ge=4, description="Pretraining window (tokens) of the short-context BERT; "
                               "null: no window model. Must be shorter than pretrain.seq_len.")
    window_sizes: list[str] | None = Field(None, min_length=1, description="The data sizes that get a window "
                                           "model (default: the largest only; the paper cuts both).")
    word2vec_windows: list[int] = Field(default_factory=list, description="Figure 4: word2vec (each word2vec "
                                        "method of static_methods) at the smallest size with these windows too, "
                                        "scored on word retrieval (the paper's 128 and 256).")
    seeds: list[int] = Field(default_factory=lambda: [0], min_length=1)
    tokenizer: dict[str, Any] = Field(default_factory=dict, description="Tokenizer config keys (shared by all).")
    pretrain: dict[str, Any] = Field(default_factory=dict, description="Pretraining config keys.")
    static_methods: list[Literal["word2vec_sg", "word2vec_cbow", "glove"]] = Field(
        default_factory=lambda: ["word2vec_sg", "word2vec_cbow", "glove"])
    static: dict[str, Any] = Field(default_factory=dict, description="StaticConfig keys (window, negative, epochs, "
                                   "...); `dim` is always the BERT hidden size.")
    tasks: list[Literal["xnli", "mldoc"]] = Field(default_factory=lambda: ["xnli"])
    bert_mode: Literal["feature", "finetune"] = Field("feature", description="feature: BERT as frozen features "
                                                      "under the same BiLSTM head as the static vectors.")
    finetune: dict[str, Any] = Field(default_factory=dict, description="Transfer config keys.")
    retrieval: dict[str, Any] = Field(default_factory=dict, description="word_retrieval keys (sentences, layer).")
    majority: bool = Field(True, description="A majority-label control per task.")

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
        return self


def plan(spec: StudySpec) -> list[Job]:
    from mbertlab.pretrain.config import PretrainConfig
    from mbertlab.studies import stages
    from mbertlab.studies.stages import static_job, word_retrieval_job
    from mbertlab.tokenizers.shards import ShardsConfig
    from mbertlab.tokenizers.train import TokenizerConfig

    s: Liu2020Settings = spec.settings  # type: ignore[assignment]
    pair = [s.source, s.target]
    data = {size.name: stages.generate_job(s.data.preset, s.data.seed, _with_train_size(s.data.set, size.sentences))
            for size in s.sizes}
    largest = max(s.sizes, key=lambda z: z.sentences).name
    evaluation = data[largest]
    languages = stages.data_languages(evaluation)
    missing = [l for l in pair if l not in languages]
    if missing:
        raise ConfigError(f"{spec.source}: keys 'source'/'target': unknown language(s) {', '.join(missing)} "
                          f"(data: {', '.join(languages)})")
    tok = Job("tokenizer", parse_config(TokenizerConfig, {**s.tokenizer, "languages": pair}, "study key 'tokenizer'"),
              (evaluation,), label=f"tokenizer {'+'.join(pair)}")
    full = parse_config(PretrainConfig, {**s.pretrain, "seed": 0}, "study key 'pretrain'")
    static_settings = {**s.static, "dim": full.model.hidden}
    jobs: list[Job] = []
    if s.majority:
        jobs += [stages.transfer_job(None, evaluation, task, s.source, pair, s.finetune, 0, "majority",
                                     (("method", "majority"),)) for task in s.tasks]
    for seed in s.seeds:
        models: list[tuple[Job, tuple]] = []
        for size in s.sizes:
            shards = Job("shards", ShardsConfig(languages=pair), (tok, data[size.name]), label=f"shards {size.name}")
            tags = (("size", size.name), ("window", "full"), ("seed", str(seed)))
            models.append((stages.pretrain_job(shards, s.pretrain, seed, (("method", BERT),) + tags), tags))
            for method in s.static_methods:
                job = static_job(tok, data[size.name], pair, {**static_settings, "method": method, "seed": seed},
                                 (("method", STATIC_NAMES[method]),) + tags)
                models.append((job, tags))
            if s.window is not None and size.name in windowed_sizes(s):
                models.append((_window_model(s, full, shards, seed, size.name), ()))
        for model, _ in models:
            jobs.append(word_retrieval_job(model, evaluation, s.source, s.target, s.retrieval, model.tags))
            mode = s.bert_mode if model.kind == "pretrain" else "feature"
            jobs += [stages.transfer_job(model, evaluation, task, s.source, pair, s.finetune, seed, mode, model.tags)
                     for task in s.tasks]
        smallest = min(s.sizes, key=lambda z: z.sentences).name
        jobs += _word2vec_window_jobs(s, tok, data[smallest], evaluation, static_settings, smallest, seed)
    return jobs


def _word2vec_window_jobs(s: Liu2020Settings, tok: Job, text: Job, evaluation: Job, static_settings: dict,
                          size: str, seed: int) -> list[Job]:
    """Figure 4: word2vec with each of `word2vec_windows` on the small data, scored on word retrieval."""
    from mbertlab.studies.stages import static_job, word_retrieval_job

    jobs = []
    for method, window in word2vec_grid(s):
        tags = (("method", STATIC_NAMES[method]), ("size", size), ("window", str(window)), ("seed", str(seed)))
        vectors = static_job(tok, text, [s.source, s.target],
                             {**static_settings, "method": method, "seed": seed, "window": window}, tags)
        jobs.append(word_retrieval_job(vectors, evaluation, s.source, s.target, s.retrieval, tags))
    return jobs


def word2vec_grid(s: Liu2020Settings) -> list[tuple[str, int]]:
    """(word2vec method, window) of Figure 4's models."""
    return [(m, w) for m in s.static_methods if m.startswith("word2vec") for w in s.word2vec_windows]


def windowed_sizes(s: Liu2020Settings) -> list[str]:
    """The data sizes with a short-window BERT, smallest first (default: the largest size)."""
    names = [z.name for z in s.sizes]
    largest = max(s.sizes, key=lambda z: z.sentences).name
    return [n for n in names if n in (s.window_sizes or [largest])]


def _with_train_size(overrides: dict[str, Any], sentences: int) -> dict[str, Any]:
    from mbertlab.config import deep_merge

    return deep_merge(overrides, {"sentences": {"train": sentences}})


def _window_model(s: Liu2020Settings, full, shards: Job, seed: int, size: str) -> Job:
    """The same pretraining with windows of `s.window` tokens and as many tokens per step."""
    from mbertlab.studies import stages

    if s.window >= full.seq_len:
        raise ConfigError(f"window {s.window} must be shorter than pretrain.seq_len {full.seq_len} (the full context)")
    batch = max(1, round(full.batch_size * full.seq_len / s.window))
    settings = {**s.pretrain, "seq_len": s.window, "batch_size": batch}
    tags = (("method", BERT), ("size", size), ("window", "short"), ("seed", str(seed)))
    return stages.pretrain_job(shards, settings, seed, tags)

