"""Downloads against a local HTTP server on 127.0.0.1 whose handler can cut a transfer, lie about lengths, ignore
Range or If-Range, answer 416 and change its ETag; unpacking of crafted (malicious) archives. No network."""
from __future__ import annotations

import hashlib
import io
import socket
import stat
import tarfile
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from mbertlab.cli.main import run
from mbertlab.data.archives import unpack
from mbertlab.data.downloads import download, get
from mbertlab.data.sources import UD_HANDLES, remote, url_for
from mbertlab.errors import DataError, DownloadError

PAYLOAD = bytes(range(256)) * 400  # 102,400 bytes
OTHER = bytes(reversed(PAYLOAD))  # the same length: a splice of the two would not be caught by size
MODIFIED = "Wed, 21 Oct 2015 07:28:00 GMT"


class Lab:
    """What the server holds and how it misbehaves, per path; every request is logged."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.etags: dict[str, str] = {}
        self.quirks: dict[str, set[str]] = {}
        self.requests: list[tuple[str, str | None, str | None]] = []

    def put(self, path: str, body: bytes, etag: str = '"v1"', *quirks: str) -> None:
        self.files[path], self.etags[path], self.quirks[path] = body, etag, set(quirks)


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802
        lab: Lab = self.server.lab
        lab.requests.append((self.path, self.headers.get("Range"), self.headers.get("If-Range")))
        if self.path not in lab.files:
            self.send_error(404)
            return
        body, quirks = lab.files[self.path], lab.quirks[self.path]
        start = self.range_start(lab.etags[self.path], quirks)
        if start is not None and start >= len(body):
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{len(body)}")
            self.end_headers()
            return
        self.reply(body, start, lab.etags[self.path], quirks)

    def range_start(self, etag: str, quirks: set[str]) -> int | None:
        """Where a Range asks to start, or None for a whole-file reply (no Range, or If-Range not matching)."""
        ask = self.headers.get("Range")
        if not ask or "ignore-range" in quirks:
            return None
        if_range = self.headers.get("If-Range")
        if if_range and if_range not in (etag, MODIFIED) and "ignore-if-range" not in quirks:
            return None
        return 0 if "wrong-start" in quirks else int(ask.split("=")[1].split("-")[0])

    def reply(self, body: bytes, start: int | None, etag: str, quirks: set[str]) -> None:
        chunk = body[start or 0:] + (b"x" * 10 if "overlong" in quirks else b"")
        self.send_response(200 if start is None else 206)
        if start is not None:
            self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
        self.send_header("Content-Length", str(len(chunk)))
        if "no-validators" not in quirks:
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", MODIFIED)
        self.end_headers()
        if "slow" in quirks:  # long enough for a second client to arrive mid-transfer
            self.wfile.write(chunk[:1000])
            self.wfile.flush()
            time.sleep(0.5)
            chunk = chunk[1000:]
        if "cut-once" in quirks:  # the connection closes halfway, once
            quirks.discard("cut-once")
            chunk = chunk[: len(chunk) // 2]
        self.wfile.write(chunk)

    def log_message(self, *args):
        pass


@pytest.fixture()
def lab():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.lab = Lab()
    httpd.lab.url = f"http://127.0.0.1:{httpd.server_address[1]}"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.lab
    httpd.shutdown()
    httpd.server_close()


def files(folder: Path) -> list[Path]:
    """What a failed download left, its `.lock` aside (a lock holds no data; removing it would race a waiter)."""
    return [p for p in folder.iterdir() if p.suffix != ".lock"]


def leftovers(folder: Path) -> list[str]:
    """Anything half-written: parts, their state, temporary files and unpacking folders."""
    return sorted(p.name for p in folder.rglob("*") if p.name.endswith((".part", ".json", ".tmp", ".unpacking")))


def test_fresh_download_is_recorded_and_then_served_from_the_cache(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD)
    dest = download(f"{lab.url}/f.txt", tmp_path / "f.txt")
    assert dest.read_bytes() == PAYLOAD and leftovers(tmp_path) == []
    assert (tmp_path / "f.txt.sha256").read_text().split() == [hashlib.sha256(PAYLOAD).hexdigest(), "f.txt"]
    download(f"{lab.url}/f.txt", dest)
    assert len(lab.requests) == 1


def test_two_clients_of_one_file_take_turns(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD, '"v1"', "slow")
    got = []
    clients = [threading.Thread(target=lambda: got.append(download(f"{lab.url}/f.txt", tmp_path / "f.txt")))
               for _ in range(2)]
    for c in clients:
        c.start()
    for c in clients:
        c.join()
    assert got == [tmp_path / "f.txt"] * 2 and got[0].read_bytes() == PAYLOAD
    assert len(lab.requests) == 1  # the second waited, then found the first's copy in the cache
    assert leftovers(tmp_path) == []


def test_connection_closed_early_is_not_complete_and_resumes(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD, '"v1"', "cut-once")
    dest = tmp_path / "f.txt"
    with pytest.raises(DownloadError, match=r"connection closed after 51,200 of 102,400 bytes.*rerun to resume"):
        download(f"{lab.url}/f.txt", dest)
    assert not dest.exists() and (tmp_path / "f.txt.part").stat().st_size == 51_200
    download(f"{lab.url}/f.txt", dest)
    assert dest.read_bytes() == PAYLOAD and lab.requests[1] == ("/f.txt", "bytes=51200-", '"v1"')
    assert leftovers(tmp_path) == []


def test_cached_file_without_a_record_is_fetched_again(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD)
    (tmp_path / "f.txt").write_bytes(PAYLOAD[:1000])  # stored as complete by an earlier, trusting version
    assert download(f"{lab.url}/f.txt", tmp_path / "f.txt").read_bytes() == PAYLOAD


def test_stale_cached_file_is_really_removed(lab, tmp_path):
    dest = tmp_path / "gone.txt"
    dest.write_bytes(b"stale")
    with pytest.raises(DownloadError, match="HTTP 404"):
        download(f"{lab.url}/gone.txt", dest, sha256=hashlib.sha256(PAYLOAD).hexdigest())
    assert not dest.exists()


def test_part_longer_than_the_remote_file_is_discarded_after_416(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD)
    (tmp_path / "f.txt").write_bytes(PAYLOAD)  # what a first, interrupted run would leave: made into a .part
    (tmp_path / "f.txt").rename(tmp_path / "f.txt.part")
    with (tmp_path / "f.txt.part").open("ab") as f:
        f.write(b"junk" * 25)
    (tmp_path / "f.txt.part.json").write_text(f'{{"url": "{lab.url}/f.txt", "etag": "\\"v1\\"", "total": 102500}}')
    assert download(f"{lab.url}/f.txt", tmp_path / "f.txt").read_bytes() == PAYLOAD
    assert [r[1] for r in lab.requests] == ["bytes=102500-", None] and leftovers(tmp_path) == []


def cut_then_change(lab: Lab, tmp_path: Path, *quirks: str) -> Path:
    """A first run cut halfway through PAYLOAD ("v1"); then the remote file becomes OTHER ("v2")."""
    lab.put("/f.txt", PAYLOAD, '"v1"', "cut-once")
    with pytest.raises(DownloadError, match="connection closed"):
        download(f"{lab.url}/f.txt", tmp_path / "f.txt")
    lab.put("/f.txt", OTHER, '"v2"', *quirks)
    return download(f"{lab.url}/f.txt", tmp_path / "f.txt")


def test_changed_etag_restarts_instead_of_splicing(lab, tmp_path):
    assert cut_then_change(lab, tmp_path).read_bytes() == OTHER
    assert lab.requests[1] == ("/f.txt", "bytes=51200-", '"v1"')  # If-Range: the server answered 200, whole file


def test_server_ignoring_if_range_is_caught_by_its_etag(lab, tmp_path):
    assert cut_then_change(lab, tmp_path, "ignore-if-range").read_bytes() == OTHER
    assert [r[1] for r in lab.requests] == [None, "bytes=51200-", None]  # the 206 of "v2" was refused


def test_200_reply_to_a_range_request_restarts_cleanly(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD, '"v1"', "cut-once", "ignore-range")
    with pytest.raises(DownloadError, match="connection closed"):
        download(f"{lab.url}/f.txt", tmp_path / "f.txt")
    assert download(f"{lab.url}/f.txt", tmp_path / "f.txt").read_bytes() == PAYLOAD


def test_206_from_another_offset_restarts(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD, '"v1"', "cut-once", "wrong-start")
    with pytest.raises(DownloadError, match="connection closed"):
        download(f"{lab.url}/f.txt", tmp_path / "f.txt")
    assert download(f"{lab.url}/f.txt", tmp_path / "f.txt").read_bytes() == PAYLOAD
    assert [r[1] for r in lab.requests] == [None, "bytes=51200-", None]


def test_resume_without_validators_checks_the_total_size(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD, "", "cut-once", "no-validators")
    with pytest.raises(DownloadError, match="connection closed"):
        download(f"{lab.url}/f.txt", tmp_path / "f.txt")
    lab.put("/f.txt", PAYLOAD + b"more", "", "no-validators")  # another size: the .part is not its start
    assert download(f"{lab.url}/f.txt", tmp_path / "f.txt").read_bytes() == PAYLOAD + b"more"
    assert [r[1:] for r in lab.requests] == [(None, None), ("bytes=51200-", None), (None, None)]


def test_more_bytes_than_announced_is_discarded(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD, '"v1"', "cut-once")
    with pytest.raises(DownloadError, match="connection closed"):
        download(f"{lab.url}/f.txt", tmp_path / "f.txt")
    lab.quirks["/f.txt"].add("overlong")  # the 206 says 102,400 in all but its body runs 10 bytes longer
    with pytest.raises(DownloadError, match="received 102,410 bytes, more than the 102,400 announced"):
        download(f"{lab.url}/f.txt", tmp_path / "f.txt")
    assert files(tmp_path) == []


def test_checksum_mismatch_is_refused_and_leaves_nothing(lab, tmp_path):
    lab.put("/f.txt", PAYLOAD)
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download(f"{lab.url}/f.txt", tmp_path / "x.txt", sha256="0" * 64)
    assert files(tmp_path) == []


def test_base_url_is_validated_in_one_line(tmp_path, capsys):
    for bad in ("notaurl", "ftp://host/x", "http://", "http://[::1/x"):
        with pytest.raises(DownloadError, match="expected an http://, https:// or file:// URL"):
            get("muse", ["en-de"], tmp_path, base_url=bad)
    assert run(["--workdir", str(tmp_path), "data", "get", "ud", "2.12", "--base-url", "notaurl"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "base URL 'notaurl'" in lines[0]
    with pytest.raises(DownloadError, match="expected 64 hexadecimal digits"):
        get("muse", ["en-de"], tmp_path, sha256="abc")
    with pytest.raises(DownloadError, match="expected letters, digits"):
        get("muse", ["../../etc/passwd"], tmp_path)


def test_unreachable_server_is_one_line(tmp_path, capsys):
    with socket.socket() as s:  # a port that was free a moment ago: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = ["--workdir", str(tmp_path), "data", "get", "muse", "en-de", "--base-url", f"http://127.0.0.1:{port}"]
    assert run(args) == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: http://127.0.0.1:{port}/en-de.txt: [Errno 111] Connection refused"]
    assert leftovers(tmp_path) == []


def test_file_url_mirror(tmp_path):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "en-de.txt").write_bytes(PAYLOAD)
    [path] = get("muse", ["en-de"], tmp_path / "cache", base_url=mirror.as_uri())
    assert path == tmp_path / "cache" / "muse" / "en-de.txt" and path.read_bytes() == PAYLOAD


def test_ud_releases_know_their_handles_and_digests():
    lindat = "https://lindat.mff.cuni.cz/repository/server/api/core/bitstreams/handle/11234"
    assert url_for("ud", "2.12") == f"{lindat}/1-5150/ud-treebanks-v2.12.tgz"
    assert url_for("ud", "2.5") == f"{lindat}/1-3105/ud-treebanks-v2.5.tgz"
    assert url_for("ud", "1.4") == f"{lindat}/1-1827/ud-treebanks-v1.4.tgz"
    assert len(set(UD_HANDLES.values())) == len(UD_HANDLES)
    assert remote("ud", "2.12").sha256.startswith("24f876d5") and remote("ud", "1.4").sha256 is None
    assert remote("xnli", None).sha256.startswith("4ba1d5e1") and remote("muse", "en-de").sha256 is None
    with pytest.raises(DownloadError, match=r"UD release '2\.99' is not in the release table \(known: 1\.2, .*2\.18\)"):
        url_for("ud", "2.99")


def tgz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def test_pinned_digest_guards_a_ud_release(lab, tmp_path):
    lab.put("/ud/1-5150/ud-treebanks-v2.12.tgz", tgz({"ud-treebanks-v2.12/x.conllu": b"fake"}))
    with pytest.raises(DownloadError, match="checksum mismatch \\(expected sha256 24f876d5"):
        get("ud", ["2.12"], tmp_path, base_url=f"{lab.url}/ud")
    assert files(tmp_path / "ud") == []


def test_archive_is_unpacked_and_a_new_download_replaces_the_old_tree(lab, tmp_path, capsys):
    first, second = tgz({"XNLI-1.0/a.tsv": b"one"}), tgz({"XNLI-1.0/b.tsv": b"two"})
    lab.put("/x/XNLI-1.0.zip", first)  # a .zip by name, a tar by content: refused by zipfile, see below
    lab.put("/u/1-5150/ud-treebanks-v2.12.tgz", first)
    args = ["--workdir", str(tmp_path), "data", "get", "ud", "2.12", "--base-url", f"{lab.url}/u",
            "--sha256", hashlib.sha256(first).hexdigest()]
    assert run(args) == 0
    tree = tmp_path / "downloads" / "ud" / "ud-treebanks-v2.12"
    assert capsys.readouterr().out.strip() == str(tree) and (tree / "XNLI-1.0" / "a.tsv").read_bytes() == b"one"
    lab.put("/u/1-5150/ud-treebanks-v2.12.tgz", second)
    assert run(args[:-1] + [hashlib.sha256(second).hexdigest()]) == 0
    assert sorted(p.name for p in (tree / "XNLI-1.0").iterdir()) == ["b.tsv"]
    with pytest.raises(DataError, match="cannot unpack .*nothing unpacked"):
        get("xnli", [], tmp_path, base_url=f"{lab.url}/x", sha256=hashlib.sha256(first).hexdigest())
    assert leftovers(tmp_path) == [] and not (tmp_path / "xnli" / "XNLI-1.0").exists()


def test_archives_inside_the_archive_are_unpacked_with_the_same_checks(lab, tmp_path):
    # WikiANN's panx_dataset.tar holds one .tar.gz per language
    inner = {"en.tar.gz": tgz({"train": b"EU B-ORG\n", "dev": b"x O\n"}), "sw.tar.gz": tgz({"test": b"y O\n"})}
    archive = tmp_path / "panx_dataset.tar"
    archive.write_bytes(tgz({f"panx/{k}": v for k, v in inner.items()} | {"panx/README": b"r"}))
    tree = unpack(archive, "d1")
    assert sorted(str(p.relative_to(tree)) for p in tree.rglob("*") if p.is_file()) == \
        ["panx/README", "panx/en/dev", "panx/en/train", "panx/sw/test"]
    assert (tree / "panx/en/train").read_bytes() == b"EU B-ORG\n"
    evil = tmp_path / "evil_dataset.tar"
    evil.write_bytes(tgz({"panx/en.tar.gz": tgz({"../../escaped": b"x"})}))
    with pytest.raises(DataError, match=r"evil_dataset.tar!panx/en.tar.gz.*'\.\.'.*nothing unpacked"):
        unpack(evil, "d2")
    assert not (tmp_path / "evil_dataset").exists() and not (tmp_path / "escaped").exists()
    assert leftovers(tmp_path) == []


def test_a_folder_unpacked_by_hand_is_left_alone(tmp_path):
    archive = tmp_path / "ud-treebanks-v2.12.tgz"
    archive.write_bytes(tgz({"a.txt": b"a"}))
    (tmp_path / "ud-treebanks-v2.12").mkdir()
    (tmp_path / "ud-treebanks-v2.12" / "mine.txt").write_text("keep")
    with pytest.raises(DataError, match="was not unpacked by mbertlab; move it away"):
        unpack(archive)
    assert [p.name for p in (tmp_path / "ud-treebanks-v2.12").iterdir()] == ["mine.txt"]


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
