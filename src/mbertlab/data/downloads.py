"""Downloads into a cache directory, with the standard library only.

A file counts as complete only when every byte the server announced (Content-Length, or the total of a
Content-Range) has arrived and, where a digest is pinned or given, its SHA-256 matches; only then is its `.part`
renamed into place, with a `<name>.sha256` record beside it. A cached file is used again only while it still
hashes to that record (or to the pinned digest); anything else is removed and fetched again.

Resumes are validated: the `.part` keeps a `.part.json` with the URL, the ETag or Last-Modified and the total
size of the transfer it belongs to. The next request sends Range with If-Range; a 200 reply (the remote file
changed, or the server ignores ranges) restarts from byte 0, a 206 reply must start where the `.part` ends and
keep the same total and ETag, and a 416 reply (the `.part` does not fit the remote file) discards the `.part`.
Two processes fetching the same file take turns on `<name>.lock` (the second finds the first's copy in the
cache). Archives are unpacked by `mbertlab.data.archives`."""
from __future__ import annotations

import hashlib
import http.client
import json
import logging
import os
import re
import shutil
import urllib.error
import urllib.request
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock

from mbertlab.data.archives import unpack, unpacked_dir
from mbertlab.data.sources import check_sha256, check_url, remote
from mbertlab.errors import DownloadError

log = logging.getLogger(__name__)
CHUNK = 1 << 16
CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)\Z")


