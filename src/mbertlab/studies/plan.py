"""What a study run would build and cost, before it runs: every stage by kind with what exists already, and
for each pretraining its shape, parameters, tokens, device-hours and disk (`mbertlab study plan`).

No model is built: parameters and FLOPs come from `pretrain.cost`'s formulas. The vocabulary is the one the
tokenizer will really reach: the built tokenizer's when it exists, else a tokenizer trained here on a sample
of the spec's text (`studies.vocab`). The device-hour model is stated in docs/devices.md ("Planning a run").
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.cost import (
    bert_parameters,
    checkpoint_bytes,
    flops_per_token,
    passes,
    resolved,
    tokens_processed,
)
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.studies.runner import JobStatus, study_status
from mbertlab.studies.spec import StudySpec

# The throughput model (docs/devices.md). GPU: measured on one H100 80GB HBM3 (2026-11-27, bf16, the package's
# own loop, benchmarks/plan_gpu_rate.py): BERT-base ran at 26.5% of the 989 TFLOP/s peak; a small model's
# micro-batch takes at least 11.8 ms + 3.5 ms a layer in one process (the host's launches); and 16 such processes
# at once on the one GPU (`study run`'s default jobs on that 16-core machine) did 6.9x one process's steps.
GPU_NAME = "NVIDIA H100 (bf16 dense peak 989 TFLOP/s)"
GPU_PEAK_FLOPS = 989e12
GPU_MFU = 0.265
LAUNCH_S = (11.8e-3, 3.5e-3)  # a micro-batch's floor on the GPU in one process: 11.8 ms + 3.5 ms per layer
GPU_JOBS, GPU_JOBS_OVERLAP = 16, 6.9  # launch-bound processes at once on one GPU, and their summed speed-up
# CPU: measured on the 2-core development machine (2026-11-25, fp32, the loop's masked-only step, median of
# 20 steps with other jobs running): 59.5 GFLOP/s at k2020's lab shape (4 x 128, batch 64 x 16).
CPU_NAME = "the 2-core development CPU (fp32, measured 2026-11-25)"
CPU_FLOPS = 59.5e9
PRETRAIN_KINDS = ("pretrain", "student")


@dataclass
class PretrainEstimate:
    label: str
    kind: str
    hash: str
    state: str
    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab: int
    vocab_from: str  # where the vocabulary size comes from (a built tokenizer, a sample, an encoder)
    parameters: int
    tokens: int
    flops: float
    gpu_hours: float
    cpu_hours: float
    disk_bytes: int
    tags: dict[str, str] = field(default_factory=dict)
    epochs: float | None = None  # set: the run resolves its steps from the shards; `tokens` counts the spec's steps
    passes: dict[str, float] = field(default_factory=dict)  # language -> passes over its training text (`passes`)


@dataclass
class KindTotal:
    kind: str
    jobs: int = 0
    done: int = 0
    partial: int = 0
    missing: int = 0
    tokens: int = 0
    gpu_hours: float = 0.0  # one process each
    gpu_compute_hours: float = 0.0  # of which the FLOPs at the measured MFU: what running jobs at once cannot share
    cpu_hours: float = 0.0
    disk_bytes: int = 0
    unestimated: int = 0  # jobs whose cost the plan does not estimate

    def add(self, tokens: int, gpu_hours: float, cpu_hours: float, disk_bytes: int, compute_hours: float) -> None:
        self.tokens += tokens
        self.gpu_hours += gpu_hours
        self.gpu_compute_hours += compute_hours
        self.cpu_hours += cpu_hours
        self.disk_bytes += disk_bytes


@dataclass
class SliceEstimate:
    name: str
    jobs: int
    missing: int
    pretrains: int
    gpu_wall_minutes: float  # `wall_seconds` of its jobs on one GPU


@dataclass
class StudyPlan:
    study: str
    scale: str
    kinds: list[KindTotal]
    pretrains: list[PretrainEstimate]
    warnings: list[str]
    model: dict = field(default_factory=dict)  # the throughput model's constants
    slices: list[SliceEstimate] = field(default_factory=list)  # with `plan_study(..., slices=True)`
    after_merge: list[str] = field(default_factory=list)  # labels of the jobs built after merging slices

    @property
    def gpu_hours(self) -> float:
        return sum(k.gpu_hours for k in self.kinds)

    @property
    def gpu_wall_hours(self) -> float:
        """`study run` on one GPU with GPU_JOBS jobs: launch-bound stages overlap up to the measured factor,
        compute cannot (dependencies between stages are not modelled)."""
        return max(sum(k.gpu_compute_hours for k in self.kinds), self.gpu_hours / GPU_JOBS_OVERLAP)

    def to_dict(self) -> dict:
        return {**asdict(self), "gpu_hours": self.gpu_hours, "gpu_wall_hours": self.gpu_wall_hours,
                "cpu_hours": sum(k.cpu_hours for k in self.kinds)}


def throughput_model() -> dict:
    return {"gpu": GPU_NAME, "gpu_peak_flops": GPU_PEAK_FLOPS, "gpu_mfu": GPU_MFU,
            "gpu_micro_batch_floor_s": f"{LAUNCH_S[0]} + {LAUNCH_S[1]} x layers", "gpu_jobs": GPU_JOBS,
            "gpu_jobs_overlap": GPU_JOBS_OVERLAP, "cpu": CPU_NAME,
            "cpu_flops": CPU_FLOPS, "flops_per_token": "6 x encoder matmul weights + 12 x layers x seq_len x "
            "hidden + 6 x mask_prob x (hidden^2 + vocab x hidden)"}


def micro_batch_floor(layers: int) -> float:
    """Seconds a micro-batch takes on the GPU at least (kernel launches), whatever its FLOPs."""
    return LAUNCH_S[0] + LAUNCH_S[1] * layers


def gpu_compute_seconds(flops: float) -> float:
    return flops / (GPU_PEAK_FLOPS * GPU_MFU)


def gpu_seconds(config: PretrainConfig, flops: float) -> float:
    """Compute at the measured MFU, or the micro-batches' launch floor where that is longer (small models)."""
    floor = config.steps * config.accumulation * micro_batch_floor(config.model.layers)
    return max(gpu_compute_seconds(flops), floor)


