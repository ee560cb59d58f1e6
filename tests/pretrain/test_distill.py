"""Distillation: the soft-label loss against hand computations, teachers per row language, the top-k cache,
exact resume, and a distilled student beating hard labels on a small corpus."""
from __future__ import annotations

import dataclasses
import json
import math
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from safetensors.torch import load_file
from transformers import AutoModelForMaskedLM

from mbertlab.data.generate import generate_into, preset_config
from mbertlab.errors import ConfigError, DataError
from mbertlab.pretrain.balance import balance_score, final_mrr, teacher_dev_mrr
from mbertlab.pretrain.checkpoint import TrainState, list_checkpoints
from mbertlab.pretrain.config import ModelShape, PretrainConfig
from mbertlab.pretrain.data import IGNORE, MicroBatch, Selection, training_data
from mbertlab.pretrain.distill import soft_label_loss, topk_soft_label_loss
from mbertlab.pretrain.objective import Distiller
from mbertlab.pretrain.teacher_cache import TopkCache, cache_teacher_topk_into
from mbertlab.pretrain.loop import pretrain_into
from mbertlab.pretrain.model import new_model, pretraining_loss
from mbertlab.tokenizers.shards import ShardReader, ShardsConfig, write_shards_into
from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into
from tests.pretrain.test_training import RESUME_STEPS, RUN, TINY
from tests.conftest import NO_TASKS


def kl(q: list[float], p: list[float]) -> float:
    return sum(a * math.log(a / b) for a, b in zip(q, p))


def softmax(z: list[float], t: float) -> list[float]:
    e = [math.exp(v / t) for v in z]
    return [v / sum(e) for v in e]


# ---- the loss --------------------------------------------------------------------------------

@pytest.mark.parametrize("temperature", [1.0, 2.5])
def test_soft_loss_is_zero_when_logits_are_equal(temperature):
    logits = torch.randn(7, 50, generator=torch.Generator().manual_seed(0)) * 3
    assert abs(soft_label_loss(logits, logits.clone(), temperature).item()) < 1e-6
    assert soft_label_loss(logits, logits.flip(1), temperature).item() > 0.1


def test_soft_loss_equals_a_hand_computation_on_three_words():
    teacher, student = [[1.0, 2.0, 3.0], [0.0, 0.0, 2.0]], [[3.0, 1.0, 0.0], [0.5, -1.0, 0.0]]
    for t in (1.0, 2.0):
        want = t * t * (kl(softmax(teacher[0], t), softmax(student[0], t)) +
                        kl(softmax(teacher[1], t), softmax(student[1], t))) / 2
        got = soft_label_loss(torch.tensor(student), torch.tensor(teacher), t).item()
        assert got == pytest.approx(want, rel=1e-6)
    # T = 1, first position, by hand: q = (0.0900, 0.2447, 0.6652), p = (0.8438, 0.1142, 0.0420)
    assert soft_label_loss(torch.tensor(student[:1]), torch.tensor(teacher[:1])).item() == pytest.approx(
        0.0900 * math.log(0.0900 / 0.8438) + 0.2447 * math.log(0.2447 / 0.1142) + 0.6652 * math.log(0.6652 / 0.0420),
        abs=2e-3)


