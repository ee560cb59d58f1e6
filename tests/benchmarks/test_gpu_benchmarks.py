"""The GPU benchmarks run tiny on the CPU and print what the README promises: tokens/s or sentences/s of both
sides, and `ratio=` / `mfu=` that agree with those printed rates. Nothing here is about speed."""
from __future__ import annotations

import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), "--device", "cpu", *args],
                         capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout


def values(out: str) -> dict[str, float]:
    """The `name=value` lines, as numbers (a line that is not a number fails here)."""
    return {m[1]: float(m[2]) for m in re.finditer(r"^(\w+)=(\S+)$", out, re.MULTILINE)}


def number(text: str) -> float:
    return float(text.replace(",", ""))


@pytest.mark.slow
def test_gpu_pretrain_prints_rates_ratio_and_mfu():
    out = run("gpu_pretrain.py", "--layers", "2", "--hidden", "64", "--heads", "2", "--batch", "4", "--seq", "16",
              "--vocab", "1000", "600", "--steps", "3", "--warmup", "1", "--chunk", "2")
    got = values(out)
    assert out.rstrip().splitlines()[-1].startswith("ratio=")
    peak = number(re.search(r"matmul peak ([\d,.]+) GFLOP/s", out)[1]) * 1e9
    rates = {(int(v), side): number(r) for v, side, r in re.findall(r"vocab\s+(\d+)\s+(hf|ours):\s+([\d,.]+) tokens/s",
                                                                    out)}
    params = {int(v): number(p) for v, p in re.findall(r"vocab\s+(\d+): ([\d,]+) parameters", out)}
    # BertForMaskedLM, decoder tied: embeddings (V + 512 + 2) x H + 2H, per layer 12H^2 + 13H, head H^2 + 3H + V
    h = 64
    assert params == {v: (v + 514) * h + 2 * h + 2 * (12 * h * h + 13 * h) + h * h + 3 * h + v for v in (1000, 600)}
    # FLOPs executed per step (2 per multiply-add, backward = 2 x forward): 2 layers' weights and attention over
    # 4 x 16 tokens, and our masked-only head over the round(0.15 x 64) = 10 masked positions alone
    tokens, masked = 4 * 16, 10
    flops = {v: 6 * tokens * 2 * 12 * h * h + 12 * tokens * 2 * 16 * h + 6 * masked * (h * h + h * v) for v in params}
    for vocab in (1000, 600):
        ratio = rates[vocab, "ours"] / rates[vocab, "hf"]
        assert math.isclose(got[f"ratio_{vocab}"], ratio, rel_tol=0.01, abs_tol=0.001)
        assert math.isclose(got[f"mfu_{vocab}"], flops[vocab] * rates[vocab, "ours"] / tokens / peak, rel_tol=0.01)
    assert got["ratio"] == min(got["ratio_1000"], got["ratio_600"]) and got["mfu"] == min(got["mfu_1000"],
                                                                                          got["mfu_600"])


@pytest.mark.slow
def test_gpu_finetune_prints_sentences_per_second_and_ratio(shared_data):
    out = run("gpu_finetune.py", "--layers", "1", "--hidden", "32", "--heads", "2", "--vocab", "1000",
              "--sentences", "70", "--dev", "8", "--rounds", "1",
              "--warmup-rounds", "0")
    got = values(out)
    rates = {(t, side): number(r) for t, side, r in
             re.findall(r"^\s*(\w+)\s+(ours|HF Trainer):\s+([\d,.]+) sentences/s", out, re.MULTILINE)}
    assert {t for t, _ in rates} == {"upos", "ner", "xnli"}
    for task in ("upos", "ner", "xnli"):
        assert math.isclose(got[f"ratio_{task}"], rates[task, "ours"] / rates[task, "HF Trainer"], rel_tol=0.03,
                            abs_tol=0.001)
    assert out.rstrip().splitlines()[-1] == f"ratio={min(got[f'ratio_{t}'] for t in ('upos', 'ner', 'xnli')):.3f}"


def test_busy_share_is_the_union_of_device_intervals_over_the_steps_window():
    """Against a count on a grid of 1 µs cells: overlapping, nested and out-of-window kernels."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from gpu_busy import busy_from_trace

    kernels = [(5, 20), (10, 15), (18, 30), (40, 41), (95, 130), (-10, 2)]
    steps = [(0, 50), (50, 100)]
    events = [{"ph": "X", "name": f"ProfilerStep#{i}", "cat": "user_annotation", "ts": a, "dur": b - a, "tid": 1}
              for i, (a, b) in enumerate(steps)]
    events += [{"ph": "X", "name": "k", "cat": "kernel", "ts": a, "dur": b - a, "tid": 7} for a, b in kernels]
    events += [{"ph": "X", "name": "aten::mm", "cat": "cpu_op", "ts": 0, "dur": 100, "tid": 1}]  # not device work
    covered = [any(a <= t < b for a, b in kernels) for t in range(0, 100)]
    idle_runs, run_ = [], 0
    for c in covered:
        run_ = 0 if c else run_ + 1
        idle_runs.append(run_)
    busy, window, gap, recorded = busy_from_trace(events, "cuda")
    assert (busy, window, gap, recorded) == (sum(covered) / 100, 100, max(idle_runs), 2)


@pytest.mark.slow
def test_gpu_busy_prints_each_shape_and_the_lowest():
    out = run("gpu_busy.py", "--shapes", "tiny", "--steps", "3", "--skip", "1")
    got = values(out)
    line = re.search(r"tiny: 5 steps .* 3 recorded steps: .* device busy ([\d.]+)", out)
    assert line and math.isclose(float(line[1]), got["busy_tiny"], abs_tol=1e-3)
    assert 0 < got["busy"] <= 1 and out.rstrip().splitlines()[-1] == f"busy={got['busy_tiny']:.4f}"


@pytest.mark.slow
def test_plan_gpu_rate_prints_the_plan_estimate_the_floor_fit_and_the_process_scaling():
    """The plan's estimate as its floor for a model this small (a + b x layers ms a micro-batch, the constants of
    studies/plan.py), the two-depth fit as the line through the printed points, the scaling as summed over one
    process's rate."""
    from mbertlab.studies.plan import LAUNCH_S

    out = run("plan_gpu_rate.py", "--shapes", "d1", "d2", "--steps", "2", "--skip", "1", "--procs", "1", "2",
              "--proc-steps", "2")
    got = values(out)
    ms = {}
    for name, layers, measured, plan, ratio in re.findall(
            r"^(d\d) \((\d+) x 128, batch 256 x 64, vocab \d+\): ([\d.]+) ms/step measured, plan ([\d.]+) "
            r"\(floor; .*measured/plan ([\d.]+)", out, re.MULTILINE):
        assert math.isclose(float(plan), (LAUNCH_S[0] + LAUNCH_S[1] * int(layers)) * 1e3, abs_tol=0.005)
        assert math.isclose(float(ratio), float(measured) / float(plan), rel_tol=0.01, abs_tol=0.01)
        ms[int(layers)] = float(measured)
    assert sorted(ms) == [1, 2]
    assert math.isclose(got["floor_per_layer_ms"], ms[2] - ms[1], abs_tol=0.02)
    assert math.isclose(got["floor_ms"], ms[1] - (ms[2] - ms[1]), abs_tol=0.02)
    rates = [float(r) for r in re.findall(r"^\d processes of d1: ([\d.]+) steps/s summed", out, re.MULTILINE)]
    assert len(rates) == 2 and got["procs_1"] == 1 and math.isclose(got["procs_2"], rates[1] / rates[0], rel_tol=0.01)
