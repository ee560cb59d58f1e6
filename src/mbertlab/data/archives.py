"""Unpacking of downloaded archives (.tgz, .tar.gz, .tar, .zip) inside the cache, so that no user has to unpack
an archive from the internet by hand. Every member is checked before it is written: no absolute path, no `..`,
no link that leads out of the target, nothing written through such a link, no device file or FIFO. The archive
is unpacked into a hidden temporary sibling that is renamed into place only when complete; a refused or
damaged archive leaves nothing behind. Archives inside the archive (WikiANN: one .tar.gz per language) are
unpacked in place with the same checks, one level deep, and removed."""
from __future__ import annotations

import glob
import os
import re
import shutil
import stat
import tarfile
import tempfile
import zipfile
import zlib
from pathlib import Path

from mbertlab.errors import DataError

SUFFIXES = (".tar.gz", ".tgz", ".tar", ".zip")
# Python's own "data" filter (3.11.4+) repeats these checks at extraction time: a second line of defence
TAR_FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
DRIVE = re.compile(r"[A-Za-z]:")


def unpacked_dir(archive: Path) -> Path | None:
    """Where `archive` unpacks to: its name without the archive suffix; None for a file that is no archive."""
    for suffix in SUFFIXES:
        if archive.name.endswith(suffix) and len(archive.name) > len(suffix):
            return archive.with_name(archive.name[: -len(suffix)])
    return None


def unpack(archive: Path, digest: str = "") -> Path:
    """Unpack `archive` beside itself, once per archive `digest`: a tree from an earlier archive is replaced.

    A hidden `.<name>.unpacked` file holds the digest of the archive the tree came from; a folder in the way
    without one was not made here (unpacked by hand, say) and is left alone."""
    target = unpacked_dir(archive)
    if target is None:
        raise DataError(archive, None, f"not an archive (expected a name ending in {', '.join(SUFFIXES)})")
    marker = target.with_name(f".{target.name}.unpacked")
    if target.exists():
        if not marker.is_file():
            raise DataError(target, None, f"is in the way of unpacking {archive.name} and was not unpacked by "
                                          "mbertlab; move it away (or fetch with --no-unpack)")
        if marker.read_text(encoding="utf-8").strip() == digest:
            return target
        shutil.rmtree(target)
    for stale in target.parent.glob(f".{glob.escape(target.name)}.*.unpacking"):  # left by a killed run
        shutil.rmtree(stale, ignore_errors=True)
    _unpack_into(archive, target, marker, digest)
    return target


def _unpack_into(archive: Path, target: Path, marker: Path, digest: str) -> None:
    """Unpack into a hidden temporary sibling, then rename it to `target`; a failure leaves nothing behind."""
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".unpacking", dir=target.parent))
    try:
        root = os.path.realpath(tmp)
        _extract(archive, root, archive)
        _check_links(archive, root)
        _unpack_nested(archive, root)
        marker.write_text(digest, encoding="utf-8")  # before the rename: a tree in place always has its marker
        os.replace(tmp, target)
    except (OSError, EOFError, zlib.error, tarfile.TarError, zipfile.BadZipFile) as err:
        shutil.rmtree(tmp, ignore_errors=True)
        raise DataError(archive, None, f"cannot unpack ({err}); nothing unpacked") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _extract(archive: Path, root: str, label: Path) -> None:
    """Every member of `archive` checked, then written under `root`; refusals name `label`."""
    (_unzip if archive.name.endswith(".zip") else _untar)(archive, root, label)


def _unpack_nested(archive: Path, root: str) -> None:
    """Each archive among the members becomes the folder of its name (checked like the outer one), then goes."""
    inner = [Path(folder, name) for folder, _, names in os.walk(root) for name in names
             if unpacked_dir(Path(name)) is not None and not os.path.islink(os.path.join(folder, name))]
    for path in inner:
        label = Path(f"{archive}!{os.path.relpath(path, root)}")
        target = unpacked_dir(path)
        if target.exists():
            _refuse(archive, os.path.relpath(path, root), f"unpacks onto the member {target.name!r}")
        target.mkdir()
        _extract(path, os.path.realpath(target), label)
        _check_links(label, os.path.realpath(target))
        path.unlink()


def _refuse(archive: Path, member: str, why: str) -> None:
    raise DataError(archive, None, f"member {member!r} {why}; archive refused, nothing unpacked")


def _member_path(archive: Path, member: str) -> str:
    """The member's path relative to the target, or a refusal when it is absolute or climbs out with `..`."""
    name = member.replace("\\", "/")
    if not name or name.startswith("/") or DRIVE.match(name) or "\0" in name:
        _refuse(archive, member, "has an absolute path")
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if ".." in parts:
        _refuse(archive, member, "has '..' in its path")
    return "/".join(parts) or "."


def _inside(root: str, path: str) -> bool:
    real = os.path.realpath(path)
    return real == root or real.startswith(root + os.sep)


def _check_target(archive: Path, member: str, root: str, path: str, what: str) -> None:
    """`path` (a member's place, or a link's target) must resolve, through any link on disk, inside `root`."""
    if not _inside(root, path):
        _refuse(archive, member, f"{what} outside the unpacked directory")


def _check_link(archive: Path, member: str, root: str, base: str, link: str) -> None:
    """A link's target: relative, and inside the target directory once resolved from `base`."""
    if not link or os.path.isabs(link) or link.startswith("\\") or DRIVE.match(link):
        _refuse(archive, member, f"is a link to the absolute path {link!r}")
    _check_target(archive, member, root, os.path.join(base, link), f"is a link to {link!r},")


def _untar(source: Path, root: str, archive: Path) -> None:
    with tarfile.open(source, "r:*") as tar:
        for member in tar:  # streamed: each member is checked just before it is written
            name = _member_path(archive, member.name)
            if member.ischr() or member.isblk() or member.isfifo():
                _refuse(archive, member.name, "is a device file or FIFO")
            if not (member.isfile() or member.isdir() or member.issym() or member.islnk()):
                _refuse(archive, member.name, "has a type that is not unpacked (not a file, folder or link)")
            _check_target(archive, member.name, root, os.path.join(root, name), "would be written")
            if member.issym():
                _check_link(archive, member.name, root, os.path.join(root, os.path.dirname(name)), member.linkname)
            elif member.islnk():  # a hard link's target is named from the archive's root
                _check_link(archive, member.name, root, root, member.linkname)
            tar.extract(member, root, set_attrs=False, **TAR_FILTER)


def _unzip(source: Path, root: str, archive: Path) -> None:
    with zipfile.ZipFile(source) as zf:
        for info in zf.infolist():
            name = _member_path(archive, info.filename)
            mode = info.external_attr >> 16  # Unix mode bits, where the zip was made on Unix
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
                _refuse(archive, info.filename, "is a device file, FIFO or socket")
            if stat.S_ISLNK(mode):  # zipfile writes a link as a small file holding its target; still checked
                link = zf.read(info).decode("utf-8", "replace")
                _check_link(archive, info.filename, root, os.path.join(root, os.path.dirname(name)), link)
            _check_target(archive, info.filename, root, os.path.join(root, name), "would be written")
            zf.extract(info, root)


def _check_links(archive: Path, root: str) -> None:
    """Last sweep: links made harmless one by one can still chain out (a -> b/.., b -> .); none may."""
    for folder, dirs, files in os.walk(root):
        for entry in dirs + files:
            path = os.path.join(folder, entry)
            if os.path.islink(path) and not _inside(root, path):
                _refuse(archive, os.path.relpath(path, root), "is a link that resolves outside the unpacked directory")
