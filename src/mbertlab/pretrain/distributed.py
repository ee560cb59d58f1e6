"""Data parallelism through PyTorch's DistributedDataParallel: every rank draws the same global batch (same
seeded generators) and keeps its slice; each rank's loss is normalised by the global number of masked tokens, so
the gradient summed over ranks is exactly the gradient of one process on the whole batch.

Ranks come from torchrun's environment (RANK, WORLD_SIZE, MASTER_ADDR/PORT) or SLURM's for `srun`
(SLURM_PROCID, SLURM_NTASKS, the job's first node as master); gloo on the CPU, NCCL on GPUs (each rank on its
local GPU: `runtime.resolve_device`). The process group times out (`MBERTLAB_DIST_TIMEOUT`, seconds), so a rank
that dies or hangs makes the others fail with one line rather than wait for ever.
"""
from __future__ import annotations

import atexit
import contextlib
import os
import re
import subprocess
from dataclasses import dataclass
from datetime import timedelta

import torch

from mbertlab.errors import MbertlabError

DEFAULT_TIMEOUT_S = 1800  # rank 0 evaluates and checkpoints while the others wait in the next all-reduce


class RankError(MbertlabError):
    """Another rank of a data-parallel run died, hung past the timeout, or could not be reached."""

    # After the one-line error the process leaves at once: with a peer gone, destroying the process group's
    # threads at interpreter exit can abort ("terminate called without an active exception", SIGABRT), seen
    # under load in tests/pretrain/test_ddp.py.
    abandon_process = True


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def wrap(self, module: torch.nn.Module) -> torch.nn.Module:
        """`module` under DistributedDataParallel when there are several ranks (bucketed all-reduces overlapped
        with the backward); BERT has no running statistics, so buffers are not re-broadcast every forward."""
        if self.size == 1:
            return module
        from torch.nn.parallel import DistributedDataParallel

        return DistributedDataParallel(module, forward_sync_buffers=False)

    def sum(self, value: torch.Tensor) -> torch.Tensor:
        """The sum over ranks of a tensor on this rank's device (NCCL reduces GPU tensors only)."""
        if self.size == 1:
            return value
        import torch.distributed as dist

        total = value.clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        return total

    def broadcast(self, value):
        """Rank 0's `value` (a picklable object) on every rank."""
        if self.size == 1:
            return value
        import torch.distributed as dist

        box = [value if self.main else None]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, value) -> list:
        """Every rank's `value`, in rank order, on every rank."""
        if self.size == 1:
            return [value]
        import torch.distributed as dist

        out = [None] * self.size
        dist.all_gather_object(out, value)
        return out

    def barrier(self) -> None:
        if self.size > 1:
            import torch.distributed as dist

            dist.barrier()

    def close(self) -> None:
        """Leave the process group once every rank has passed the final barrier: a gloo group left for the
        interpreter's exit to tear down, while a peer closes its side, can abort the process (a rerun's rank 0 ended
        in SIGABRT once in a fresh-clone CI run)."""
        if self.size > 1:
            leave_group()

    @contextlib.contextmanager
    def failures(self, stage: str):
        """Turn a failed collective (a peer gone, or past the timeout) into one line naming this rank."""
        try:
            yield
        except RuntimeError as err:
            if self.size == 1 or not collective_failure(err):
                raise
            raise RankError(f"{stage}: rank {self.rank} of {self.size}: another rank failed or stopped answering "
                            f"({short(err)})") from err


def collective_failure(err: BaseException) -> bool:
    """A process-group error: torch's own kinds, or the RuntimeError that gloo's and NCCL's transports raise
    inside DDP's reducer."""
    import torch.distributed as dist

    return isinstance(err, dist.DistError) or bool(re.search(r"gloo|nccl|c10d|ProcessGroup", str(err), re.I))


def short(err: BaseException) -> str:
    """The gist of a backend's message: its first sentence, without the source location in brackets."""
    text = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return re.sub(r"^\[[^\]]*\]\s*", "", text).split(". ")[0]


def no_sync(module: torch.nn.Module):
    """DistributedDataParallel's `no_sync` (gradients accumulate locally, no all-reduce), a no-op otherwise."""
    return module.no_sync() if hasattr(module, "no_sync") else contextlib.nullcontext()


def world_from_env(device: torch.device | None = None) -> World:
    """The process group described by torchrun's or SLURM's environment (one process when neither), set up once
    through env://: NCCL when this rank runs on a GPU, gloo otherwise."""
    size = int(os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "1")))
    rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
    if size > 1:
        import torch.distributed as dist

        if not dist.is_initialized():
            os.environ.update(RANK=str(rank), WORLD_SIZE=str(size))
            if "MASTER_ADDR" not in os.environ:  # srun: torchrun would have set both
                os.environ["MASTER_ADDR"] = slurm_master()
                os.environ.setdefault("MASTER_PORT", str(20000 + int(os.environ.get("SLURM_JOB_ID", "0")) % 20000))
            cuda = device is not None and device.type == "cuda"
            timeout = timedelta(seconds=float(os.environ.get("MBERTLAB_DIST_TIMEOUT", DEFAULT_TIMEOUT_S)))
            try:
                dist.init_process_group("nccl" if cuda else "gloo", init_method="env://", timeout=timeout,
                                        device_id=device if cuda else None)
            except dist.DistError as err:
                raise RankError(f"rank {rank} of {size}: no process group at {os.environ['MASTER_ADDR']}:"
                                f"{os.environ.get('MASTER_PORT')} ({short(err)})") from err
            atexit.register(leave_group)
    return World(rank, size)


def leave_group() -> None:
    """Destroy the process group while the interpreter is still whole. Left to interpreter teardown, gloo's
    worker threads can release tensors after Python is gone and the process ends in SIGABRT ("terminate called
    without an active exception"; pytorch/pytorch#190489): both srun ranks of a test did so in CI."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def slurm_master() -> str:
    """The job's first node: `scontrol show hostnames` where SLURM's tools are, else SLURM_JOB_NODELIST parsed
    (`gpu[03-05,9],cpu1` -> gpu03); 127.0.0.1 outside SLURM."""
    nodes = os.environ.get("SLURM_JOB_NODELIST", os.environ.get("SLURM_NODELIST", ""))
    if not nodes:
        return "127.0.0.1"
    try:
        shown = subprocess.run(["scontrol", "show", "hostnames", nodes], capture_output=True, text=True, timeout=30)
        if shown.returncode == 0 and shown.stdout.split():
            return shown.stdout.split()[0]
    except (OSError, subprocess.TimeoutExpired):
        pass
    return first_node(nodes)


def first_node(nodelist: str) -> str:
    """The first host of a SLURM node list (`gpu[03-05,9],cpu1` -> gpu03)."""
    match = re.match(r"([^,\[]*)(?:\[([^\]]*)\])?", nodelist.strip())
    prefix, ranges = match.group(1), match.group(2)
    return prefix + ranges.split(",")[0].split("-")[0] if ranges else prefix