def estimate(status: JobStatus, vocab: int, vocab_from: str, text: dict[str, float] | None = None) -> PretrainEstimate:
    """A pretraining's cost; a run by `epochs` at the steps it resolves from `text` (its languages' tokens) when
    known, else at the spec's `steps`."""
    job, config = status.job, resolved(status.job.config, text)
    shape = config.model
    parameters = bert_parameters(shape, vocab, nsp=config.nsp)
    tokens = tokens_processed(config)
    flops = tokens * flops_per_token(config, vocab)
    if job.kind == "student":  # each row also runs its language's teacher forward (2 x its matmul weights)
        flops += tokens * max((flops_per_token(t.config, vocab) / 3 for t in job.inputs[1:]
                               if t.kind == "pretrain"), default=0.0)
    return PretrainEstimate(
        job.label, job.kind, status.hash, status.state, shape.layers, shape.hidden, shape.heads,
        shape.intermediate or 4 * shape.hidden, vocab, vocab_from, parameters, tokens, flops,
        gpu_seconds(config, flops) / 3600, flops / CPU_FLOPS / 3600,
        checkpoint_bytes(parameters, config.keep_checkpoints), dict(job.tags), config.epochs)


def plan_study(spec: StudySpec, store: ArtifactStore, overrides: list[str] = (), slices: bool = False) -> StudyPlan:
    """Every job of the study with its state, the pretrainings' estimates, totals per kind and the warnings;
    with `slices`, each slice's GPU wall time (`studies.slices`)."""
    from mbertlab.studies.plan_warnings import plan_warnings
    from mbertlab.studies.vocab import VocabProbe

    statuses = study_status(spec, store)
    probe = VocabProbe(store)
    costs: dict = {}
    try:
        totals, pretrains = _estimates(statuses, probe, costs)
    finally:
        probe.close()
    warnings = plan_warnings(spec, pretrains, probe.shortfalls, overrides)
    plan = StudyPlan(spec.name, spec.scale, list(totals.values()), pretrains, warnings, throughput_model())
    if slices:
        _add_slices(plan, spec, statuses, costs)
    return plan


