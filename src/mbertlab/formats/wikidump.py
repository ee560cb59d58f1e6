"""Wikipedia XML dumps (`.xml` or `.xml.bz2`) → plain sentences.

Pages are streamed with the standard library's `iterparse` (the parser under gensim's `extract_pages`) and
freed once read, so a dump is never loaded whole; markup is removed by gensim's `filter_wiki`. The page walk
is ours: `extract_pages` takes a page's children without checking that they exist, so a page lacking one
raised AttributeError and ended the whole read. Here each page is checked:

- a page without `<title>`, `<ns>` or `<id>` (an empty `<page/>` too), with `<text>` outside `<revision>` or
  a `<revision>` without `<text>` is not MediaWiki's export format: a DataError naming the file and the page
  (its ordinal among all pages of the file, and its title when it has one);
- an article page (in `namespaces`) with no `<revision>`, or an empty or deleted `<text>`: skipped and
  counted, with one warning line at the end ("skipped N pages without text: ...");
- redirects and pages of other namespaces are left out by design, not counted as skipped;
- malformed or truncated XML or bz2, a root outside MediaWiki's export namespace, no `<page>` at all, or no
  sentence in the whole dump: a DataError.

Sentences are cut after . ! ? ؟ । 。！？
"""
from __future__ import annotations

import bz2
import logging
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from mbertlab.errors import DataError
from mbertlab.formats import common
from mbertlab.formats.common import existing_file

SENTENCE_END = re.compile(r"(?<=[.!?؟।])\s+|(?<=[。！？])")
EMPHASIS = re.compile(r"'{2,}")  # the quotes of ''italic'' and bold that filter_wiki leaves
MIN_CHARS = 4
READ_AHEAD = 2**16  # iterparse reads 16 KiB at a time, so a page's end is seen up to a chunk late
NAMED_SKIPS = 5  # pages named in the warning about skipped pages
log = logging.getLogger("mbertlab")


@dataclass
class _Tally:
    pages: int = 0  # every <page> read so far; the current page's ordinal
    left_out: int = 0  # redirects and other namespaces
    skipped: int = 0  # article pages without text
    named: list[str] = field(default_factory=list)  # the first NAMED_SKIPS of them

    def skip(self, name: str) -> None:
        self.skipped += 1
        if len(self.named) < NAMED_SKIPS:
            self.named.append(name)

    def summary(self) -> str:
        return f"{_pages(self.pages)}: {self.left_out} redirects or in other namespaces, {self.skipped} without text"


def read_wikidump(path: str | Path, namespaces: tuple[str, ...] = ("0",)) -> Iterator[str]:
    """The sentences of the dump's article pages, in order (see the module's docstring for what is refused)."""
    from gensim.corpora.wikicorpus import filter_wiki

    path = existing_file(path)
    tally, sentences = _Tally(), 0
    for text in _page_texts(path, namespaces, tally):
        for sentence in split_sentences(EMPHASIS.sub("", filter_wiki(text))):
            sentences += 1
            yield sentence
    if not tally.pages:
        raise DataError(path, None, "found no <page>; expected a MediaWiki XML dump with pages")
    if not sentences:
        raise DataError(path, None, f"found no sentence in {tally.summary()}; expected article text in "
                                    f"namespace {' or '.join(namespaces)}")
    if tally.skipped:
        names = ", ".join(tally.named) + (", ..." if tally.skipped > len(tally.named) else "")
        log.warning("%s: skipped %s without text (no <revision>, or an empty or deleted <text>): %s",
                    path, _pages(tally.skipped), names)


def _page_texts(path: Path, namespaces: tuple[str, ...], tally: _Tally) -> Iterator[str]:
    """The wikitext of each article page, each page checked and freed as soon as it ends."""
    from xml.etree.ElementTree import ParseError, iterparse

    opener = bz2.open if path.suffix == ".bz2" else open
    try:
        with opener(path, "rb") as raw:
            f = _PageBound(path, raw, tally)
            events = iterparse(f, events=("start", "end"))
            _, root = next(events)
            tags = _tags(path, root.tag)
            for event, elem in events:
                if event == "end" and elem.tag == tags["page"]:
                    tally.pages += 1
                    text = _article_text(path, elem, tags, namespaces, tally)
                    root.clear()  # frees the page: the root would otherwise keep every page read
                    f.page_ended()
                    if text is not None:
                        yield text
    except ParseError as err:
        raise DataError(path, err.position[0], f"found malformed XML ({err}); expected a complete MediaWiki "
                                               "XML dump (is the file cut short?)") from None
    except (OSError, EOFError) as err:  # bz2: not a bz2 stream, or one cut short
        raise DataError(path, None, f"found an unreadable file ({err}); expected a MediaWiki XML dump, plain "
                                    "or bz2-compressed") from None