@dataclass(frozen=True)
class Partial:
    """What is known about a `.part`: its size and the validators of the transfer it came from."""
    have: int
    etag: str | None
    last_modified: str | None
    total: int | None


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def _sidecar(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _write_atomic(path: Path, text: str) -> None:
    tmp = _sidecar(path, ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def _record(dest: Path, digest: str) -> None:
    """`<name>.sha256` in sha256sum's format: the mark of a complete download (and `sha256sum -c` reads it)."""
    _write_atomic(_sidecar(dest, ".sha256"), f"{digest}  {dest.name}\n")


def _recorded(dest: Path) -> str | None:
    try:
        return _sidecar(dest, ".sha256").read_text(encoding="utf-8").split()[0]
    except (OSError, IndexError):
        return None


def cached(dest: Path, sha256: str | None = None) -> bool:
    """Whether `dest` is a complete earlier download; a stale, damaged or unrecorded copy is removed."""
    if not dest.exists():
        return False
    if dest.is_dir():
        raise DownloadError(f"{dest}: a folder is where the download belongs; move it away")
    recorded = _recorded(dest)
    expected = sha256 or recorded
    if expected is not None and sha256_of(dest) == expected:
        if recorded != expected:  # verified against a given digest: record it for the archive's unpacked tree
            _record(dest, expected)
        return True
    log.info("%s: the cached copy is not a complete download%s; removed", dest,
             f" with sha256 {expected}" if expected else "")
    dest.unlink()
    _sidecar(dest, ".sha256").unlink(missing_ok=True)
    return False


@contextmanager
def _turn(dest: Path):
    """Hold `<name>.lock` while `dest` is checked, fetched or unpacked: one process at a time per file."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(_sidecar(dest, ".lock"))):
        yield


def download(url: str, dest: Path, sha256: str | None = None, timeout: float = 60.0) -> Path:
    """`dest`, from the cache when a complete copy is there, else fetched from `url`."""
    with _turn(dest):
        return dest if cached(dest, sha256) else fetch(url, dest, sha256, timeout)


def fetch(url: str, dest: Path, sha256: str | None = None, timeout: float = 60.0) -> Path:
    """Fetch `url` to `dest` now, resuming a validated `.part`; `dest` appears only when complete."""
    check_url(url)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = _sidecar(dest, ".part")
    for _ in range(3):  # a rejected resume restarts once from byte 0; a third round would mean a confused server
        if _transfer(url, part, timeout):
            return _finish(url, part, dest, sha256)
    raise DownloadError(f"{url}: the server's replies do not fit together (ranges, sizes or ETag keep changing)")


def _discard(part: Path) -> None:
    part.unlink(missing_ok=True)
    _sidecar(part, ".json").unlink(missing_ok=True)


def _partial(url: str, part: Path) -> Partial | None:
    """The `.part` worth resuming, or None (and the `.part` gone) when it cannot be matched to this URL."""
    try:
        saved = json.loads(_sidecar(part, ".json").read_text(encoding="utf-8"))
        have = part.stat().st_size
    except (OSError, ValueError):
        saved, have = None, 0
    validated = isinstance(saved, dict) and any(saved.get(k) for k in ("etag", "last_modified", "total"))
    if not validated or saved.get("url") != url or have == 0:
        _discard(part)
        return None
    return Partial(have, saved.get("etag"), saved.get("last_modified"), saved.get("total"))


def _request(url: str, partial: Partial | None) -> urllib.request.Request:
    headers = {}
    if partial is not None:
        headers["Range"] = f"bytes={partial.have}-"
        strong_etag = partial.etag if partial.etag and not partial.etag.startswith("W/") else None
        if strong_etag or partial.last_modified:  # without either, the Content-Range total is the only check
            headers["If-Range"] = strong_etag or partial.last_modified
    return urllib.request.Request(url, headers=headers)


def _transfer(url: str, part: Path, timeout: float) -> bool:
    """One request; True when the `.part` is complete, False when it was discarded and must start again."""
    partial = _partial(url, part)
    try:
        with urllib.request.urlopen(_request(url, partial), timeout=timeout) as response:
            return _receive(url, response, part, partial)
    except urllib.error.HTTPError as err:
        if err.code == 416 and partial is not None:  # the .part is longer than the remote file, or does not fit
            log.info("%s: HTTP 416 for bytes %d-; discarding %s", url, partial.have, part.name)
            _discard(part)
            return False
        raise DownloadError(f"{url}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError, http.client.HTTPException) as err:
        got = part.stat().st_size if part.exists() else 0
        where = f" after {got:,} bytes (rerun to resume from {part.name})" if got else ""
        reason = getattr(err, "reason", None) or err
        raise DownloadError(f"{url}: {str(reason) or repr(reason)}{where}") from None


def _receive(url: str, response, part: Path, partial: Partial | None) -> bool:
    headers = response.headers
    etag, modified = headers.get("ETag"), headers.get("Last-Modified")
    if (response.status or 200) == 206:  # file:// replies carry no status
        match = CONTENT_RANGE.match(headers.get("Content-Range", ""))
        start = int(match.group(1)) if match else -1
        total = int(match.group(3)) if match and match.group(3) != "*" else None
        if partial is None or start != partial.have or total != partial.total or _changed(partial, etag, modified):
            log.info("%s: the 206 reply does not continue %s; starting again", url, part.name)
            _discard(part)
            return False
        mode = "ab"
    else:  # 200: the whole file (no range was asked, the remote file changed, or ranges are not supported)
        length = headers.get("Content-Length")
        total = int(length) if length and length.isdigit() else None
        _write_atomic(_sidecar(part, ".json"),
                      json.dumps({"url": url, "etag": etag, "last_modified": modified, "total": total}))
        mode = "wb"
    with part.open(mode) as out:
        shutil.copyfileobj(response, out, CHUNK)
    return _check_size(url, part, total)


def _changed(partial: Partial, etag: str | None, modified: str | None) -> bool:
    """Whether a 206 reply names another version of the file than the one the `.part` holds the start of."""
    if partial.etag and etag:
        return etag != partial.etag
    return bool(partial.last_modified and modified and modified != partial.last_modified)


def _check_size(url: str, part: Path, total: int | None) -> bool:
    """A connection closed early is not an end of file: the bytes must add up to the announced total."""
    size = part.stat().st_size
    if total is None or size == total:
        return True
    if size > total:
        _discard(part)
        raise DownloadError(f"{url}: received {size:,} bytes, more than the {total:,} announced; discarded")
    raise DownloadError(f"{url}: connection closed after {size:,} of {total:,} bytes "
                        f"(rerun to resume from {part.name})")


def _finish(url: str, part: Path, dest: Path, sha256: str | None) -> Path:
    actual = sha256_of(part)
    if sha256 is not None and actual != sha256:
        _discard(part)
        raise DownloadError(f"{url}: checksum mismatch (expected sha256 {sha256}, got {actual}); download discarded")
    os.replace(part, dest)
    _sidecar(part, ".json").unlink(missing_ok=True)
    _record(dest, actual)
    return dest


def get(kind: str, names: list[str], cache: Path, base_url: str | None = None, sha256: str | None = None,
        extract: bool = True) -> list[Path]:
    """Download each named item of a source into `<cache>/<kind>/`; archives come back unpacked (a directory)."""
    items: list[str | None] = list(names) or [None]
    if sha256 is not None:
        sha256 = check_sha256(sha256)
        if len(items) > 1:
            raise DownloadError(f"--sha256 is the digest of one file, but {len(items)} items were asked for")
    paths = []
    for name in items:
        item = remote(kind, name, base_url)
        dest = cache / kind / item.filename
        expected = sha256 or item.sha256
        with _turn(dest):
            if not cached(dest, expected):
                fetch(item.url, dest, expected)
            unpacks = extract and unpacked_dir(dest) is not None
            paths.append(unpack(dest, _recorded(dest) or "") if unpacks else dest)
    return paths