def test_soft_loss_gradient_matches_gradcheck_in_fp64():
    gen = torch.Generator().manual_seed(1)
    student = torch.randn(4, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    teacher = torch.randn(4, 6, dtype=torch.float64, generator=gen, requires_grad=True)
    assert torch.autograd.gradcheck(lambda s, t: soft_label_loss(s, t, 1.7), (student, teacher))
    # and the closed form: d/ds of T²·KL = T·(p − q) / M
    loss = soft_label_loss(student, teacher.detach(), 1.7)
    (grad,) = torch.autograd.grad(loss, student)
    want = 1.7 * (F.softmax(student / 1.7, -1) - F.softmax(teacher / 1.7, -1)) / 4
    assert torch.allclose(grad, want, atol=1e-12)


def test_top_k_renormalises_over_the_kept_words():
    gen = torch.Generator().manual_seed(2)
    student, teacher = torch.randn(5, 20, generator=gen), torch.randn(5, 20, generator=gen)
    q = F.softmax(teacher / 2.0, -1)
    full = soft_label_loss(student, teacher, 2.0, "none")
    everything = q.topk(20, dim=-1)
    assert torch.allclose(topk_soft_label_loss(student, everything.indices, everything.values, 2.0, "none"), full,
                          atol=1e-6)
    top1 = q.topk(1, dim=-1)  # k = 1: all mass on the teacher's argmax, i.e. T²·cross-entropy there
    want = 4.0 * -F.log_softmax(student / 2.0, -1).gather(1, top1.indices)[:, 0]
    assert torch.allclose(topk_soft_label_loss(student, top1.indices, top1.values, 2.0, "none"), want, atol=1e-6)
    assert topk_soft_label_loss(student, top1.indices, top1.values, 2.0, "sum").item() == pytest.approx(
        want.sum().item())


# ---- teachers in the loop --------------------------------------------------------------------

def train(shards: Path, out: Path, **keys) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    pretrain_into(PretrainConfig.model_validate({**TINY, "steps": 20, **keys}), shards, out)
    return out


@pytest.fixture(scope="module")
def teachers(tmp_path_factory, pair_shards) -> dict[str, str]:
    """Two different teachers over the src + fake vocabulary, one per language."""
    root = tmp_path_factory.mktemp("teachers")
    return {"src": str(train(pair_shards, root / "a", seed=3)), "fake": str(train(pair_shards, root / "b", seed=4))}


def replay(config: PretrainConfig, shards: Path) -> Iterator[MicroBatch]:
    """The loop's micro-batches of `config`."""
    sampler, masker = training_data(config, ShardReader(shards))
    state, rows = TrainState(config), config.batch_size // config.accumulation
    for index in range(config.steps * config.accumulation):
        yield state.draw(sampler, masker, rows, index)


def hf_logits(path: str, inputs: torch.Tensor) -> torch.Tensor:
    """Full-sequence logits from an independently loaded Hugging Face model."""
    with torch.no_grad():
        return AutoModelForMaskedLM.from_pretrained(str(Path(path) / "model")).eval()(input_ids=inputs).logits


@pytest.mark.numbers
def test_rows_are_distilled_from_their_own_languages_teacher(pair_shards, teachers):
    config = PretrainConfig.model_validate({**TINY, "objective": "distill", "teachers": teachers, "steps": 2,
                                            "mixing": "within_batch", "hard_weight": 0.3, "temperature": 1.5})
    shards = ShardReader(pair_shards)
    distiller = Distiller.from_config(config, shards)
    student = AutoModelForMaskedLM.from_pretrained(str(Path(teachers["src"]) / "model")).eval()
    vocab = {l: set(shards.tokens(l).tolist()) for l in shards.languages}
    for micro in replay(config, pair_shards):
        batch, inputs, labels, langs = micro.batch, micro.inputs, micro.labels, micro.batch.langs
        assert set(langs) == {"src", "fake"} and batch.lang == "mixed"
        assert all(set(batch.input_ids[r].tolist()) <= vocab[l] for r, l in enumerate(langs))
        chosen = labels != IGNORE
        with torch.no_grad():
            got = distiller.loss(student, micro)
            s = student(input_ids=inputs).logits
        by_lang = {l: hf_logits(p, inputs) for l, p in teachers.items()}
        t = torch.stack([by_lang[langs[r]][r] for r in range(len(langs))])  # [B, S, V], each row its teacher
        soft = soft_label_loss(s[chosen], t[chosen], 1.5)
        hard = F.cross_entropy(s[chosen], labels[chosen])
        assert got.item() == pytest.approx(0.3 * hard.item() + 0.7 * soft.item(), rel=1e-4)


@pytest.mark.numbers
def test_hard_weight_one_is_the_mlm_loss(pair_shards, teachers):
    config = PretrainConfig.model_validate({**TINY, "objective": "distill", "teachers": teachers, "steps": 1,
                                            "hard_weight": 1.0})
    distiller = Distiller.from_config(config, ShardReader(pair_shards))
    student = AutoModelForMaskedLM.from_pretrained(str(Path(teachers["fake"]) / "model"))
    for micro in replay(config, pair_shards):
        inputs, labels = micro.inputs, micro.labels
        masked = dataclasses.replace(micro.batch, input_ids=inputs)
        want = pretraining_loss(student, masked, Selection.of(labels))
        assert distiller.loss(student, micro).item() == pytest.approx(want.item(), rel=1e-6)


def test_cache_with_k_equal_to_the_vocabulary_gives_the_live_loss(tmp_path, pair_shards, teachers):
    keys = {**TINY, "objective": "distill", "teachers": teachers, "steps": 3, "accumulation": 2,
            "mixing": "within_batch", "temperature": 2.0}
    config = PretrainConfig.model_validate(keys)
    shards = ShardReader(pair_shards)
    cache_teacher_topk_into(config, pair_shards, tmp_path, shards.vocab_size)
    cached_config = PretrainConfig.model_validate({**keys, "teacher_cache": str(tmp_path)})
    live = Distiller.from_config(config, shards)
    cached = Distiller.from_config(cached_config, shards)
    assert cached.teachers is None  # no teacher runs
    student = AutoModelForMaskedLM.from_pretrained(str(Path(teachers["src"]) / "model")).eval()
    seen = 0
    for micro in replay(config, pair_shards):
        with torch.no_grad():
            a = live.loss(student, micro)
            b = cached.loss(student, micro)
        assert b.item() == pytest.approx(a.item(), rel=1e-3), micro.index  # probabilities are stored in float16
        seen += 1
    assert seen == 6
    with pytest.raises(ConfigError, match="other data"):
        TopkCache(tmp_path, PretrainConfig.model_validate({**keys, "seed": 1}), shards)
    with pytest.raises(ConfigError, match="micro-batches"):
        TopkCache(tmp_path, PretrainConfig.model_validate({**keys, "steps": 4}), shards)
    with pytest.raises(DataError, match="micro-batch 1"):  # the wrong entry for this batch
        cached.loss(student, dataclasses.replace(micro, index=1))
    runs = {name: train(pair_shards, tmp_path / name, **{**keys, **extra})  # the loop reads the right entries
            for name, extra in (("live", {}), ("cached", {"teacher_cache": str(tmp_path)}))}
    a, b = (load_file(str(out / "model" / "model.safetensors")) for out in runs.values())
    assert all(torch.allclose(a[k], b[k], atol=1e-3) for k in a)  # Adam steps of ~lr; measured max diff 3.7e-4
    (live_dev, cached_dev) = ([json.loads(l)["loss"] for l in (out / "metrics.jsonl").read_text().splitlines()]
                              for out in runs.values())
    assert cached_dev == pytest.approx(live_dev, rel=1e-4)


def test_ranks_slices_of_a_distillation_loss_sum_to_the_whole_micro_batch_gradient(tmp_path, pair_shards, teachers):
    """What DDP sums: the gradients of three ranks' slices (rows of two languages split among them, each rank's
    teachers grouped by language, its rows of the top-k cache) add up to the whole micro-batch's."""
    keys = {**TINY, "objective": "distill", "teachers": teachers, "steps": 1, "mixing": "within_batch",
            "hard_weight": 0.5, "temperature": 2.0}
    config, shards = PretrainConfig.model_validate(keys), ShardReader(pair_shards)
    cache_teacher_topk_into(config, pair_shards, tmp_path, 8)
    cached_config = PretrainConfig.model_validate({**keys, "teacher_cache": str(tmp_path)})
    student = AutoModelForMaskedLM.from_pretrained(str(Path(teachers["src"]) / "model")).eval()
    [micro] = replay(config, pair_shards)
    assert set(micro.batch.langs) == {"src", "fake"}  # rows of both languages
    for distiller in (Distiller.from_config(config, shards), Distiller.from_config(cached_config, shards)):
        student.zero_grad()
        distiller.loss(student, micro).backward()
        whole = [p.grad.clone() for p in student.parameters()]
        student.zero_grad()
        for rank in range(3):
            distiller.loss(student, micro.shard(rank, 3)).backward()
        assert all(torch.allclose(g, p.grad, atol=1e-6) for g, p in zip(whole, student.parameters()))


def test_bad_teacher_settings_are_config_errors(tmp_path, pair_shards, teachers):
    shards = ShardReader(pair_shards)
    def make(**k):
        return PretrainConfig.model_validate({**TINY, "objective": "distill", **k})

    with pytest.raises(ConfigError, match="missing"):
        Distiller.from_config(make(teachers={"src": teachers["src"]}), shards)
    with pytest.raises(ConfigError, match="neither"):
        Distiller.from_config(make(teachers={**teachers, "src": str(tmp_path)}), shards)
    new_model(ModelShape(layers=1, hidden=8, heads=1), shards.vocab_size + 1).save_pretrained(str(tmp_path / "odd"))
    with pytest.raises(ConfigError, match="vocabulary"):
        Distiller.from_config(make(teachers={**teachers, "src": str(tmp_path / "odd")}), shards)
    with pytest.raises(ConfigError, match="nsp"):
        Distiller.from_config(make(teachers=teachers, nsp=True, layout="pairs"), shards)


def test_distillation_resumes_bitwise_after_sigkill(tmp_path, pair_shards, teachers):
    script = tmp_path / "run.py"
    script.write_text(RUN)
    config = json.dumps({**TINY, "steps": RESUME_STEPS, "objective": "distill", "teachers": teachers,
                         "hard_weight": 0.5, "mixing": "within_batch"})
    straight, resumed = tmp_path / "straight", tmp_path / "resumed"
    for d in (straight, resumed):
        d.mkdir()
    subprocess.run([sys.executable, str(script), config, str(pair_shards), str(straight)], check=True)
    proc = subprocess.Popen([sys.executable, str(script), config, str(pair_shards), str(resumed)])
    deadline = time.time() + 120
    while not list_checkpoints(resumed) and time.time() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert not (resumed / "model").exists() and list_checkpoints(resumed)[-1][0] < RESUME_STEPS
    subprocess.run([sys.executable, str(script), config, str(pair_shards), str(resumed)], check=True)
    a = load_file(str(straight / "model" / "model.safetensors"))
    b = load_file(str(resumed / "model" / "model.safetensors"))
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert (straight / "metrics.jsonl").read_text() == (resumed / "metrics.jsonl").read_text()


# ---- a student learns more from a well-trained teacher than from a small corpus ----------------

def small_and_large_shards(root: Path, large: int = 3000, small: int = 300) -> tuple[Path, Path]:
    """One generated language: shards of its first `small` and of all `large` training sentences, sharing one
    vocabulary and one dev set."""
    gen, tok = root / "gen", root / "tok"
    generate_into(preset_config("quick", 0, {"sentences": {"train": large, "dev": 200, "test": 10},
                                               "tasks": NO_TASKS}), gen)
    text = gen / "src" / "text"
    (root / "small.txt").write_text("".join((text / "train.txt").read_text().splitlines(True)[:small]))
    tok.mkdir()
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=2000, languages=["src"]),
                         {"src": text / "train.txt"}, tok)
    for name, train_text in (("small", root / "small.txt"), ("large", text / "train.txt")):
        (root / name).mkdir()
        write_shards_into(ShardsConfig(languages=["src"]), tok,
                          {"src": {"train": train_text, "dev": text / "dev.txt"}}, root / name)
    return root / "small", root / "large"


