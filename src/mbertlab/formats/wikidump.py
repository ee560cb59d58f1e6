"""Wikipedia XML dumps (`.xml` or `.xml.bz2`) → plain sentences.

Markup is removed by gensim's `filter_wiki` (templates, links, tables, refs); pages are streamed with
its `extract_pages`, so a dump is never loaded whole. Sentences are cut after . ! ? ؟ । 。！？
"""
from __future__ import annotations

import bz2
import re
import unicodedata
from pathlib import Path
from typing import Iterator

from mbertlab.errors import DataError
from mbertlab.formats.common import existing_file

SENTENCE_END = re.compile(r"(?<=[.!?؟।])\s+|(?<=[。！？])")
EMPHASIS = re.compile(r"'{2,}")  # the quotes of ''italic'' and bold that filter_wiki leaves
MIN_CHARS = 4


def read_wikidump(path: str | Path, namespaces: tuple[str, ...] = ("0",)) -> Iterator[str]:
    from xml.etree.ElementTree import ParseError

    from gensim.corpora.wikicorpus import extract_pages, filter_wiki

    path = existing_file(path)
    opener = bz2.open if path.suffix == ".bz2" else open
    with opener(path, "rb") as f:
        try:
            for _title, text, _pageid in extract_pages(f, filter_namespaces=namespaces):
                if text.lstrip().lower().startswith("#redirect"):
                    continue
                yield from _sentences(EMPHASIS.sub("", filter_wiki(text)))
        except (ParseError, OSError, EOFError, ValueError) as err:  # ValueError: gensim's unknown namespace
            raise DataError(path, None, f"expected a MediaWiki XML dump ({err})") from None


def _sentences(plain: str) -> Iterator[str]:
    for paragraph in plain.split("\n"):
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        if not paragraph or paragraph.startswith(("=", "*", "|", "!")):
            continue
        for sentence in SENTENCE_END.split(paragraph):
            sentence = unicodedata.normalize("NFC", sentence.strip())
            if len(sentence) >= MIN_CHARS:
                yield sentence
