"""The optimiser side of the loop against independent computations: learning-rate schedules against
transformers' own schedulers, one step with gradient accumulation against a hand-made AdamW step on the
concatenated batch with Hugging Face's own MLM loss, and which checkpoints pruning keeps."""
from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from transformers import (
    AutoModelForMaskedLM,
    get_constant_schedule_with_warmup,
    get_inverse_sqrt_schedule,
    get_linear_schedule_with_warmup,
)

from mbertlab.pretrain.checkpoint import list_checkpoints
from mbertlab.pretrain.config import ModelShape, PretrainConfig
from mbertlab.pretrain.data import IGNORE
from mbertlab.pretrain.loop import _accumulate_gradients, micro_batches, open_run, pretrain_into
from mbertlab.pretrain.model import new_model
from mbertlab.pretrain.schedule import lr_at
from mbertlab.tokenizers.shards import ShardReader
from tests.pretrain.test_distill import replay
from tests.pretrain.test_training import TINY

HF_SCHEDULES = {
    "constant": lambda opt, warmup, total: get_constant_schedule_with_warmup(opt, warmup),
    "linear": lambda opt, warmup, total: get_linear_schedule_with_warmup(opt, warmup, total),
    "inverse_sqrt": lambda opt, warmup, total: get_inverse_sqrt_schedule(opt, warmup),
}


@pytest.mark.parametrize("kind", sorted(HF_SCHEDULES))
@pytest.mark.parametrize("warmup,total", [(10, 50), (1, 7), (30, 31)])
def test_lr_at_step_s_is_transformers_schedule_after_s_scheduler_steps(kind, warmup, total):
    """Our step s (1-based) uses the rate transformers' scheduler reaches after s calls of step(): the
    first optimiser step runs at base/warmup, not at 0. (With warmup == total, transformers' linear schedule
    ends at 0 on the last step, ours at the peak: the one place they part.)"""
    base = 3e-3
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=base)
    scheduler = HF_SCHEDULES[kind](opt, warmup, total)
    for step in range(1, total + 1):
        opt.step()
        scheduler.step()
        assert lr_at(step, base, warmup, total, kind) == pytest.approx(scheduler.get_last_lr()[0], rel=1e-12), step


def test_the_loop_applies_the_schedule_and_keeps_the_newest_checkpoints(tmp_path, src_shards):
    keys = {**TINY, "steps": 25, "checkpoint_every": 5, "keep_checkpoints": 2, "warmup": 3, "schedule": "linear"}
    pretrain_into(PretrainConfig.model_validate(keys), src_shards, tmp_path)
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["step-20", "step-25"]  # no temp dirs
    assert [s for s, _ in list_checkpoints(tmp_path)] == [20, 25]
    for step, path in list_checkpoints(tmp_path):
        saved = torch.load(path / "trainer_state.pt", weights_only=False)["optimizer"]
        assert saved["param_groups"][0]["lr"] == pytest.approx(lr_at(step, 1e-3, 3, 25, "linear"), rel=1e-12)
        assert saved["param_groups"][0]["lr"] == pytest.approx(1e-3 * (25 - step) / 22, rel=1e-12)  # by hand


def test_accumulated_micro_batches_give_one_big_batchs_adamw_step(tmp_path, src_shards):
    """One optimiser step over 2 micro-batches equals, in fp32, an AdamW step made here on their concatenation
    with Hugging Face's full-vocabulary MLM loss (mean over masked positions), clipped as configured."""
    init = tmp_path / "init"
    torch.manual_seed(5)
    new_model(ModelShape(layers=2, hidden=32, heads=2), ShardReader(src_shards).vocab_size).save_pretrained(init)
    config = PretrainConfig.model_validate({**TINY, "steps": 1, "accumulation": 2, "batch_size": 8, "lr": 3e-3,
                                            "warmup": 4, "grad_clip": 0.5, "init_from": str(init)})
    for d in ("run", "again"):
        (tmp_path / d).mkdir()
    pretrain_into(config, src_shards, tmp_path / "run")
    got = load_file(str(tmp_path / "run" / "model" / "model.safetensors"))

    micro = list(replay(config, src_shards))
    assert len(micro) == 2 and all(m.inputs.shape == (4, 16) for m in micro)
    counts = [int((m.labels != IGNORE).sum()) for m in micro]
    assert counts[0] == counts[1]  # so the mean of the two means is the big batch's mean
    model = AutoModelForMaskedLM.from_pretrained(str(init), attn_implementation="eager").train()
    loss = model(input_ids=torch.cat([m.inputs for m in micro]), labels=torch.cat([m.labels for m in micro])).loss
    loss.backward()
    # the loop's gradient before clipping (Adam would hide a wrongly scaled one) and its reported loss
    run = open_run(config, src_shards, tmp_path / "again")
    reported, tokens = _accumulate_gradients(run, contextlib.nullcontext, micro_batches(run))
    assert float(reported) == pytest.approx(loss.item(), rel=1e-5) and tokens == 8 * 16
    theirs = dict(model.named_parameters())
    for name, p in run.model.named_parameters():
        assert torch.allclose(p.grad, theirs[name].grad, atol=1e-7, rtol=1e-4), name
    torch.nn.utils.clip_grad_norm_(model.parameters(), 0.5)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3 / 4, betas=(0.9, 0.98), weight_decay=0.01)
    opt.step()
    want = model.state_dict()
    assert got.keys() <= want.keys()
    for name, tensor in got.items():
        assert torch.allclose(tensor, want[name], atol=1e-6, rtol=0), name
    moved = max((got[k] - load_file(str(Path(init) / "model.safetensors"))[k]).abs().max().item() for k in got)
    assert moved > 1e-4  # the step did change the weights (lr/warmup = 7.5e-4 per Adam step)