@pytest.mark.slow
def test_a_student_of_a_teacher_on_10x_the_data_beats_hard_labels(tmp_path):
    small, large = small_and_large_shards(tmp_path)
    keys = {**TINY, "batch_size": 16, "lr": 3e-3, "warmup": 30, "eval_batches": 2, "steps": 1000,
            "checkpoint_every": 500}
    teacher = train(large, tmp_path / "teacher", **{**keys, "steps": 2000})
    hard = train(small, tmp_path / "hard", **keys)
    student = train(small, tmp_path / "student", **keys, objective="distill", teachers={"src": str(teacher)})
    final = {name: json.loads((out / "metrics.jsonl").read_text().splitlines()[-1])
             for name, out in (("teacher", teacher), ("hard", hard), ("student", student))}
    # measured: teacher 2.99 / 0.459, hard labels 3.88 / 0.359, student 3.17 / 0.423 (loss / MRR)
    # Margins (hard − student loss / student − hard MRR) over seeds 0, 1, 2 (2026-11-24; seeds 1-2 on 1 thread):
    # these settings 0.71 / 0.063, 0.45 / 0.060, 0.86 / 0.091; half of every step count (teacher 1000, students
    # 500) 0.37 / 0.054, 0.28 / 0.066, 0.12 / 0.047, which fails the loss margin on 2 of 3 seeds: not shrunk.
    assert final["student"]["loss"] < final["hard"]["loss"] - 0.3, final
    assert final["student"]["mrr"] > final["hard"]["mrr"] + 0.03, final


