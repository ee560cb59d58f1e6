"""Where each public data set lives: URL patterns, the UD release -> LINDAT handle table and the SHA-256 digests
that can be vouched for. Kept apart from the HTTP code so that a new release is one line here.

Provenance (see docs/downloads.md): the handles are the release list of universaldependencies.org/download.html
(UniversalDependencies/docs, download.md); the UD digests are those pyconll's integration tests check on the
archives they download from LINDAT (2.0-2.16; 2.17 and 2.18 from the mirror those tests use since, 2.18 matched
by an independent audit); XNLI's is the one Hugging Face `datasets` records for the same URL."""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

from mbertlab.errors import DownloadError

URL_SCHEMES = ("http", "https", "file")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*\Z")  # no '/', no leading '.': a name never leaves its folder
SHA256 = re.compile(r"[0-9a-f]{64}\Z")

# UD release -> LINDAT handle 11234/<handle>. 1.0 and 1.1 are left out: their archive names are not known here.
UD_HANDLES = {
    "1.2": "1-1548", "1.3": "1-1699", "1.4": "1-1827",
    "2.0": "1-1983", "2.1": "1-2515", "2.2": "1-2837", "2.3": "1-2895", "2.4": "1-2988", "2.5": "1-3105",
    "2.6": "1-3226", "2.7": "1-3424", "2.8": "1-3687", "2.9": "1-4611", "2.10": "1-4758", "2.11": "1-4923",
    "2.12": "1-5150", "2.13": "1-5287", "2.14": "1-5502", "2.15": "1-5787", "2.16": "1-5901", "2.17": "1-6036",
    "2.18": "1-6149",
}

# SHA-256 of ud-treebanks-v<release>.tgz. No digest is pinned for 1.2-1.4 (none could be vouched for).
UD_SHA256 = {
    "2.0": "c6c6428f709102e64f608e9f251be59d35e4add1dd842d8dc5a417d01415eb29",
    "2.1": "446cc70f2194d0141fb079fb22c05b310cae9213920e3036b763899f349fee9b",
    "2.2": "a9580ac2d3a6d70d6a9589d3aeb948fbfba76dca813ef7ca7668eb7be2eb4322",
    "2.3": "122e93ad09684b971fd32b4eb4deeebd9740cd96df5542abc79925d74976efff",
    "2.4": "252a937038d88587842f652669cdf922b07d0f1ed98b926f738def662791eb62",
    "2.5": "5ff973e44345a5f69b94cc1427158e14e851c967d58773cc2ac5a1d3adaca409",
    "2.6": "a462a91606c6b2534a767bbe8e3f154b678ef3cc81b64eedfc9efe9d60ceeb9e",
    "2.7": "ee61f186ac5701440f9d2889ca26da35f18d433255b5a188b0df30bc1525502b",
    "2.8": "95d2f4370dc5fe93653eb36e7268f4ec0c1bd012e51e943d55430f1e9d0d7e05",
    "2.9": "ca0162be47151a55a5c6c5de24db821c76d67f322fcdfa3fe1436891e9bf2232",
    "2.10": "f6deca6ab803abdfa8dca911600f6bc5f214267e348acbd59fd4c4b88db14ea6",
    "2.11": "d75f7df726761836f797fe6c001c7a1ecce93d93129414ef57cf2262d15707e8",
    "2.12": "24f876d5ad9dbdc639a33a73f02d12ddfe582e8d4e7f5d08978c8a86680d088c",
    "2.13": "d6538ed4c05508be3bb7d9c3448de1062f6f9958c833b93558df300e4b1d3781",
    "2.14": "a710e09f977fc1ca4aeaf200806a75fbbc46d2c0717c70933a94ad78129ee1af",
    "2.15": "24ddd9a7e6a291f3882c13febb4d97accfbc6f51633a867963c19e6004d7df97",
    "2.16": "87710204b6441736a8a9fed779585aa88b6eeafe231fa2ed9282c0cd9e30960b",
    "2.17": "bf30726e238f9c4379ffb0d6f8c3eaf4ecad9f72ab42104b0130b61603915872",
    "2.18": "a93fe8520bc4c5ff34670d9a93a5a7689c018c1e59643fa27e03036717841b8a",
}


