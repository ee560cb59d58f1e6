"""A linear probe as Limisiewicz et al. 2023's study runs 252 of them: the frozen encoder's evaluation
batches kept between evaluations vs computed again at every evaluation, in one run.

The probe is `mbertlab transfer` in `probe` mode with lms2023's lab settings (10 epochs over 1,000
training sentences, every file scored after each epoch, at most 300 sentences a file) on XTREME's UD POS
files: trained on English, scored on the dev files of en, af, ar, es, hi and zh. The encoder is a random
BERT of lms2023's lab shape (2 layers, hidden 128, 2 heads) with a WordPiece vocabulary of 8,000 trained
here on the raw text of those languages. "recomputed" sets the cache's budget to 0 bytes, which is what a
plain probing loop over a Hugging Face encoder does (every evaluation runs the encoder again). The two
alternate `--rounds` times; the histories must be identical. Last line: `ratio=<recomputed / kept>`.

    .venv/bin/python benchmarks/probe_eval_cache.py [--rounds 2]
"""
from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch

from mbertlab.runtime import setup_torch

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LANGS = ["en", "af", "ar", "es", "hi", "zh"]


def make_encoder(folder: Path) -> Path:
    from transformers import AutoTokenizer

    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    tok, enc = folder / "tok", folder / "enc"
    tok.mkdir()
    train_tokenizer_into(TokenizerConfig(kind="wordpiece", vocab_size=8000, languages=LANGS),
                         {lang: DATA / "raw_text" / f"{lang}.txt" for lang in LANGS}, tok)
    tokenizer = AutoTokenizer.from_pretrained(tok)
    torch.manual_seed(0)
    new_model(ModelShape(layers=2, hidden=128, heads=2, dropout=0.0), len(tokenizer)).save_pretrained(enc)
    tokenizer.save_pretrained(enc)
    return enc


def probe(encoder: Path, folder: Path, keep: bool) -> tuple[float, str]:
    """Seconds for one probe transfer, and its history (every evaluation's scores)."""
    from mbertlab.store.results import ResultsDB
    from mbertlab.transfer import encoder as frozen
    from mbertlab.transfer.config import DataFile, TransferConfig
    from mbertlab.transfer.run import run_transfer_into

    files = [DataFile(lang=lang, split="dev", path=f"dev-{lang}.tsv", format="udpos") for lang in LANGS]
    config = TransferConfig(task="upos", mode="probe", epochs=10, max_train_sentences=1000,
                            max_eval_sentences=300, precision="fp32", seed=0,
                            train=DataFile(lang="en", split="train", path="train-en.tsv", format="udpos"),
                            evaluate=files)
    budget, frozen.EVAL_CACHE_BYTES = frozen.EVAL_CACHE_BYTES, (frozen.EVAL_CACHE_BYTES if keep else 0)
    out = folder / ("kept" if keep else "recomputed")
    out.mkdir()
    try:
        start = time.perf_counter()
        run_transfer_into(config, encoder, out, ResultsDB(folder / f"{out.name}.db"), "bench",
                          DATA / "udpos_xtreme")
        seconds = time.perf_counter() - start
    finally:
        frozen.EVAL_CACHE_BYTES = budget
    history = (out / "history.jsonl").read_text(encoding="utf-8")
    for path in sorted(out.rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    out.rmdir()
    return seconds, history


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    setup_torch()
    times: dict[bool, list[float]] = {True: [], False: []}
    histories: set[str] = set()
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        encoder = make_encoder(folder)
        for _ in range(args.rounds):
            for keep in (False, True):
                seconds, history = probe(encoder, folder, keep)
                times[keep].append(seconds)
                histories.add(history)
    kept, recomputed = statistics.median(times[True]), statistics.median(times[False])
    print(f"processor threads={torch.get_num_threads()} precision=fp32 rounds={args.rounds}")
    print(f"recomputed: {recomputed:.1f} s per probe ({', '.join(f'{t:.1f}' for t in times[False])})")
    print(f"kept:       {kept:.1f} s per probe ({', '.join(f'{t:.1f}' for t in times[True])})")
    print(f"identical histories: {len(histories) == 1}")
    print(f"ratio={recomputed / kept:.2f}")


if __name__ == "__main__":
    main()
