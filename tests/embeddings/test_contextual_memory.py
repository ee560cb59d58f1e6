"""Issue #8 item 6: contextual word vectors for 1M tokens stream within 2 GB. The peak RSS of a child
process that streams the corpus through an encoder is measured through a small wrapper (as in
tests/corpus/test_streaming.py), so pytest's own pages are not counted."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

MEASURE = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")

STREAM = """
import json, sys
from pathlib import Path
from mbertlab.analysis.contextual import contextual_vectors, read_sentences
from mbertlab.transfer.encoder import load_encoder
from mbertlab.runtime import setup_torch
setup_torch()
model_dir, text, out = sys.argv[1:]
tokenizer, model = load_encoder(Path(model_dir), False, 0)
vectors = contextual_vectors(model, tokenizer, read_sentences(Path(text)), None, [0, 2])
Path(out).write_text(json.dumps({"words": len(vectors[2]), "dim": len(next(iter(vectors[2].values())))}))
"""

TOKENS, SENTENCE, TYPES = 1_000_000, 20, 3000


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_contextual_vectors_for_1m_tokens_stream_within_2gb(tmp_path):
    import json

    from transformers import AutoTokenizer

    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model
    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(TYPES)])
    text = tmp_path / "text.txt"
    zipf = 1.0 / np.arange(1, TYPES + 1)
    with text.open("w") as f:
        for _ in range(TOKENS // SENTENCE // 1000):
            block = words[rng.choice(TYPES, size=(1000, SENTENCE), p=zipf / zipf.sum())]
            f.write("\n".join(" ".join(row) for row in block) + "\n")
    tok, enc = tmp_path / "tok", tmp_path / "enc"
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=TYPES, languages=["x"]), {"x": text}, tok)
    new_model(ModelShape(layers=2, hidden=64, heads=2), TYPES + 5).save_pretrained(enc)
    AutoTokenizer.from_pretrained(tok).save_pretrained(enc)
    out = tmp_path / "out.json"
    command = [sys.executable, "-c", STREAM, str(enc), str(text), str(out)]
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True)
    peak_mb = int(done.stdout.split()[-1]) / 1024  # ru_maxrss is in KiB on Linux
    seen = {w for line in text.open() for w in line.split()}
    result = json.loads(out.read_text())
    print(f"contextual vectors, {TOKENS} tokens, {len(seen)} word types: peak RSS {peak_mb:.0f} MB")
    assert result == {"words": len(seen), "dim": 64}  # every word type of the stream got a vector
    assert peak_mb < 2048
