"""Unpacking of crafted (malicious) archives: every member checked, a refused archive leaves nothing."""
from __future__ import annotations

import io
import stat
import tarfile
import zipfile
from pathlib import Path

import pytest

from mbertlab.data.archives import unpack
from mbertlab.errors import DataError

PAYLOAD = bytes(range(256)) * 400  # 102,400 bytes


def tgz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def crafted_tar(path: Path, *members: tarfile.TarInfo) -> Path:
    with tarfile.open(path, "w") as tar:
        for info in members:
            tar.addfile(info, io.BytesIO(b"x" * info.size) if info.isfile() else None)
    return path


def member(name: str, kind: bytes = tarfile.REGTYPE, link: str = "", size: int = 1) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, size if kind == tarfile.REGTYPE else 0
    return info


@pytest.mark.parametrize("members, refused, why", [
    ([member("/tmp/evil")], "/tmp/evil", "has an absolute path"),
    ([member("ok/../../evil")], "ok/../../evil", "has '..' in its path"),
    ([member("link", tarfile.SYMTYPE, "/etc")], "link", "is a link to the absolute path '/etc'"),
    ([member("d/link", tarfile.SYMTYPE, "../../out")], "d/link", "is a link to '../../out', outside"),
    ([member("hard", tarfile.LNKTYPE, "../out")], "hard", "is a link to '../out', outside"),
    ([member("hard", tarfile.LNKTYPE, "/etc/passwd")], "hard", "is a link to the absolute path"),
    ([member("null", tarfile.CHRTYPE)], "null", "is a device file or FIFO"),
    ([member("fifo", tarfile.FIFOTYPE)], "fifo", "is a device file or FIFO"),
    ([member("up", tarfile.SYMTYPE, ".."), member("up/evil")], "up", "is a link to '..', outside"),
    ([member("b", tarfile.SYMTYPE, "a/.."), member("a", tarfile.SYMTYPE, ".")], "b",
     "is a link that resolves outside"),  # each link alone stays inside; chained, b leads out
])
def test_malicious_tar_members_are_refused(tmp_path, members, refused, why):
    archive = crafted_tar(tmp_path / "evil.tar", *members)
    with pytest.raises(DataError, match="member ") as caught:
        unpack(archive)
    message = str(caught.value)
    assert f"member {refused!r} {why}" in message and "nothing unpacked" in message and "\n" not in message
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.tar"] and not (tmp_path.parent / "out").exists()


def test_links_inside_the_archive_are_kept(tmp_path):
    archive = crafted_tar(tmp_path / "good.tgz", member("d/", tarfile.DIRTYPE), member("d/f"),
                          member("d/alias", tarfile.SYMTYPE, "f"), member("top", tarfile.SYMTYPE, "d"),
                          member("top/g"), member("hard", tarfile.LNKTYPE, "d/f"))
    tree = unpack(archive)
    assert tree == tmp_path / "good" and (tree / "d" / "alias").read_bytes() == b"x" and (tree / "d" / "g").exists()
    assert unpack(archive) == tree


def crafted_zip(path: Path, name: str, data: bytes = b"x", mode: int = 0o100644) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        info = zipfile.ZipInfo(name)
        info.external_attr = mode << 16
        zf.writestr(info, data)
    return path


@pytest.mark.parametrize("name, data, mode, why", [
    ("../evil", b"x", 0o100644, "has '..' in its path"),
    ("/abs/evil", b"x", 0o100644, "has an absolute path"),
    ("C:/evil", b"x", 0o100644, "has an absolute path"),
    ("link", b"../../out", stat.S_IFLNK | 0o777, "is a link to '../../out', outside"),
    ("dev", b"", stat.S_IFCHR | 0o644, "is a device file"),
])
def test_malicious_zip_members_are_refused(tmp_path, name, data, mode, why):
    archive = crafted_zip(tmp_path / "evil.zip", name, data, mode)
    with pytest.raises(DataError, match=f"member {name!r} {why}"):
        unpack(archive)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evil.zip"]


def test_damaged_archive_leaves_nothing(tmp_path):
    archive = tmp_path / "cut.tgz"
    archive.write_bytes(tgz({"a/b.txt": PAYLOAD})[:200])
    with pytest.raises(DataError, match="cannot unpack"):
        unpack(archive)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cut.tgz"]
