"""Fine-tuning throughput on UPOS: our transfer loop vs the Hugging Face Trainer with
AutoModelForTokenClassification, same encoder, same sentences, same optimiser settings, in one run.

The encoder is a randomly initialised BERT of the lab shape (hidden 256, 4 layers, 4 heads) with a WordPiece
vocabulary trained here on ../shared/data/raw_text/en.txt; the data are the first sentences of XTREME's
English UD POS training file, scored on the first sentences of its dev file. Both sides: AdamW lr 5e-5,
weight decay 0.01, 10% linear warmup then linear decay, batch 32, one epoch, bf16 autocast where the CPU
has it, at most 128 subwords, the label on each word's first subword. HF gets its best CPU settings
(sdpa attention, fused AdamW, dynamic padding, length-grouped sampling); ours runs as `mbertlab transfer` does (eager
attention, length-bucketed batches, dropout as in the encoder config). The two runs alternate `--rounds`
times so both see the same machine state; sentences/s is the median over rounds. Prints each side's
sentences/s and dev accuracy, HF with its default random batches too (`ratio_vs_hf_default`), and as its
last line `ratio=<ours / HF with length-grouped batches>`.

    .venv/bin/python benchmarks/finetune_throughput.py [--sentences 1500] [--rounds 2]
    (needs the bench extra: pip install -e '.[bench]')
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from mbertlab.formats.records import UPOS_TAGS
from mbertlab.formats.udpos import read_udpos_tsv
from mbertlab.runtime import setup_torch

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BATCH, LR, MAX_LENGTH = 32, 5e-5, 128


def make_encoder(folder: Path) -> Path:
    from transformers import AutoTokenizer

    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    tok, enc = folder / "tok", folder / "enc"
    tok.mkdir()
    train_tokenizer_into(TokenizerConfig(kind="wordpiece", vocab_size=8000, languages=["en"]),
                         {"en": DATA / "raw_text" / "en.txt"}, tok)
    tokenizer = AutoTokenizer.from_pretrained(tok)
    torch.manual_seed(0)
    new_model(ModelShape(layers=4, hidden=256, heads=4), len(tokenizer)).save_pretrained(enc)
    tokenizer.save_pretrained(enc)
    return enc


def ours(encoder: Path, train: list, dev: list) -> tuple[float, float]:
    """Seconds for one epoch of our loop, and dev accuracy."""
    from mbertlab.transfer.adapter import TaskModel
    from mbertlab.transfer.config import DataFile, TransferConfig
    from mbertlab.transfer.encoder import Features, load_encoder
    from mbertlab.transfer.tagging import TaggingAdapter
    from mbertlab.transfer.train import fit

    unused = DataFile(lang="en", path="-", format="udpos")
    config = TransferConfig(task="upos", lr=LR, batch_size=BATCH, epochs=1, train=unused, evaluate=[unused])
    adapter = TaggingAdapter("upos", config)
    adapter.fit_labels(train)
    torch.manual_seed(0)
    tokenizer, bert = load_encoder(encoder, False, 0)
    features = Features(bert, "finetune")
    model = TaskModel(features, adapter.head(features.n_out))
    items = adapter.encode(tokenizer, train, training=True)
    start = time.perf_counter()
    fit(adapter, model, items, config, LR, BATCH, config.epoch_grid[0], tokenizer.pad_token_id,
        lambda step, epoch: None)
    seconds = time.perf_counter() - start
    preds = adapter.predict(model, adapter.encode(tokenizer, dev, training=False), dev, tokenizer.pad_token_id)
    return seconds, adapter.metrics(dev, preds)["accuracy"]


def hugging_face(encoder: Path, train: list, dev: list, folder: Path, sampling: str) -> tuple[float, float]:
    """Seconds for one epoch of Trainer.train(), and dev accuracy on first subwords."""
    from transformers import (
        AutoModelForTokenClassification,
        AutoTokenizer,
        DataCollatorForTokenClassification,
        Trainer,
        TrainingArguments,
    )

    from mbertlab.pretrain.model import bf16_supported

    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    index = {t: i for i, t in enumerate(UPOS_TAGS)}

    def encode(sentences: list) -> list[dict]:
        rows = []
        for s in sentences:
            enc = tokenizer(s.tokens, is_split_into_words=True, truncation=True, max_length=MAX_LENGTH)
            words, labels, previous = enc.word_ids(), [], None
            for w in words:
                labels.append(-100 if w is None or w == previous else index[s.tags[w]])
                previous = w
            rows.append({"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"], "labels": labels})
        return rows

    torch.manual_seed(0)
    model = AutoModelForTokenClassification.from_pretrained(str(encoder), num_labels=len(UPOS_TAGS))
    args = TrainingArguments(output_dir=str(folder / "hf"), per_device_train_batch_size=BATCH,
                             per_device_eval_batch_size=64, num_train_epochs=1, learning_rate=LR, weight_decay=0.01,
                             warmup_steps=0.1, lr_scheduler_type="linear", max_grad_norm=1.0,
                             bf16=bf16_supported(), use_cpu=True, train_sampling_strategy=sampling,
                             logging_strategy="no",
                             save_strategy="no", report_to=[], dataloader_num_workers=0, seed=0,
                             disable_tqdm=True)
    trainer = Trainer(model=model, args=args, train_dataset=encode(train),
                      data_collator=DataCollatorForTokenClassification(tokenizer))
    start = time.perf_counter()
    trainer.train()
    seconds = time.perf_counter() - start
    out = trainer.predict(encode(dev))
    pred, gold = out.predictions.argmax(-1), out.label_ids
    keep = gold != -100
    return seconds, float((pred[keep] == gold[keep]).mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sentences", type=int, default=1500)
    parser.add_argument("--dev", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    setup_torch()
    train = list(read_udpos_tsv(DATA / "udpos_xtreme" / "train-en.tsv"))[: args.sentences]
    dev = list(read_udpos_tsv(DATA / "udpos_xtreme" / "dev-en.tsv"))[: args.dev]
    print(f"UPOS, {len(train)} training sentences ({sum(len(s.tokens) for s in train)} words), batch {BATCH}, "
          f"one epoch; {torch.get_num_threads()} threads")
    sides = {"ours": lambda tmp: ours(encoder, train, dev),
             "HF Trainer": lambda tmp: hugging_face(encoder, train, dev, tmp, "group_by_length"),
             "HF Trainer, random batches (its default)": lambda tmp: hugging_face(encoder, train, dev, tmp, "random")}
    times: dict[str, list[float]] = {name: [] for name in sides}
    accuracy: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        encoder = make_encoder(Path(tmp))
        for _ in range(args.rounds):
            for name, run in sides.items():
                seconds, accuracy[name] = run(Path(tmp))
                times[name].append(seconds)
    rate = {name: len(train) / statistics.median(t) for name, t in times.items()}
    for name in times:
        took = ", ".join(f"{t:.1f}" for t in times[name])
        print(f"{name:>41}: {rate[name]:7.1f} sentences/s (epochs took {took} s), "
              f"dev accuracy {100 * accuracy[name]:.1f}%")
    print(f"ratio_vs_hf_default={rate['ours'] / rate['HF Trainer, random batches (its default)']:.2f}")
    print(f"ratio={rate['ours'] / rate['HF Trainer']:.2f}")


if __name__ == "__main__":
    main()
