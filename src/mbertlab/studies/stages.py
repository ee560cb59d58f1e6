"""Stage kinds the built-in designs use: thin adapters from jobs to the library's stage functions.

Each adapter builds through `ctx.store.build(stage, config, builder, inputs)` with the job's inputs in
order, so `job_hash` predicts every artifact's directory without building anything.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from mbertlab.config import Config, parse_config
from mbertlab.data.generate import GenerateConfig, generate_into, preset_config
from mbertlab.data.generate.build import ordered_languages
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.store.artifacts import Artifact
from mbertlab.studies.jobs import STAGE_KINDS, Job, RunContext, StageKind
from mbertlab.tokenizers.shards import ShardsConfig
from mbertlab.tokenizers.train import TokenizerConfig
from mbertlab.transfer.config import TransferConfig

TASK_FILES = {"upos": ("ud/{split}.conllu", "conllu"), "ner": ("ner/{split}.txt", "ner")}


class RetrievalConfig(Config):
    source: str
    target: str
    lexicon: str = Field(description="Dictionary path relative to the data artifact.")
    random_init: bool = False
    seed: int = 0
    layer: int | None = Field(None, description="Hidden-state index; default the last layer.")
    sentences: int = Field(5000, description="Sentences of each language's dev+train text streamed.")


# ---- jobs -------------------------------------------------------------------------------------

def generate_job(preset: str, seed: int, overrides: dict[str, Any]) -> Job:
    return Job("generate", preset_config(preset, seed, overrides), label=f"generate {preset}")


def generated_languages(job: Job) -> list[str]:
    return [lang.name for lang in ordered_languages(job.config)]


def shards_job(generated: Job, languages: list[str], tokenizer: dict[str, Any], tags) -> Job:
    tok_config = parse_config(TokenizerConfig, {**tokenizer, "languages": languages}, "study key 'tokenizer'")
    tok = Job("tokenizer", tok_config, (generated,), label=f"tokenizer {'+'.join(languages)}", tags=tags)
    return Job("shards", ShardsConfig(languages=languages), (tok, generated), label=f"shards {'+'.join(languages)}",
               tags=tags)


def pretrain_job(shards: Job, settings: dict[str, Any], seed: int, tags) -> Job:
    config = parse_config(PretrainConfig, {**settings, "seed": seed}, "study key 'pretrain'")
    return Job("pretrain", config, (shards,), label=f"pretrain {dict(tags).get('condition', '')} seed {seed}",
               tags=tags)


def transfer_job(encoder: Job | None, generated: Job, task: str, source: str, languages: list[str],
                 settings: dict[str, Any], seed: int, mode: str, tags) -> Job:
    pattern, fmt = TASK_FILES[task]
    data = {**settings, "task": task, "mode": mode, "seed": seed,
            "train": {"lang": source, "split": "train", "path": f"{source}/{pattern.format(split='train')}",
                      "format": fmt},
            "evaluate": [{"lang": l, "split": "test", "path": f"{l}/{pattern.format(split='test')}", "format": fmt}
                         for l in languages]}
    config = parse_config(TransferConfig, data, "study key 'finetune'")
    inputs = (encoder, generated) if encoder is not None else (generated,)
    label = f"{task} {mode} {dict(tags).get('condition', '')} seed {seed}"
    return Job("transfer", config, inputs, label=label, tags=tuple(tags) + (("task", task),))


def retrieval_job(encoder: Job, generated: Job, source: str, target: str, seed: int, random_init: bool,
                  tags) -> Job:
    config = RetrievalConfig(source=source, target=target, lexicon=f"lexicon/{source}-{target}.txt",
                             random_init=random_init, seed=seed)
    return Job("retrieval", config, (encoder, generated), label=f"retrieval {target} seed {seed}", tags=tags)


# ---- builders ---------------------------------------------------------------------------------

def _build_generate(config: GenerateConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    return ctx.store.build("generate", config, lambda out: generate_into(config, Path(out)), inputs)


def _build_tokenizer(config: TokenizerConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.tokenizers.train import train_tokenizer_into

    files = {l: inputs[0].path / l / "text" / "train.txt" for l in config.languages}
    return ctx.store.build("tokenizer", config, lambda out: train_tokenizer_into(config, files, Path(out)), inputs)


def _build_shards(config: ShardsConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.tokenizers.shards import write_shards_into

    tok, data = inputs
    texts = {l: {s: data.path / l / "text" / f"{s}.txt" for s in config.splits} for l in config.languages}
    return ctx.store.build("shards", config, lambda out: write_shards_into(config, tok.path, texts, Path(out)), inputs)


def _build_pretrain(config: PretrainConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.pretrain.loop import pretrain_into

    return ctx.store.build("pretrain", config, lambda out: pretrain_into(config, inputs[0].path, Path(out)),
                           inputs, resumable=True)


def _build_transfer(config: TransferConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.transfer.run import run_transfer

    encoder, data = (inputs[0], inputs[1]) if len(inputs) == 2 else (None, inputs[0])
    return run_transfer(config, ctx.store, ctx.results, encoder=encoder, data=data, study=ctx.study)


def _build_retrieval(config: RetrievalConfig, inputs: list[Artifact], ctx: RunContext) -> Artifact:
    from mbertlab.studies.retrieval_stage import retrieval_into

    encoder, data = inputs
    return ctx.store.build("retrieval", config,
                           lambda out: retrieval_into(config, encoder, data.path, Path(out), ctx.results, ctx.study),
                           inputs)


for _name, _fn, _weight in (("generate", _build_generate, 1), ("tokenizer", _build_tokenizer, 0.2),
                            ("shards", _build_shards, 0.2), ("pretrain", _build_pretrain, 20),
                            ("transfer", _build_transfer, 1.5), ("retrieval", _build_retrieval, 0.5)):
    STAGE_KINDS.register(_name)(StageKind(_name, _fn, _weight))
