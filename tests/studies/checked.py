"""Independent numbers behind the scorecard's checks at test scale: each pretraining's smallest gap (nats) between
the unigram entropy of a language's training tokens (scipy) and its final dev MLM loss (metrics.jsonl)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from scipy import stats


def plateau_gaps(workdir: Path) -> dict[str, float]:
    """pretrain hash -> min over its languages of (unigram entropy − final dev loss)."""
    gaps = {}
    for pretrain in (workdir / "pretrain").iterdir():
        if pretrain.name.startswith(".") or not (pretrain / "metrics.jsonl").is_file():
            continue
        records = [json.loads(line) for line in (pretrain / "metrics.jsonl").read_text().splitlines()]
        last = max(r["step"] for r in records)
        shards = next(Path(i["path"]) for i in json.loads((pretrain / "inputs.json").read_text())
                      if i["stage"] == "shards")
        shards = workdir / "shards" / shards.name
        gaps[pretrain.name] = min(
            stats.entropy(np.unique(np.load(shards / f"{r['lang']}.train.ids.npy"), return_counts=True)[1]) - r["loss"]
            for r in records if r["step"] == last)
    return gaps
