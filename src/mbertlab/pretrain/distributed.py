"""Data parallelism without a wrapper: every rank draws the same global batch (same seeded generators),
keeps its slice, and gradients are summed across ranks, with each rank's loss normalised by the global
number of masked tokens — so N processes compute exactly the gradient of one process on the whole batch.

Ranks come from torchrun (RANK, WORLD_SIZE, MASTER_ADDR/PORT) or SLURM (SLURM_PROCID, SLURM_NTASKS);
gloo on CPU, nccl on GPU (each rank on its LOCAL_RANK GPU: `runtime.resolve_device`).
"""
from __future__ import annotations

import os
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class World:
    rank: int = 0
    size: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def shard(self, batch: torch.Tensor) -> torch.Tensor:
        """This rank's contiguous slice of the rows of a global batch."""
        n = batch.shape[0]
        return batch[n * self.rank // self.size: n * (self.rank + 1) // self.size]

    def sum_gradients(self, parameters) -> None:
        if self.size == 1:
            return
        import torch.distributed as dist

        for p in parameters:
            if p.grad is not None:
                dist.all_reduce(p.grad, op=dist.ReduceOp.SUM)

    def sum(self, value: torch.Tensor) -> torch.Tensor:
        """The sum over ranks of a tensor on this rank's device (nccl reduces GPU tensors only)."""
        if self.size == 1:
            return value
        import torch.distributed as dist

        total = value.clone()
        dist.all_reduce(total, op=dist.ReduceOp.SUM)
        return total

    def barrier(self) -> None:
        if self.size > 1:
            import torch.distributed as dist

            dist.barrier()


def world_from_env(device: torch.device | None = None) -> World:
    """The process group described by torchrun's or SLURM's environment (one process when neither): nccl when
    this rank runs on a GPU, gloo otherwise."""
    size = int(os.environ.get("WORLD_SIZE", os.environ.get("SLURM_NTASKS", "1")))
    rank = int(os.environ.get("RANK", os.environ.get("SLURM_PROCID", "0")))
    if size > 1:
        import torch.distributed as dist

        if not dist.is_initialized():
            os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
            os.environ.setdefault("MASTER_PORT", "29511")
            backend = "nccl" if device is not None and device.type == "cuda" else "gloo"
            dist.init_process_group(backend, rank=rank, world_size=size)
    return World(rank, size)
