"""Single-file evaluation: a saved fine-tuned model (`mbertlab finetune`) on any file, and re-scoring of any
prediction file against gold with the same code that scores runs (`mbertlab score`)."""
from __future__ import annotations

import json
from pathlib import Path

from mbertlab.errors import ArtifactError, DataError
from mbertlab.transfer.adapter import TaskAdapter, TaskModel, adapter_for, read_records
from mbertlab.transfer.config import DataFile, TransferConfig


def score_files(task: str, gold: DataFile, pred: DataFile) -> dict[str, float]:
    """Metrics of a prediction file; both files must hold the same examples (and words) in the same order."""
    adapter = adapter_for(task)
    g = read_records(adapter, gold, None, None)
    p = list(adapter.read_predictions(pred, None))
    if len(g) != len(p):
        raise DataError(pred.path, None, f"expected {len(g)} examples as in {gold.path}, found {len(p)}")
    for a, b in zip(g, p):
        if adapter.words(a) != adapter.words(b):
            raise DataError(pred.path, getattr(b, "line", None), f"expected the words of {gold.path}:{a.line}")
    return adapter.metrics(g, [adapter.as_prediction(r) for r in p])


def load_finetuned(run_dir: Path, device: str = "auto") -> tuple[TransferConfig, TaskAdapter, TaskModel, object]:
    """Rebuild the selected model of a transfer artifact built with `save_model: true`, on `device` (a setting)."""
    import torch
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    from mbertlab.runtime import attention_for, resolve_device
    from mbertlab.transfer.encoder import Features

    folder = run_dir / "model"
    if not (folder / "weights.pt").is_file():
        raise ArtifactError(f"{run_dir}: no saved model (run `mbertlab finetune`, or set save_model: true)")
    config = TransferConfig.model_validate_json((run_dir / "config.json").read_text(encoding="utf-8"))
    adapter = adapter_for(config.task, config)
    adapter.load_label_state(json.loads((folder / "labels.json").read_text(encoding="utf-8")))
    tokenizer = AutoTokenizer.from_pretrained(str(folder / "tokenizer"))
    on = resolve_device(device)
    encoder = AutoModel.from_config(AutoConfig.from_pretrained(str(folder / "encoder")),
                                    attn_implementation=attention_for(on), add_pooling_layer=False)
    features = Features(encoder, config.mode, config.probe_layer, config.freeze_layers, config.precision)
    model = TaskModel(features, adapter.head(features.n_out))
    model.load_state_dict(torch.load(folder / "weights.pt", weights_only=True, map_location="cpu"))
    return config, adapter, model.to(on), tokenizer


def evaluate_file(run_dir: Path, file: DataFile, out_dir: Path, device: str = "auto") -> tuple[dict[str, float], Path]:
    """Predict one file with a saved model on `device`, write the predictions in the file's format, return the
    metrics."""
    _, adapter, model, tokenizer = load_finetuned(run_dir, device)
    records = read_records(adapter, file, None, None)
    preds = adapter.predict(model, adapter.encode(tokenizer, records, training=False), records,
                            tokenizer.pad_token_id)
    out_dir.mkdir(parents=True, exist_ok=True)
    return adapter.metrics(records, preds), adapter.write(file, records, preds, out_dir, None)
