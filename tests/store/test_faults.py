"""`storage_fault` on the errors that carry no errno: torch's writer on a full disk says only that a write fell
short (message as raised by `torch.save` onto a full 1 MiB tmpfs), so the free space decides what the line says."""
from __future__ import annotations

import shutil
from collections import namedtuple

from mbertlab.store.faults import NO_SPACE, storage_fault

TORCH_SHORT_WRITE = RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos 576 vs 534")


def test_a_short_torch_write_on_a_nearly_full_disk_is_no_space(tmp_path, monkeypatch):
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(shutil, "disk_usage", lambda path: usage(2**30, 2**30 - 4096, 4096))
    where = tmp_path / "pretrain" / "abc"
    assert str(storage_fault(TORCH_SHORT_WRITE, where)) == f"{where}: {NO_SPACE}"


def test_a_short_torch_write_with_space_left_says_only_that_writing_failed(tmp_path):
    assert shutil.disk_usage(tmp_path).free >= 2**20
    line = str(storage_fault(TORCH_SHORT_WRITE, tmp_path / "x"))
    assert line == f"{tmp_path}/x: writing a file failed (torch: {TORCH_SHORT_WRITE}); check the disk and run the " \
                   "command again"


def test_other_errors_are_left_alone():
    assert storage_fault(RuntimeError("unexpected pos")) is None  # no artifact to name: not ours to word
    assert storage_fault(ValueError("No space left in the batch")) is None
    assert storage_fault(KeyboardInterrupt()) is None