# ---- balance (Eq. 3) and config hashes ---------------------------------------------------------

def test_balance_score_and_final_mrr(tmp_path):
    rows = [{"step": 10, "lang": "a", "mrr": 0.1}, {"step": 10, "lang": "b", "mrr": 0.2},
            {"step": 20, "lang": "a", "mrr": 0.5}, {"step": 20, "lang": "b", "mrr": 0.3},
            {"step": 20, "lang": "c", "mrr": 0.9}]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps({**r, "loss": 1.0}) + "\n" for r in rows))
    model = final_mrr(tmp_path)
    assert model == {"a": 0.5, "b": 0.3, "c": 0.9}
    balance = balance_score(model, {"a": 0.4, "b": 0.6, "c": 0.8}, {"low": ["a", "b"], "high": ["c"]})
    assert balance.per_language == pytest.approx({"a": 0.1, "b": -0.3, "c": 0.1})
    assert balance.groups == pytest.approx({"low": -0.1, "high": 0.1, "all": (0.1 - 0.3 + 0.1) / 3})
    with pytest.raises(ConfigError):
        balance_score(model, {"a": 0.4}, {})
    (tmp_path / "metrics.jsonl").write_text('{"step": 1}\n')
    with pytest.raises(DataError, match=":1: expected"):
        final_mrr(tmp_path)


