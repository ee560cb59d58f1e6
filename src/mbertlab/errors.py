"""Errors a user can fix. Each renders as one line naming the file, line, key or value at fault."""
from __future__ import annotations

import stat
from pathlib import Path


class MbertlabError(Exception):
    """Base of every user-fixable error; the CLI prints `str(err)` and exits 1."""


class ConfigError(MbertlabError):
    """A config or spec has an unknown key, a wrong type or an impossible value."""


class DataError(MbertlabError):
    """An input file does not have the expected format.

    The message always names the file and, when known, the 1-based line number.
    """

    def __init__(self, path: str | Path | None, line: int | None, message: str):
        self.path = str(path) if path is not None else None
        self.line = line
        self.message = message
        where = self.path or "<input>"
        if line is not None:
            where = f"{where}:{line}"
        super().__init__(f"{where}: {message}")


class ArtifactError(MbertlabError):
    """An artifact is missing, incomplete or of the wrong stage."""


class StorageError(MbertlabError):
    """The file system refused a read or write: a name too long, no permission, a read-only or full disk, a
    corrupt results.db (`store.faults` words each case)."""


class DownloadError(MbertlabError):
    """A download failed or did not match its checksum."""


SPECIAL_FILES = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
                 (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def missing_file(path: str | Path) -> str:
    """Why a path that is not a regular file cannot be read as one: it is missing, or it is a device, FIFO or
    socket (`/dev/null`, a named pipe), which 'no such file' would misname."""
    try:
        mode = Path(path).stat().st_mode
    except OSError:
        return "no such file"
    kind = next((name for test, name in SPECIAL_FILES if test(mode)), "not a regular file")
    return f"found {kind}; expected a regular file"
