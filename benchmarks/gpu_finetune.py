"""GPU fine-tuning throughput on UPOS, NER and XNLI: our transfer loop vs the Hugging Face Trainer, in one run.

The encoder is a randomly initialised BERT (BERT-base by default: 12 layers, 768 hidden, 12 heads) with a
WordPiece vocabulary (`--vocab`, 30k) trained here on ../shared/data/raw_text/en.txt. Data: the first
`--sentences` training examples of XTREME's English UD POS file, CoNLL-2003 English NER and XTREME's English
XNLI dev file (XNLI has no English training file there: its examples [0, n) train, the next `--dev` score),
scored on the first `--dev` examples of each dev file. Both sides: AdamW lr 5e-5, weight decay 0.01, 10%
linear warmup then linear decay, gradient clipping at 1.0, batch 32, one epoch, at most 128 subwords, bf16
autocast where the device has it. HF gets its best settings (sdpa, fused AdamW on CUDA, length-grouped
batches, dynamic padding, pinned memory and two loader workers on CUDA, `torch.compile` with `--compile`);
ours runs `transfer.train.fit` as `mbertlab transfer` does (length-bucketed batches, the encoder built for its
device: SDPA on CUDA, batches moved by its prefetching thread). Both sides are timed the same way, from the end
of their first optimiser step (set-up, the Trainer's loader workers, compilation and the first batch left out)
to the end of the epoch: sentences/s = (examples − 32) / those seconds. The HF model and Trainer are built once
per task (compiled once with `--compile`) and reset to the initial weights each round. The sides alternate,
first `--warmup-rounds` untimed (each padded batch shape met once by the GPU), then `--rounds` timed;
sentences/s is the median over the timed rounds. Prints each task's sentences/s and dev score,
`ratio_<task>=`, and last `ratio=` (the lowest over the tasks).

    python benchmarks/gpu_finetune.py [--device cuda] [--tasks upos ner xnli] [--sentences 2000]
    python benchmarks/gpu_finetune.py --device cpu --layers 1 --hidden 32 --heads 2 --vocab 1000 \\
        --sentences 70 --dev 8 --rounds 1 --warmup-rounds 0  # the plumbing, tiny, on the CPU
    (needs the bench extra: pip install -e '.[bench]')
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook

from mbertlab.runtime import setup_torch
from mbertlab.transfer.config import DataFile, TransferConfig

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
BATCH, LR, MAX_LENGTH = 32, 5e-5, 128
# task: (training file, dev file, reader format); None for the dev path = the rest of the training file
FILES = {
    "upos": ("udpos_xtreme/train-en.tsv", "udpos_xtreme/dev-en.tsv", "udpos"),
    "ner": ("ner/conll2003/eng.train", "ner/conll2003/eng.testa", "ner"),
    "xnli": ("xnli/xtreme/dev-en.tsv", None, "xnli"),
}


def task_data(task: str, sentences: int, dev: int) -> tuple[object, list, list]:
    """The task's adapter (labels fitted on the training part) and its training and dev records."""
    from mbertlab.transfer.adapter import adapter_for, read_records

    train_path, dev_path, fmt = FILES[task]
    train_file = DataFile(lang="en", split="train", path=str(DATA / train_path), format=fmt, end=sentences)
    dev_file = DataFile(lang="en", split="dev", path=str(DATA / (dev_path or train_path)), format=fmt,
                        start=0 if dev_path else sentences, end=(0 if dev_path else sentences) + dev)
    adapter = adapter_for(task, TransferConfig(task=task, lr=[LR], batch_size=[BATCH], epochs=1,
                                               train=[train_file], evaluate=[dev_file]))
    train, held = read_records(adapter, train_file, None, None), read_records(adapter, dev_file, None, None)
    adapter.fit_labels(train)
    return adapter, train, held