@pytest.mark.numbers
def test_teachers_are_scored_on_the_students_dev_batches(pair_shards, teachers):
    """A model scored as everyone's teacher on its own run's dev batches gets the MRR its run logged."""
    own = Path(teachers["src"])
    config = PretrainConfig.model_validate({**TINY, "seed": 3, "objective": "distill",
                                            "teachers": {"src": str(own), "fake": str(own)}})
    scored = teacher_dev_mrr(config, pair_shards)
    assert scored == final_mrr(own)
    assert balance_score(final_mrr(own), scored, {"low": ["fake"]}).groups == {"low": 0.0, "all": 0.0}


def test_configs_without_distillation_keys_keep_their_hash():
    assert PretrainConfig().content_hash() == "6f1b361ea9414025"  # the hash before distillation existed
    assert PretrainConfig(steps=7, permute={"a": 0.5}).content_hash() == "61226c822fe9dcab"
    distill = PretrainConfig(objective="distill", teachers={"a": "t"})
    assert distill.content_hash() != PretrainConfig().content_hash()
    assert PretrainConfig.model_validate(json.loads(distill.canonical_json())) == distill


def test_teacher_cache_command_writes_a_cache_that_a_student_reads(tmp_path, pair_shards, teachers):
    import yaml

    from mbertlab.cli.main import run

    student = {**TINY, "objective": "distill", "teachers": teachers, "steps": 3}
    (tmp_path / "student.yaml").write_text(yaml.safe_dump(student), encoding="utf-8")
    args = ["-w", str(tmp_path / "work"), "teacher-cache", str(tmp_path / "student.yaml"), "--shards",
            str(pair_shards), "--k", "5"]
    assert run(args) == 0
    cache = next((tmp_path / "work" / "teacher_cache").glob("[!.]*")) / "cache"
    meta = json.loads((cache / "meta.json").read_text())
    assert meta["k"] == 5 and meta["micro_batches"] == 3
    # the student trains from the cache alone (TopkCache checks the data fingerprint and every gold id)
    train(pair_shards, tmp_path / "student", **{**student, "teacher_cache": str(cache)})
    assert (tmp_path / "student" / "model" / "model.safetensors").is_file()
    assert run(args + ["--set", "objective=mlm"]) == 1  # not a distillation config