def wall_seconds(jobs: list, costs: dict) -> float:
    """Jobs run side by side on one GPU (`study run`'s GPU_JOBS processes): the most of their compute (which
    cannot overlap), their single-process time over the measured overlap, and the longest chain of jobs that
    wait on each other (a pretraining, then its slowest fine-tuning). Costs: job -> (GPU s, compute s)."""
    chain: dict = {}
    for job in jobs:  # inputs first
        chain[job] = costs.get(job, (0.0, 0.0))[0] + max((chain.get(i, 0.0) for i in job.inputs), default=0.0)
    gpu = sum(costs.get(j, (0.0, 0.0))[0] for j in jobs)
    compute = sum(costs.get(j, (0.0, 0.0))[1] for j in jobs)
    return max(compute, gpu / GPU_JOBS_OVERLAP, max(chain.values(), default=0.0))


def _add_slices(plan: StudyPlan, spec: StudySpec, statuses: list[JobStatus], costs: dict) -> None:
    from mbertlab.studies.slices import study_slicing

    state = {s.job: s.state for s in statuses}
    cut = study_slicing(spec)
    for sl in cut.slices:
        todo = [j for j in sl.jobs if state.get(j) != "done"]
        plan.slices.append(SliceEstimate(sl.name, len(sl.jobs), len(todo),
                                         sum(j.kind in PRETRAIN_KINDS for j in sl.jobs),
                                         wall_seconds(todo, costs) / 60))
    plan.after_merge = [j.label for j in cut.after_merge]


def _estimates(statuses: list[JobStatus], probe, costs: dict) -> tuple[dict[str, KindTotal], list[PretrainEstimate]]:
    """Pretrainings by formula, fine-tunings roughly (`studies.transfer_cost`); other kinds are counted only.
    `costs` receives each estimated job's (GPU seconds, compute seconds)."""
    from mbertlab.studies.transfer_cost import Encoder, transfer_cost

    totals: dict[str, KindTotal] = {}
    pretrains, shapes = [], {}
    for status in statuses:
        job = status.job
        total = totals.setdefault(job.kind, KindTotal(job.kind))
        total.jobs += 1
        setattr(total, status.state, getattr(total, status.state) + 1)
        if job.kind in PRETRAIN_KINDS:
            vocab = probe.vocab(job.inputs[0])  # trains the sample's tokenizer that counts the text's tokens
            text = probe.text_tokens(job.inputs[0])
            est = estimate(status, *vocab, text)
            est.passes = passes(job.config, text)
            pretrains.append(est)
            shapes[job] = Encoder(est.layers, est.hidden, est.intermediate)
            total.add(est.tokens, est.gpu_hours, est.cpu_hours, est.disk_bytes, gpu_compute_seconds(est.flops) / 3600)
            costs[job] = (est.gpu_hours * 3600, gpu_compute_seconds(est.flops))
        elif job.kind == "transfer" and (cost := transfer_cost(job, shapes, micro_batch_floor)) is not None:
            flops, floor = cost
            compute = gpu_compute_seconds(flops)
            total.add(0, max(compute, floor) / 3600, flops / CPU_FLOPS / 3600, 0, compute / 3600)
            costs[job] = (max(compute, floor), compute)
        else:
            total.unestimated += 1
    return totals, pretrains
