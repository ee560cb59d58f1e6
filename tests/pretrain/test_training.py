"""Training learns, checkpoints resume exactly (bitwise in fp32), saved models load in HF."""
from __future__ import annotations

import json
import math
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
import torch
from safetensors.torch import load_file
from transformers import AutoModelForMaskedLM, AutoTokenizer

from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.checkpoint import list_checkpoints
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.tokenizers.shards import ShardReader

TINY = {"model": {"layers": 2, "hidden": 32, "heads": 2}, "batch_size": 8, "seq_len": 16, "precision": "fp32",
        "steps": 30, "checkpoint_every": 10, "warmup": 5, "eval_batches": 1}

RESUME_STEPS = 200  # the first checkpoint (step 10) comes long before the end, so a kill after it lands mid-run

RUN = """
import sys, json
from pathlib import Path
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.loop import pretrain_into
config = PretrainConfig.model_validate(json.loads(sys.argv[1]))
pretrain_into(config, Path(sys.argv[2]), Path(sys.argv[3]))
"""


def unigram_entropy(shards: ShardReader) -> float:
    counts = Counter(shards.tokens("src").tolist())
    total = sum(counts.values())
    return -sum(c / total * math.log(c / total) for c in counts.values())


@pytest.mark.slow
def test_loss_falls_well_below_unigram_entropy(tmp_path, src_shards):
    # fp32 pinned: `auto` is bf16 on AMX machines and fp32 on others (fp32 on the AVX2 machine this passes on)
    config = PretrainConfig(steps=500, checkpoint_every=250, eval_batches=4, precision="fp32")
    pretrain_into(config, src_shards, tmp_path)
    metrics = [json.loads(l) for l in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    final = metrics[-1]
    entropy = unigram_entropy(ShardReader(src_shards))
    assert final["step"] == 500 and final["loss"] < entropy - 1.0, (final, entropy)
    assert final["mrr"] > metrics[0]["mrr"] > 0


def test_resume_after_sigkill_is_bitwise_identical(tmp_path, src_shards):
    script = tmp_path / "run.py"
    script.write_text(RUN)
    config = json.dumps({**TINY, "steps": RESUME_STEPS})
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    for d in (straight, resumed):
        d.mkdir()
    subprocess.run([sys.executable, str(script), config, str(src_shards), str(straight)], check=True)
    proc = subprocess.Popen([sys.executable, str(script), config, str(src_shards), str(resumed)])
    deadline = time.time() + 120
    while not list_checkpoints(resumed) and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = list_checkpoints(resumed)  # the kill came after a checkpoint and before the end
    assert killed_at and killed_at[-1][0] < RESUME_STEPS and not (resumed / "model").exists(), killed_at
    subprocess.run([sys.executable, str(script), config, str(src_shards), str(resumed)], check=True)
    a = load_file(str(straight / "model" / "model.safetensors"))
    b = load_file(str(resumed / "model" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert (straight / "metrics.jsonl").read_text() == (resumed / "metrics.jsonl").read_text()


def test_saved_model_loads_in_hf_with_tokenizer(tmp_path, pair_shards):
    pretrain_into(PretrainConfig.model_validate({**TINY, "steps": 10, "permute": {"fake": 0.5}}), pair_shards, tmp_path)
    model = AutoModelForMaskedLM.from_pretrained(str(tmp_path / "model")).eval()
    tok = AutoTokenizer.from_pretrained(str(tmp_path / "model"))
    enc = tok("zu tipi misana", return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc).logits
    assert logits.shape == (1, enc["input_ids"].shape[1], len(tok))
    langs = {json.loads(l)["lang"] for l in (tmp_path / "metrics.jsonl").read_text().splitlines()}
    assert langs == {"src", "fake"}


def test_continued_pretraining_starts_from_a_hf_checkpoint(tmp_path, src_shards):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    pretrain_into(PretrainConfig.model_validate({**TINY, "steps": 10}), src_shards, first)
    start = load_file(str(first / "model" / "model.safetensors"))
    config = PretrainConfig.model_validate({**TINY, "steps": 1, "lr": 1e-12, "warmup": 0,
                                            "init_from": str(first / "model")})
    pretrain_into(config, src_shards, second)
    after = load_file(str(second / "model" / "model.safetensors"))
    assert all(torch.allclose(start[k], after[k], atol=1e-6) for k in start)  # a negligible step from there


def _logged_steps(out) -> Counter:
    rows = map(json.loads, (out / "metrics.jsonl").read_text().splitlines())
    return Counter((row["step"], row["lang"]) for row in rows)


def test_resume_drops_evaluations_logged_after_the_checkpoint(tmp_path, src_shards):
    """As if killed after step 20's evaluation, before its checkpoint: step 20 is logged once after resuming."""
    pretrain_into(PretrainConfig.model_validate({**TINY, "steps": 10}), src_shards, tmp_path)
    shutil.rmtree(tmp_path / "model")
    with (tmp_path / "metrics.jsonl").open("a") as f:
        f.write(json.dumps({"step": 20, "lang": "src", "loss": 9.0, "ppl": 1.0, "mrr": 0.0}) + "\n")
        f.write('{"step": 20, "lang": "sr')  # cut short by the kill
    pretrain_into(PretrainConfig.model_validate({**TINY, "steps": 20}), src_shards, tmp_path)
    assert _logged_steps(tmp_path) == Counter({(10, "src"): 1, (20, "src"): 1})


def test_resume_before_the_first_checkpoint_drops_its_evaluation(tmp_path, src_shards):
    (tmp_path / "metrics.jsonl").write_text(json.dumps({"step": 10, "lang": "src", "loss": 9.0}) + "\n")
    pretrain_into(PretrainConfig.model_validate({**TINY, "steps": 10}), src_shards, tmp_path)
    assert _logged_steps(tmp_path) == Counter({(10, "src"): 1})


@pytest.fixture(scope="module")
def small_pair_shards(tmp_path_factory):
    """300 sentences of src and fake: a tiny model at a high learning rate stops improving on dev within 100 steps."""
    from tests.pretrain.conftest import make_shards

    return make_shards(tmp_path_factory.mktemp("small-pair"), ["src", "fake"], train_sentences=300)


def _weights(folder) -> dict:
    return load_file(str(folder / "model.safetensors"))


def test_early_stopping_keeps_the_best_evaluation_and_resumes_exactly(tmp_path, small_pair_shards):
    """Limisiewicz et al. 2023 (Appendix E): "Early stopping was used for all models based on results on a
    balanced dev set." The stop and the kept model follow from metrics.jsonl recomputed here: the mean over
    languages of each evaluation's dev loss, the run stopping after `patience` evaluations without a new
    minimum; the best step's checkpoint outlives keep_checkpoints; a run killed after the best step (or after
    stopping, before saving its model) resumes to the same weights."""
    config = PretrainConfig.model_validate({**TINY, "steps": 100, "lr": 0.05, "patience": 2, "keep_checkpoints": 1})
    straight = tmp_path / "straight"
    straight.mkdir()
    pretrain_into(config, small_pair_shards, straight)
    losses: dict[int, list[float]] = {}
    for row in map(json.loads, (straight / "metrics.jsonl").read_text().splitlines()):
        losses.setdefault(row["step"], []).append(row["loss"])
    assert all(len(v) == 2 for v in losses.values())  # both languages at every evaluation
    best, best_step, since, stop = math.inf, 0, 0, None
    for step in sorted(losses):
        mean = sum(losses[step]) / 2
        best, best_step, since = (mean, step, 0) if mean < best else (best, best_step, since + 1)
        if since == 2:
            stop = step
            break
    assert stop is not None and stop < 100, losses  # this run does stop early
    info = json.loads((straight / "early_stopping.json").read_text())
    assert (info["best_step"], info["stopped_at"], info["stopped_early"]) == (best_step, stop, True)
    assert max(losses) == stop
    assert [s for s, _ in list_checkpoints(straight)] == [best_step, stop]  # the newest, and the best
    kept = _weights(straight / "checkpoints" / f"step-{best_step}")
    final = _weights(straight / "model")
    assert all(torch.equal(kept[k], final[k]) for k in kept)

    for cut in (best_step, stop):  # killed after the best step; killed after the stop, before the model was saved
        resumed = tmp_path / f"resumed-{cut}"
        shutil.copytree(straight, resumed)
        shutil.rmtree(resumed / "model")
        (resumed / "early_stopping.json").unlink()
        for step, path in list_checkpoints(resumed):
            if step > cut:
                shutil.rmtree(path)
        pretrain_into(config, small_pair_shards, resumed)
        again = _weights(resumed / "model")
        assert all(torch.equal(again[k], final[k]) for k in final), cut
        assert (resumed / "early_stopping.json").read_text() == (straight / "early_stopping.json").read_text()
        assert (resumed / "metrics.jsonl").read_text() == (straight / "metrics.jsonl").read_text()

    plain = PretrainConfig.model_validate({**TINY, "steps": 100})
    assert "patience" not in plain.model_dump()  # configs without early stopping keep their hashes


@pytest.mark.parametrize("setting, expected", [(True, {}), ("reduce-overhead", {"mode": "reduce-overhead"})])
def test_compile_passes_its_mode_to_torch_compile(tmp_path, src_shards, monkeypatch, setting, expected):
    """`compile: reduce-overhead` (CUDA graphs, for the small models whose step is the host's launches, issue 53)
    reaches torch.compile as its mode; `compile: true` compiles with torch's default. Compiling itself is stubbed:
    it takes minutes on the CPU and its speed is a GPU benchmark's (benchmarks/gpu_busy.py --compile MODE)."""
    calls = []
    monkeypatch.setattr(torch.nn.Module, "compile", lambda self, **kwargs: calls.append(kwargs))
    pretrain_into(PretrainConfig.model_validate({**TINY, "steps": 2, "checkpoint_every": 2, "compile": setting}),
                  src_shards, tmp_path)
    assert calls == [expected]
    with pytest.raises(ValueError):
        PretrainConfig.model_validate({**TINY, "compile": "fast"})
