"""The file system's refusals as one line: which path, what went wrong, what to do.

A full disk, a read-only or missing workdir, a name over 255 bytes: Python raises `OSError`, Rust and C++
writers (safetensors, `torch.save`) raise their own errors that only say so in words. `storage_fault` turns each
into a `StorageError`; the CLI passes every uncaught exception through it, the artifact store every failed build.
"""
from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

from mbertlab.errors import MbertlabError, StorageError

NAME_MAX = 255  # bytes in one path component on Linux and macOS file systems

NO_SPACE = ("no space left on device; free some space and run the command again (finished stages are reused, "
            "pretraining resumes from its last intact checkpoint)")
_NO_SPACE_WORDS = ("No space left on device", "os error 28", "Disk quota exceeded", "os error 122")
_TORCH_WRITE_WORDS = ("PytorchStreamWriter failed", "unexpected pos", "file write failed",
                      "basic_ios::clear")  # the last: torch.save's iostream on a full tmpfs


def storage_fault(err: BaseException, where: str | Path | None = None) -> StorageError | None:
    """`err` as a one-line StorageError when the file system caused it, else None. `where` (the artifact
    being built) is named when the error does not say which file."""
    if isinstance(err, MbertlabError):
        return None  # already one line
    if isinstance(err, OSError) and err.errno in _WORDS:
        path = next((p for p in _written_first(err) if p is not None), where)
        return StorageError(f"{path or 'a file'}: {_WORDS[err.errno](path)}")
    text = str(err)
    if any(w in text for w in _NO_SPACE_WORDS):
        return StorageError(f"{where or 'a file'}: {NO_SPACE}")
    if isinstance(err, RuntimeError) and any(w in text for w in _TORCH_WRITE_WORDS) and where is not None:
        free = _free_bytes(Path(where))  # torch's writer says only that a write fell short
        if free is not None and free < 2**20:
            return StorageError(f"{where}: {NO_SPACE}")
        return StorageError(f"{where}: writing a file failed (torch: {text.splitlines()[0][:120]}); check the "
                            "disk and run the command again")
    return None


def _written_first(err: OSError) -> tuple:
    """The error's paths, the one written first on a full disk: `shutil.copy` names its source as `filename`
    and the file it was writing as `filename2`."""
    if err.errno in (errno.ENOSPC, errno.EDQUOT):
        return err.filename2, err.filename
    return (err.filename,)


def _free_bytes(path: Path) -> int | None:
    """Free bytes on the disk holding `path` (or its nearest existing parent); None if that cannot be told."""
    try:
        while not path.exists() and path != path.parent:
            path = path.parent
        return shutil.disk_usage(path).free
    except OSError:
        return None


def _name_too_long(path) -> str:
    name = max(Path(os.fsdecode(path or "")).parts, key=lambda p: len(os.fsencode(p)), default="")
    size = len(os.fsencode(name))
    if size > NAME_MAX:
        return f"file name too long: '{name[:40]}…' is {size} bytes, the file system allows {NAME_MAX}; shorten it"
    return f"path too long ({len(os.fsencode(os.fsdecode(path or '')))} bytes); use a shorter one"


def _not_a_folder(path) -> str:
    """Which part of the path is a file where a folder should be (e.g. `-w` naming a file)."""
    for part in Path(os.fsdecode(path or "")).parents:
        if part.exists():
            return f"{part} is a file, not a folder" if not part.is_dir() else "a part of the path is not a folder"
    return "a part of the path is not a folder"


_WORDS = {
    errno.ENOSPC: lambda path: NO_SPACE,
    errno.EDQUOT: lambda path: NO_SPACE.replace("no space left on device", "disk quota exceeded"),
    errno.ENAMETOOLONG: _name_too_long,
    errno.EROFS: lambda path: "read-only file system; choose a writable workdir (-w) or output path",
    errno.EACCES: lambda path: "permission denied; choose a workdir (-w) or output path you may write to, or "
                               "an input you may read",
    errno.EPERM: lambda path: "operation not permitted; choose a workdir (-w) or output path you may write to",
    errno.ENOTDIR: _not_a_folder,
    errno.EEXIST: lambda path: f"{path} is a file, not a folder" if Path(os.fsdecode(path or "")).is_file()
    else "already exists",
    errno.EISDIR: lambda path: "is a folder; expected a file",
    errno.ENOENT: lambda path: "no such file or folder",
}
