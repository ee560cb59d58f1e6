"""The language-ID probe as a stage: sentences of several languages, accuracy at every layer, rows."""
from __future__ import annotations

import json
import random
from itertools import islice
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config, LanguageName, Precision, Seed, device_field, precision_field
from mbertlab.runtime import record_runtime, resolve_device, resolve_precision, seed_everything, setup_torch
from mbertlab.store.artifacts import final_path
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.transfer.adapter import resolve


class LangFile(Config):
    lang: LanguageName
    path: str = Field(description="Plain text, one sentence per line.")


class LangIdConfig(Config):
    files: list[LangFile] = Field(min_length=2)
    sentences: int = Field(1000, ge=10, description="Sentences per language (the first ones of each file).")
    test_share: float = Field(0.3, gt=0.0, lt=1.0)
    max_length: int = 128
    random_init: bool = False
    seed: Seed = 0
    precision: Precision = precision_field()
    device: str = device_field()


def read_language_sentences(config: LangIdConfig, root: Path | None) -> tuple[list[str], list[int]]:
    from mbertlab.formats.text import read_lines

    texts, labels = [], []
    for label, file in enumerate(config.files):
        lines = [line for line in islice(read_lines(resolve(file.path, root)), config.sentences) if line.strip()]
        texts += lines
        labels += [label] * len(lines)
    return texts, labels


def run_langid_into(config: LangIdConfig, encoder_dir: Path, out: Path, results: ResultsDB, model_name: str,
                    data_root: Path | None = None, study: str = "") -> list[float]:
    import torch

    from mbertlab.tasks.langid import accuracy_by_layer, layer_means
    from mbertlab.transfer.encoder import load_encoder

    setup_torch()
    seed_everything(config.seed)
    texts, labels = read_language_sentences(config, data_root)
    device = resolve_device(config.device)
    tokenizer, encoder = load_encoder(encoder_dir, config.random_init, config.seed, device)
    # [layers, n, H] on the device
    features = layer_means(encoder, tokenizer, texts, config.max_length, precision=config.precision)
    order = list(range(len(texts)))
    random.Random(config.seed).shuffle(order)
    cut = int(len(order) * (1 - config.test_share))
    train, test = torch.tensor(order[:cut]).to(device), torch.tensor(order[cut:]).to(device)
    y = torch.tensor(labels).to(device)
    scores = accuracy_by_layer(features[:, train], y[train], features[:, test], y[test], len(config.files))
    langs = "+".join(f.lang for f in config.files)
    (out / "scores.json").write_text(json.dumps({"accuracy_by_layer": scores}, indent=1) + "\n", encoding="utf-8")
    record_runtime(out, device, resolve_precision(config.precision, device))
    rows = [ResultRow(metric="accuracy", value=s, study=study, model=model_name, task="langid",
                      mode="random_init" if config.random_init else "probe", train_lang=langs, test_lang=langs,
                      split="test", seed=config.seed, config_hash=final_path(out).name,
                      artifact=str(final_path(out)), extra={"layer": layer})
            for layer, s in enumerate(scores)]
    results.add(rows, replace_artifact=str(final_path(out)))
    return scores
