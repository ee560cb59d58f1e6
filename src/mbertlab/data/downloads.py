"""Downloads into a cache directory: resumable (HTTP Range on a `.part` file), checksum-verified,
with a base-URL override (a mirror, or a local server in tests). Uses only the standard library."""
from __future__ import annotations

import hashlib
import shutil
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from mbertlab.errors import DownloadError

CHUNK = 1 << 16


@dataclass(frozen=True)
class Source:
    base_url: str
    pattern: str  # file path under base_url; {name} is the requested item
    needs_name: bool
    example: str


SOURCES = {
    "ud": Source("https://lindat.mff.cuni.cz/repository/xmlui/bitstream/handle/11234",
                 "1-5150/ud-treebanks-v{name}.tgz", True, "2.12"),
    "xnli": Source("https://dl.fbaipublicfiles.com/XNLI", "XNLI-1.0.zip", False, ""),
    "muse": Source("https://dl.fbaipublicfiles.com/arrival/dictionaries", "{name}.txt", True, "en-de"),
    "wikipedia": Source("https://dumps.wikimedia.org", "{name}wiki/latest/{name}wiki-latest-pages-articles.xml.bz2",
                        True, "en"),
    "wikiann": Source("https://www.dropbox.com/s/12h3qqog6q4bjve", "panx_dataset.tar?dl=1", False, ""),
}


def url_for(kind: str, name: str | None, base_url: str | None = None) -> str:
    if kind not in SOURCES:
        raise DownloadError(f"unknown data source {kind!r} (known: {', '.join(sorted(SOURCES))})")
    source = SOURCES[kind]
    if source.needs_name and not name:
        raise DownloadError(f"data source {kind!r} needs a name, e.g. {source.example!r}")
    return f"{(base_url or source.base_url).rstrip('/')}/{source.pattern.format(name=name or '')}"


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def download(url: str, dest: Path, sha256: str | None = None, timeout: float = 60.0) -> Path:
    """Fetch `url` to `dest`, resuming a previous `.part`; a checksum mismatch removes the file."""
    if dest.is_file() and (sha256 is None or sha256_of(dest) == sha256):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    have = part.stat().st_size if part.exists() else 0
    request = urllib.request.Request(url, headers={"Range": f"bytes={have}-"} if have else {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            mode = "ab" if have and response.status == 206 else "wb"
            with part.open(mode) as out:
                shutil.copyfileobj(response, out, CHUNK)
    except urllib.error.HTTPError as err:
        if err.code != 416:  # 416: the .part is already complete
            raise DownloadError(f"{url}: HTTP {err.code} {err.reason}") from None
    except (urllib.error.URLError, OSError) as err:
        raise DownloadError(f"{url}: {getattr(err, 'reason', err)} (rerun to resume from {part.name})") from None
    if sha256 is not None:
        actual = sha256_of(part)
        if actual != sha256:
            part.unlink()
            raise DownloadError(f"{url}: checksum mismatch (expected sha256 {sha256}, got {actual}); file removed")
    part.rename(dest)
    return dest


def get(kind: str, names: list[str], cache: Path, base_url: str | None = None,
        sha256: str | None = None) -> list[Path]:
    """Download each named item of a source into `<cache>/<kind>/`."""
    items = names or [None]
    paths = []
    for name in items:
        url = url_for(kind, name, base_url)
        filename = url.rsplit("/", 1)[-1].split("?", 1)[0]
        paths.append(download(url, cache / kind / filename, sha256))
    return paths