class _PageBound:
    """The dump's (decompressed) bytes for iterparse, refused once a page runs past `common.MAX_LINE_BYTES`:
    a page is held whole until it ends, so without a bound one huge page fills memory, as a line without line
    ends would in the other readers. The bound is counted in what the parser has read, a chunk ahead."""

    def __init__(self, path: Path, raw, tally: _Tally) -> None:
        self.path, self.raw, self.tally = path, raw, tally
        self.read_bytes = self.page_start = 0

    def read(self, size: int = -1) -> bytes:
        data = self.raw.read(size)
        self.read_bytes += len(data)
        if self.read_bytes - self.page_start > common.MAX_LINE_BYTES + READ_AHEAD:
            raise DataError(self.path, None, f"found page #{self.tally.pages + 1} longer than "
                                             f"{common.MAX_LINE_BYTES:,} bytes; expected at most that per page "
                                             "(the limit of a line in the other readers)")
        return data

    def page_ended(self) -> None:
        self.page_start = self.read_bytes


def _tags(path: Path, root: str) -> dict[str, str]:
    """The qualified tag names in the root's namespace, which MediaWiki changes with each export version."""
    from gensim.corpora.wikicorpus import get_namespace

    try:
        namespace = get_namespace(root)
    except ValueError:
        namespace = None
    if namespace is None or root != f"{{{namespace}}}mediawiki":
        uri, _, local = root[1:].rpartition("}") if root.startswith("{") else ("", "", root)
        found = f"<{local}> in namespace {uri!r}" if uri else f"<{local}> in no namespace"
        raise DataError(path, None, f"found root element {found}; expected a MediaWiki XML dump: <mediawiki "
                                    'xmlns="http://www.mediawiki.org/xml/export-N/">')
    return {name: f"{{{namespace}}}{name}" for name in ("page", "title", "ns", "id", "revision", "text")}


def _article_text(path: Path, page, tags: dict[str, str], namespaces: tuple[str, ...], tally: _Tally) -> str | None:
    """The page's newest wikitext, or None for a redirect, another namespace or (counted) no text."""
    fields = {key: page.find(tags[key]) for key in ("title", "ns", "id")}
    title = fields["title"].text if fields["title"] is not None else None
    name = f"page #{tally.pages}" + (f" ({title.strip()!r})" if title and title.strip() else "")
    if len(page) == 0:
        raise DataError(path, None, f"found an empty {name}; expected <title>, <ns>, <id> and <revision>")
    missing = [f"<{key}>" for key, elem in fields.items() if elem is None or not (elem.text or "").strip()]
    if missing:
        raise DataError(path, None, f"found {name} without {' or '.join(missing)}; expected <title>, <ns> and "
                                    "<id> in every page")
    if page.find(tags["text"]) is not None:
        raise DataError(path, None, f"found <text> outside <revision> in {name}; expected it inside <revision>")
    revisions = page.findall(tags["revision"])
    if any(revision.find(tags["text"]) is None for revision in revisions):
        raise DataError(path, None, f"found a <revision> without <text> in {name}; expected <text> in every "
                                    "revision")
    text = revisions[-1].find(tags["text"]).text if revisions else None  # a history dump lists the newest last
    if fields["ns"].text.strip() not in namespaces or (text or "").lstrip().lower().startswith("#redirect"):
        tally.left_out += 1
        return None
    if not (text or "").strip():
        tally.skip(name)
        return None
    return text


def _pages(count: int) -> str:
    return f"{count} page" if count == 1 else f"{count} pages"


def split_sentences(plain: str) -> Iterator[str]:
    """Sentences of plain text: paragraphs are lines; headings, list and table lines and pieces under
    MIN_CHARS characters are dropped; whitespace is collapsed and the text NFC-normalised."""
    for paragraph in plain.split("\n"):
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        if not paragraph or paragraph.startswith(("=", "*", "|", "!")):
            continue
        for sentence in SENTENCE_END.split(paragraph):
            sentence = unicodedata.normalize("NFC", sentence.strip())
            if len(sentence) >= MIN_CHARS:
                yield sentence
