"""Process-level settings for training: threads, allocator, seeds, and the device and precision a stage runs on."""
from __future__ import annotations

import ctypes
import os
import random


def cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def tune_malloc() -> None:
    """Keep freed memory in glibc's heap: big per-step tensors otherwise page-fault every step.

    Measured here (shared notes): up to 1.8x on a full MLM head. Same effect as
    MALLOC_MMAP_MAX_=0 MALLOC_TRIM_THRESHOLD_=<large>, but applied from inside the process.
    """
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return
    m_trim_threshold, m_mmap_max = -1, -4
    libc.mallopt(m_mmap_max, 0)
    libc.mallopt(m_trim_threshold, 1 << 36)


def default_threads() -> int:
    """Threads for torch: `MBERTLAB_THREADS` when a parallel runner splits the cores, else all cores."""
    env = os.environ.get("MBERTLAB_THREADS", "")
    return int(env) if env.isdigit() and int(env) > 0 else cpu_count()


def setup_torch(threads: int | None = None) -> None:
    import torch

    torch.set_num_threads(threads or default_threads())
    tune_malloc()
    quiet_hub_progress()


def quiet_hub_progress() -> None:
    """Hugging Face prints a progress bar per saved file; our own bars say what is happening."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        return
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()  # e.g. the report of unused MLM-head weights when loading an encoder


def seed_everything(seed: int) -> None:
    """Seed Python, NumPy and torch (if imported) from one integer."""
    import numpy as np

    random.seed(seed)
    np.random.seed(seed % (2**32))
    try:
        import torch
    except ImportError:
        return
    torch.manual_seed(seed)


# ---- the device a stage runs on ----------------------------------------------------------------

DEVICE_SETTING = r"^(auto|cpu|cuda(:\d+)?)$"  # what a config's `device` accepts
RUNTIME_FILE = "runtime.json"  # what a stage ran on; the artifact store moves it into meta.json


def local_rank(visible: int) -> int:
    """This process's GPU among the `visible` ones: LOCAL_RANK under torchrun; under srun SLURM_LOCALID when the
    node's tasks share its GPUs (that many visible), else 0 (one GPU per task: each task sees only its own)."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    slurm = int(os.environ.get("SLURM_LOCALID", "0"))
    return slurm if slurm < visible else 0


def resolve_device(setting: str = "auto"):
    """The torch.device of a `device` setting: auto is this rank's GPU when CUDA is there, else the CPU; `cuda`
    is this rank's GPU (LOCAL_RANK under torchrun); `cuda:N` is GPU N."""
    import re

    import torch

    if not re.fullmatch(DEVICE_SETTING, setting):
        from mbertlab.errors import ConfigError

        raise ConfigError(f"key 'device': expected auto, cpu, cuda or cuda:N, got {setting!r}")
    if setting == "cpu" or (setting == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    return _accelerator(int(setting.split(":")[1]) if ":" in setting else local_rank(torch.cuda.device_count()),
                        setting)


def _accelerator(index: int, setting: str):
    """GPU `index`, made current, with TF32 for fp32 matmuls and convolutions (tests swap in a simulated one)."""
    import torch

    from mbertlab.errors import ConfigError

    if not torch.cuda.is_available():
        raise ConfigError(f"key 'device': {setting!r} needs a CUDA GPU and none is visible (use cpu or auto)")
    if index >= torch.cuda.device_count():
        raise ConfigError(f"key 'device': {setting!r}: GPU {index} asked for, {torch.cuda.device_count()} visible")
    torch.cuda.set_device(index)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    return torch.device("cuda", index)


CPU_BF16_ENV = "MBERTLAB_CPU_BF16"  # 0 or 1: force bf16_supported's answer, to test as on the other kind of CPU


def bf16_supported() -> bool:
    """The CPU has native bf16 (AVX512-BF16 or AMX): autocast there measured 2-3x faster than fp32.

    `MBERTLAB_CPU_BF16=0|1` forces the answer, so one machine can run the tests as a CPU of the other kind does
    (bf16 autocast works on any CPU, only slower)."""
    forced = os.environ.get(CPU_BF16_ENV, "")
    if forced:
        if forced not in ("0", "1"):
            from mbertlab.errors import ConfigError

            raise ConfigError(f"environment variable {CPU_BF16_ENV}: expected 0 or 1, got {forced!r}")
        return forced == "1"
    import torch

    return bool(torch.cpu._is_avx512_bf16_supported()  # AVX512-BF16; AMX CPUs (Sapphire Rapids on) have it too
                or getattr(torch.backends.cpu, "get_cpu_capability", lambda: "")() == "AMX")


def resolve_precision(setting: str, device) -> str:
    """bf16 or fp32: `auto` is bf16 where the device runs it natively (a CUDA GPU that supports it, a CPU with
    AVX512-BF16/AMX), fp32 elsewhere."""
    if setting != "auto":
        return setting
    import torch

    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    return "bf16" if device.type == "cpu" and bf16_supported() else "fp32"


def autocast_factory(device, precision: str):
    """A factory of the autocast context for a resolved precision on `device` (bf16 autocast, or nothing)."""
    import contextlib

    import torch

    if precision == "bf16":
        return lambda: torch.autocast(device.type, dtype=torch.bfloat16)
    return contextlib.nullcontext


def attention_for(device, configured: str = "eager") -> str:
    """Hugging Face attention: SDPA (flash / memory-efficient kernels) on CUDA; on the CPU the configured one
    (eager measured fastest in bf16 here, shared notes section 3)."""
    return "sdpa" if device.type == "cuda" else configured


def attention_bias(mask, attention: str):
    """Hugging Face's 4-D attention mask from a padding mask ([B, S] with 1 at tokens, or [B, 1, 1, S] bool), made
    without its check of whether the mask could be dropped (`padding_mask.all()`: a read of the device on every
    forward): for eager attention the additive bias Hugging Face makes (0 at tokens, fp32's minimum at padding),
    for SDPA a boolean mask. A batch known on the CPU to have no padding passes None instead."""
    import torch

    if mask is None:
        return None
    mask = (mask[:, None, None, :] if mask.dim() == 2 else mask).bool()  # [B, 1, 1, S]
    if attention == "sdpa":
        return mask.expand(-1, -1, mask.shape[-1], -1)  # [B, 1, S, S]
    return torch.where(mask, 0.0, torch.finfo(torch.float32).min)


def to_device(tensor, device):
    """`tensor` on `device`; to a GPU through pinned memory with an asynchronous copy, on the CPU untouched."""
    if tensor is None or tensor.device == device:
        return tensor
    if device.type == "cuda":
        return tensor.pin_memory().to(device, non_blocking=True)
    return tensor.to(device)


def processor_name() -> str:
    """The CPU model (/proc/cpuinfo's model name where there is one)."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def ran_on(device, precision: str) -> dict:
    """What a stage ran on: the resolved device and precision, the GPU's name on CUDA, the processor."""
    import torch

    ran = {"device": str(device), "precision": precision, "processor": processor_name()}
    if device.type == "cuda":
        ran["gpu"] = torch.cuda.get_device_name(device)
    return ran


def record_runtime(out, device, precision: str) -> None:
    """Write `ran_on` into a stage's build directory (`RUNTIME_FILE`; the store moves it into meta.json)."""
    import json
    from pathlib import Path

    (Path(out) / RUNTIME_FILE).write_text(json.dumps(ran_on(device, precision), indent=1) + "\n", encoding="utf-8")
