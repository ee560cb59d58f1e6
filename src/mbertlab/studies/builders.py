"""The builders of the built-in stage kinds: thin adapters from a job's config and input artifacts to the
library function that computes the stage, through `ctx.store.build(stage, config, fn, inputs)` with the
inputs in the job's order, so `job_hash` predicts every artifact's directory without building anything."""
from __future__ import annotations

import re
from pathlib import Path

from mbertlab.analysis.correlate import CorrelateConfig, correlate_into
from mbertlab.analysis.overlap import OverlapConfig, overlap_into
from mbertlab.analysis.word_order import WordOrderConfig, word_order_into
from mbertlab.analysis.retrieve import RetrievalConfig, WordRetrievalConfig, retrieval_into, word_retrieval_into
from mbertlab.corpus.budget import BudgetConfig, budget_into
from mbertlab.corpus.build import CorpusConfig, build_corpus_into
from mbertlab.corpus.taskdata import TaskDataConfig, build_taskdata_into
from mbertlab.data.generate import GenerateConfig, generate_into
from mbertlab.embeddings.static import StaticStageConfig, static_into
from mbertlab.errors import ConfigError
from mbertlab.pretrain.balance import BalanceConfig, balance_into
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.store.artifacts import Artifact
from mbertlab.store.external import HfEncoderConfig, TaskFilesConfig, hf_encoder_into, task_files_into
from mbertlab.store.layout import text_path
from mbertlab.studies.jobs import RunContext
from mbertlab.tokenizers.shards import ShardsConfig
from mbertlab.tokenizers.train import TokenizerConfig
from mbertlab.transfer.config import TransferConfig

# Stages whose artifact holds an encoder in `model/` (the others a transfer job reads are data).
ENCODER_STAGES = ("pretrain", "hf_encoder", "static")
# A student names its teachers by input position, so its hash depends on theirs, never on the workdir.
TEACHER_REF = re.compile(r"^inputs\[(\d+)\]$")


def build_generate(config: GenerateConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("generate", config, lambda out: generate_into(config, Path(out)), inputs)


def build_corpus(config: CorpusConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("corpus", config, lambda out: build_corpus_into(config, Path(out)), inputs)


def build_taskdata(config: TaskDataConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("taskdata", config, lambda out: build_taskdata_into(config, Path(out)), inputs)


def build_hf_encoder(config: HfEncoderConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("hf_encoder", config, lambda out: hf_encoder_into(config, Path(out)), inputs)


def build_task_files(config: TaskFilesConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("task_files", config, lambda out: task_files_into(config, Path(out)), inputs)


def build_budget(config: BudgetConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("budget", config, lambda out: budget_into(config, inputs[0], Path(out)), inputs)


def build_tokenizer(config: TokenizerConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.tokenizers.train import train_tokenizer_into

    files = {l: text_path(inputs[0], l, "train") for l in config.languages}
    return ctx.store.build("tokenizer", config, lambda out: train_tokenizer_into(config, files, Path(out)), inputs)


def build_shards(config: ShardsConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.tokenizers.shards import write_shards_into

    tok, data = inputs  # a tokenizer artifact, or a released encoder's (its own tokenizer)
    directory = tok.path / "model" if tok.stage == "hf_encoder" else tok.path
    texts = {l: {s: text_path(data, l, s) for s in config.splits} for l in config.languages}
    return ctx.store.build("shards", config, lambda out: write_shards_into(config, directory, texts, Path(out)), inputs)


def build_pretrain(config: PretrainConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.pretrain.loop import build_pretrain

    return build_pretrain(ctx.store, config, inputs[0])  # every torchrun rank calls this


def build_transfer(config: TransferConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.transfer.run import run_transfer

    encoder = next((a for a in inputs if a.stage in ENCODER_STAGES), None)
    data = next((a for a in inputs if a.stage not in ENCODER_STAGES), None)
    return run_transfer(config, ctx.store, ctx.results, encoder=encoder, data=data, study=ctx.study)


def build_retrieval(config: RetrievalConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    encoder, data, text = inputs[0], inputs[1], inputs[-1]
    return ctx.store.build("retrieval", config, lambda out: retrieval_into(
        config, encoder, data.path, text.path, Path(out), ctx.results, ctx.study), inputs)


def build_langid(config, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.transfer.langid import run_langid_into

    encoder, text = inputs
    return ctx.store.build("langid", config, lambda out: run_langid_into(
        config, encoder.path / "model", Path(out), ctx.results, f"{encoder.stage}/{encoder.hash}", text.path,
        ctx.study), inputs)


def build_overlap(config: OverlapConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    encoder, data = inputs
    return ctx.store.build("overlap", config, lambda out: overlap_into(
        config, encoder, data.path, Path(out), ctx.results, ctx.study), inputs)


def build_word_order(config: WordOrderConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    (data,) = inputs
    return ctx.store.build("word_order", config, lambda out: word_order_into(
        config, data.path, Path(out), ctx.results, ctx.study), inputs)


def build_correlate(config: CorrelateConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    overlaps = [a.path for a in inputs if a.stage == "overlap"]
    transfers = [a.path for a in inputs if a.stage != "overlap"]
    return ctx.store.build("correlate", config, lambda out: correlate_into(
        config, overlaps, transfers, Path(out), ctx.results, ctx.study), inputs)


def build_static(config: StaticStageConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    tok, text = inputs
    return ctx.store.build("static", config, lambda out: static_into(config, tok.path, text.path, Path(out)), inputs)


def build_word_retrieval(config: WordRetrievalConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    vectors, data, text = inputs[0], inputs[1], inputs[-1]  # text: a third input where it is not in `data`
    if vectors.stage not in ENCODER_STAGES:
        raise ConfigError(f"word_retrieval reads a static, pretrain or hf_encoder artifact, got {vectors.stage!r}")
    return ctx.store.build("word_retrieval", config, lambda out: word_retrieval_into(
        config, vectors, data.path, Path(out), ctx.results, ctx.study, text.path), inputs)


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


def build_student(config: PretrainConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.pretrain.loop import pretrain_into

    run = resolved_teachers(config, inputs)
    return ctx.store.build("pretrain", config, lambda out: pretrain_into(run, inputs[0].path, Path(out)),
                           inputs, resumable=True)


def build_balance(config: BalanceConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    """Inputs: the shards, then the models, then the teachers (as `balance_job` lists them)."""
    models = 1 + len(config.models)
    return ctx.store.build("balance", config, lambda out: balance_into(
        config, inputs[0], inputs[1:models], inputs[models:], Path(out), ctx.results, ctx.study), inputs)