def make_encoder(folder: Path, args) -> Path:
    from transformers import AutoTokenizer

    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    tok, enc = folder / "tok", folder / "enc"
    tok.mkdir()
    train_tokenizer_into(TokenizerConfig(kind="wordpiece", vocab_size=args.vocab, languages=["en"]),
                         {"en": DATA / "raw_text" / "en.txt"}, tok)
    tokenizer = AutoTokenizer.from_pretrained(tok)
    torch.manual_seed(0)
    shape = ModelShape(layers=args.layers, hidden=args.hidden, heads=args.heads, max_positions=512)
    new_model(shape, len(tokenizer)).save_pretrained(enc)
    tokenizer.save_pretrained(enc)
    return enc


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


class Timer:
    """Seconds from the end of the first optimiser step (waited for) to `stop()`, whichever loop steps."""

    def __init__(self, device: torch.device):
        self.device, self.first = device, None
        self.handle = register_optimizer_step_post_hook(self._stepped)

    def _stepped(self, *_) -> None:
        if self.first is None:
            sync(self.device)
            self.first = time.perf_counter()

    def stop(self) -> float:
        sync(self.device)
        self.handle.remove()
        return time.perf_counter() - self.first


def ours(encoder: Path, adapter, train: list, dev: list, device: torch.device) -> tuple[float, float]:
    """Seconds for one epoch of our loop after its first step, and its main dev metric."""
    from mbertlab.transfer.adapter import TaskModel
    from mbertlab.transfer.encoder import Features, load_encoder
    from mbertlab.transfer.train import fit

    torch.manual_seed(0)
    tokenizer, bert = load_encoder(encoder, False, 0, device)
    features = Features(bert, "finetune")
    model = TaskModel(features, adapter.head(features.n_out)).to(device)
    items = adapter.encode(tokenizer, train, training=True)
    timer = Timer(device)
    fit(adapter, model, items, adapter.config, LR, BATCH, adapter.config.epoch_grid[0], tokenizer.pad_token_id,
        lambda step, epoch: None)
    seconds = timer.stop()
    preds = adapter.predict(model, adapter.encode(tokenizer, dev, training=False), dev, tokenizer.pad_token_id)
    return seconds, adapter.metrics(dev, preds)[adapter.main_metric]


def hf_rows(tokenizer, adapter, records: list) -> list[dict]:
    """Trainer rows: a tagger's label on each word's first subword (-100 elsewhere and for a label the
    training part never showed), a pair's one label."""
    index = {t: i for i, t in enumerate(adapter.labels)}
    rows = []
    for r in records:
        if hasattr(r, "tokens"):
            enc = tokenizer(r.tokens, is_split_into_words=True, truncation=True, max_length=MAX_LENGTH)
            previous, labels = None, []
            for w in enc.word_ids():
                labels.append(-100 if w is None or w == previous else index.get(r.tags[w], -100))
                previous = w
        else:
            enc = tokenizer(r.premise, r.hypothesis, truncation=True, max_length=MAX_LENGTH)
            labels = index.get(r.label, -100)
        rows.append({**enc, "labels": labels})
    return rows


def hf_trainer(encoder: Path, adapter, train: list, folder: Path, args):
    """The Trainer (built once per task: the model compiled once with --compile), its initial weights, its
    tokenizer and collator."""
    from transformers import (
        AutoModelForSequenceClassification,
        AutoModelForTokenClassification,
        AutoTokenizer,
        DataCollatorForTokenClassification,
        DataCollatorWithPadding,
        Trainer,
        TrainingArguments,
    )

    from mbertlab.pretrain.model import bf16_supported

    tokenizer = AutoTokenizer.from_pretrained(str(encoder))
    tagging = hasattr(train[0], "tokens")
    auto = AutoModelForTokenClassification if tagging else AutoModelForSequenceClassification
    collator = (DataCollatorForTokenClassification if tagging else DataCollatorWithPadding)(tokenizer)
    torch.manual_seed(0)
    model = auto.from_pretrained(str(encoder), num_labels=len(adapter.labels), attn_implementation="sdpa")
    cuda = args.device.startswith("cuda")
    targs = TrainingArguments(
        output_dir=str(folder / "hf"), per_device_train_batch_size=BATCH, per_device_eval_batch_size=64,
        num_train_epochs=1, learning_rate=LR, weight_decay=0.01, warmup_steps=0.1, lr_scheduler_type="linear",
        max_grad_norm=1.0, bf16=cuda or bf16_supported(), use_cpu=not cuda, torch_compile=args.compile,
        optim="adamw_torch_fused" if cuda else "adamw_torch", train_sampling_strategy="group_by_length",
        dataloader_num_workers=2 if cuda else 0, dataloader_pin_memory=cuda, logging_strategy="no",
        save_strategy="no", report_to=[], seed=0, disable_tqdm=True)
    trainer = Trainer(model=model, args=targs, train_dataset=hf_rows(tokenizer, adapter, train), data_collator=collator)
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return trainer, initial, tokenizer


