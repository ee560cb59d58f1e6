"""Fine-tune a tagger (UPOS or NER) on one language and evaluate it on others (zero-shot)."""
from __future__ import annotations

import contextlib
import logging
from collections import Counter
from pathlib import Path

import numpy as np
import torch

from mbertlab.errors import ConfigError
from mbertlab.formats.records import TaggedSentence
from mbertlab.tasks.ner import ner_metrics
from mbertlab.tasks.tagging import IGNORE, Tagger, Window, collate, decode, windows_for
from mbertlab.tasks.upos import upos_metrics
from mbertlab.transfer.config import DataFile, TransferConfig

log = logging.getLogger("mbertlab")


def load_tagged(file: DataFile, task: str, limit: int | None, root: Path | None = None) -> list[TaggedSentence]:
    """The sentences of a data file; a relative path resolves against `root` when given."""
    from itertools import islice

    from mbertlab.formats.conllu import read_conllu
    from mbertlab.formats.ner_columns import read_ner
    from mbertlab.formats.udpos import read_udpos_tsv

    path = Path(file.path) if root is None or Path(file.path).is_absolute() else root / file.path
    if file.format == "conllu":
        if task != "upos":
            raise ConfigError(f"{path}: a CoNLL-U file carries UPOS, not NER tags")
        sents = (TaggedSentence(s.forms, s.upos, line=s.line) for s in read_conllu(path, v1_to_v2=True))
    elif file.format == "udpos":
        sents = read_udpos_tsv(path)
    else:
        sents = read_ner(path)
    return list(islice(sents, limit))


def metrics_for(task: str, gold: list[list[str]], pred: list[list[str]]) -> dict[str, float]:
    return upos_metrics(gold, pred) if task == "upos" else ner_metrics(gold, pred)


def majority_predictions(train: list[TaggedSentence], sentences: list[TaggedSentence]) -> list[list[str]]:
    tag = Counter(t for s in train for t in s.tags).most_common(1)[0][0]
    return [[tag] * len(s.tokens) for s in sentences]


def load_encoder(encoder_dir: Path, random_init: bool, seed: int):
    from transformers import AutoConfig, AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(encoder_dir))
    if random_init:
        torch.manual_seed(seed)
        encoder = AutoModel.from_config(AutoConfig.from_pretrained(str(encoder_dir)), attn_implementation="eager")
    else:
        encoder = AutoModel.from_pretrained(str(encoder_dir), attn_implementation="eager", add_pooling_layer=False)
    return tokenizer, encoder


def tagged_windows(tokenizer, sentences: list[TaggedSentence], label_index: dict[str, int],
                   max_length: int) -> list[Window]:
    """Windows of every sentence, with label ids on first subwords (unknown tags ignored)."""
    out = []
    for i, s in enumerate(sentences):
        ids = [label_index.get(t, IGNORE) for t in s.tags]
        out += windows_for(tokenizer, s.tokens, ids, i, max_length)
    return out


def _batches(windows: list[Window], batch_size: int, gen: torch.Generator) -> list[list[Window]]:
    """Length-bucketed batches in random order: shuffle, sort within pools of 50 batches, cut."""
    order = torch.randperm(len(windows), generator=gen).tolist()
    pool = batch_size * 50
    batches = []
    for start in range(0, len(order), pool):
        chunk = sorted(order[start:start + pool], key=lambda i: len(windows[i].input_ids))
        batches += [[windows[i] for i in chunk[j:j + batch_size]] for j in range(0, len(chunk), batch_size)]
    perm = torch.randperm(len(batches), generator=gen).tolist()
    return [batches[i] for i in perm]


def _autocast():
    from mbertlab.pretrain.model import bf16_supported

    return torch.autocast("cpu", dtype=torch.bfloat16) if bf16_supported() else contextlib.nullcontext()


def train_tagger(config: TransferConfig, model: Tagger, windows: list[Window], pad_id: int) -> None:
    gen = torch.Generator().manual_seed(config.seed)
    epochs = max(1, int(np.ceil(config.epochs)))
    per_epoch = -(-len(windows) // config.batch_size)
    total = max(1, int(config.epochs * per_epoch))
    warmup = max(1, int(config.warmup * total))
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=config.lr, weight_decay=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / max(1, total - warmup))))
    model.train()
    step = 0
    for _ in range(epochs):
        for batch in _batches(windows, config.batch_size, gen):
            if step >= total:
                return
            tensors = collate(batch, pad_id)
            with _autocast():
                logits = model(tensors["input_ids"], tensors["attention_mask"])
            loss = torch.nn.functional.cross_entropy(logits.float().flatten(0, 1), tensors["labels"].flatten(),
                                                     ignore_index=IGNORE)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1


@torch.inference_mode()
def predict(model: Tagger, windows: list[Window], pad_id: int, labels: list[str], n: int,
            lengths: list[int], batch_size: int = 64) -> list[list[str]]:
    model.eval()
    found: dict[int, dict[int, int]] = {}
    order = sorted(range(len(windows)), key=lambda i: len(windows[i].input_ids))
    for start in range(0, len(order), batch_size):
        batch = [windows[i] for i in order[start:start + batch_size]]
        tensors = collate(batch, pad_id)
        with _autocast():
            logits = model(tensors["input_ids"], tensors["attention_mask"])
        decode(logits.float(), batch, found)
    return [[labels[found.get(i, {}).get(w, 0)] for w in range(lengths[i])] for i in range(n)]


def freeze_bottom(encoder, n: int) -> None:
    """Freeze the embeddings (layer 0) and the first n-1 transformer layers."""
    if n <= 0:
        return
    for p in encoder.embeddings.parameters():
        p.requires_grad_(False)
    for layer in encoder.encoder.layer[: n - 1]:
        for p in layer.parameters():
            p.requires_grad_(False)