@dataclass(frozen=True)
class Source:
    base_url: str
    pattern: str  # path under base_url: {name} is the requested item, {handle} a UD release's LINDAT handle
    needs_name: bool
    example: str
    sha256: dict[str | None, str]  # item -> pinned digest, where one can be vouched for


@dataclass(frozen=True)
class Remote:
    """One file to fetch: its URL, its name in the cache and its pinned digest (None: size check only)."""
    url: str
    filename: str
    sha256: str | None


SOURCES = {
    "ud": Source("https://lindat.mff.cuni.cz/repository/server/api/core/bitstreams/handle/11234",
                 "{handle}/ud-treebanks-v{name}.tgz", True, "2.12", UD_SHA256),
    "xnli": Source("https://dl.fbaipublicfiles.com/XNLI", "XNLI-1.0.zip", False, "",
                   {None: "4ba1d5e1afdb7161f0f23c66dc787802ccfa8a25a3ddd3b165a35e50df346ab1"}),
    "muse": Source("https://dl.fbaipublicfiles.com/arrival/dictionaries", "{name}.txt", True, "en-de", {}),
    "wikipedia": Source("https://dumps.wikimedia.org", "{name}wiki/latest/{name}wiki-latest-pages-articles.xml.bz2",
                        True, "en", {}),
    "wikiann": Source("https://www.dropbox.com/s/12h3qqog6q4bjve", "panx_dataset.tar?dl=1", False, "", {}),
}


def check_url(url: str, what: str = "URL") -> str:
    """Refuse anything urllib cannot fetch (a bare word, a typo'd scheme) with one line instead of a traceback."""
    try:
        parts = urllib.parse.urlsplit(url)
        fetchable = parts.scheme in ("http", "https") and parts.netloc or parts.scheme == "file" and parts.path
    except ValueError:  # e.g. an unclosed '[' in the host
        fetchable = False
    if not fetchable:
        raise DownloadError(f"{what} {url!r}: expected an http://, https:// or file:// URL "
                            "(e.g. https://mirror.example.org/ud or file:///data/mirror/ud)")
    return url


def check_sha256(digest: str) -> str:
    """A digest the user typed: 64 hex digits, compared in lower case."""
    if not SHA256.match(digest.strip().lower()):
        raise DownloadError(f"--sha256 {digest!r}: expected 64 hexadecimal digits")
    return digest.strip().lower()


def ud_releases() -> list[str]:
    return sorted(UD_HANDLES, key=lambda v: tuple(int(p) for p in v.split(".")))


def _handle(kind: str, name: str | None) -> str:
    if kind != "ud":
        return ""
    if name not in UD_HANDLES:
        raise DownloadError(f"UD release {name!r} is not in the release table (known: {', '.join(ud_releases())}); "
                            "a newer release needs its LINDAT handle added to mbertlab.data.sources.UD_HANDLES")
    return UD_HANDLES[name]


def remote(kind: str, name: str | None, base_url: str | None = None) -> Remote:
    """The file behind one item of a source, e.g. ('ud', '2.12') or ('muse', 'en-de')."""
    if kind not in SOURCES:
        raise DownloadError(f"unknown data source {kind!r} (known: {', '.join(sorted(SOURCES))})")
    source = SOURCES[kind]
    if source.needs_name and not name:
        raise DownloadError(f"data source {kind!r} needs a name, e.g. {source.example!r}")
    if not source.needs_name and name:
        raise DownloadError(f"data source {kind!r} is one file and takes no name (got {name!r})")
    if name is not None and not NAME.match(name):
        raise DownloadError(f"{kind} item {name!r}: expected letters, digits, '.', '_' or '-' (e.g. "
                            f"{source.example!r})")
    base = check_url(base_url, "base URL") if base_url else source.base_url
    path = source.pattern.format(name=name or "", handle=_handle(kind, name))
    url = f"{base.rstrip('/')}/{path}"
    filename = path.rsplit("/", 1)[-1].split("?", 1)[0]
    return Remote(url, filename, source.sha256.get(name))


def url_for(kind: str, name: str | None, base_url: str | None = None) -> str:
    return remote(kind, name, base_url).url