def hugging_face(trainer, initial: dict, tokenizer, adapter, dev: list) -> tuple[float, float]:
    """Seconds for one epoch of Trainer.train() after its first step, from the initial weights, and dev accuracy
    (over first subwords for taggers)."""
    trainer.model.load_state_dict(initial)
    timer = Timer(trainer.args.device)
    trainer.train()
    seconds = timer.stop()
    out = trainer.predict(hf_rows(tokenizer, adapter, dev))
    pred, gold = out.predictions.argmax(-1), out.label_ids
    keep = gold != -100
    return seconds, float((pred[keep] == gold[keep]).mean())


def compare(task: str, encoder: Path, folder: Path, args) -> float:
    adapter, train, dev = task_data(task, args.sentences, args.dev)
    device = torch.device(args.device)
    times: dict[str, list[float]] = {"ours": [], "HF Trainer": []}
    score: dict[str, float] = {}
    trainer, initial, tokenizer = hf_trainer(encoder, adapter, train, folder, args)
    for i in range(args.warmup_rounds + args.rounds):  # warm-up rounds: each batch shape met once, untimed
        seconds, score["ours"] = ours(encoder, adapter, train, dev, device)
        if i >= args.warmup_rounds:
            times["ours"].append(seconds)
        seconds, score["HF Trainer"] = hugging_face(trainer, initial, tokenizer, adapter, dev)
        if i >= args.warmup_rounds:
            times["HF Trainer"].append(seconds)
    rate = {name: (len(train) - BATCH) / statistics.median(t) for name, t in times.items()}
    metric = {"ours": adapter.main_metric, "HF Trainer": "accuracy"}
    for name, t in times.items():
        print(f"{task:>5} {name:>10}: {rate[name]:9.1f} sentences/s (epochs took "
              f"{', '.join(f'{s:.1f}' for s in t)} s), dev {metric[name]} {100 * score[name]:.1f}")
    ratio = rate["ours"] / rate["HF Trainer"]
    print(f"ratio_{task}={ratio:.3f}")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--tasks", nargs="+", choices=sorted(FILES), default=["upos", "ner", "xnli"])
    parser.add_argument("--sentences", type=int, default=2000, help="training examples per task (XNLI has 2,490)")
    parser.add_argument("--dev", type=int, default=400)
    parser.add_argument("--vocab", type=int, default=30000)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup-rounds", type=int, default=1,
                        help="untimed rounds first, so that neither side pays the GPU's first meeting of a shape")
    parser.add_argument("--compile", action="store_true", help="torch.compile the HF model (Trainer's option)")
    args = parser.parse_args()
    setup_torch()
    if args.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = True
    name = torch.cuda.get_device_name(torch.device(args.device)) if args.device.startswith("cuda") else "CPU"
    print(f"{name}; {args.layers} layers / {args.hidden} hidden / {args.heads} heads, vocab {args.vocab}, "
          f"{args.sentences} training examples per task, batch {BATCH}, one epoch, {args.rounds} rounds after "
          f"{args.warmup_rounds} untimed")
    with tempfile.TemporaryDirectory() as tmp:
        encoder = make_encoder(Path(tmp), args)
        ratios = [compare(task, encoder, Path(tmp), args) for task in args.tasks]
    print(f"ratio={min(ratios):.3f}")


if __name__ == "__main__":
    main()
