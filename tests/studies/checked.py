"""Independent numbers behind the scorecard's checks at test scale: each pretraining's smallest gap (nats) between
the loss of the best context-free predictor under BERT's 80/10/10 masking (the conditional entropy of the answer
given the shown token, column by column of their joint table, by scipy) and its final dev MLM loss
(metrics.jsonl). The studies' pretrainings select tokens uniformly, so the answers follow the unigram counts."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy import stats


def _context_free(ids: np.ndarray, vocab: int, specials: int) -> float:
    s = np.bincount(ids, minlength=vocab) / len(ids)
    q = np.zeros(vocab)
    q[specials:] = 1.0 / (vocab - specials)
    loss = 0.8 * stats.entropy(s)
    for x in np.flatnonzero(0.1 * s + 0.1 * q):
        column = 0.1 * q[x] * s  # the answer y given shown x: a random replacement of any y ...
        column[x] += 0.1 * s[x]  # ... or x itself, kept
        loss += column.sum() * stats.entropy(column)
    return loss


def plateau_gaps(workdir: Path) -> dict[str, float]:
    """pretrain hash -> min over its languages of (context-free loss − final dev loss)."""
    gaps = {}
    for pretrain in (workdir / "pretrain").iterdir():
        if pretrain.name.startswith(".") or not (pretrain / "metrics.jsonl").is_file():
            continue
        records = [json.loads(line) for line in (pretrain / "metrics.jsonl").read_text().splitlines()]
        last = max(r["step"] for r in records)
        shards = next(Path(i["path"]) for i in json.loads((pretrain / "inputs.json").read_text())
                      if i["stage"] == "shards")
        shards = workdir / "shards" / shards.name
        vocab = json.loads((shards / "shards.json").read_text())["vocab_size"]
        meta = shards / "tokenizer" / "mbertlab_tokenizer.json"
        specials = json.loads(meta.read_text())["specials"] if meta.is_file() else 5
        gaps[pretrain.name] = min(
            _context_free(np.load(shards / f"{r['lang']}.train.ids.npy"), vocab, specials) - r["loss"]
            for r in records if r["step"] == last)
    return gaps
