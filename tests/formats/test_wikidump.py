"""Wikipedia dumps: a small dump written by the test, plain and bz2-compressed."""
from __future__ import annotations

import bz2
import logging

import pytest

from mbertlab.errors import DataError
from mbertlab.formats.wikidump import read_wikidump

DUMP = """<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">
  <siteinfo><sitename>Test</sitename></siteinfo>
  <page><title>Cat</title><ns>0</ns><id>1</id><revision><id>10</id><text xml:space="preserve">
The '''cat''' is a [[mammal|small mammal]]. It likes {{cite|x=1}}fish! Does it sleep? Yes.
== Section ==
Cats were [[domestication|domesticated]] long ago.&lt;ref&gt;A book&lt;/ref&gt;
</text></revision></page>
  <page><title>Talk:Cat</title><ns>1</ns><id>2</id><revision><id>11</id><text>Not an article.</text></revision></page>
  <page><title>Kitty</title><ns>0</ns><id>3</id><revision><id>12</id><text>#REDIRECT [[Cat]]</text></revision></page>
</mediawiki>
"""

EXPECTED = ["The cat is a small mammal.", "It likes fish!", "Does it sleep?", "Yes.",
            "Cats were domesticated long ago."]


@pytest.mark.parametrize("compressed", [False, True])
def test_dump_to_sentences(tmp_path, compressed):
    path = tmp_path / ("dump.xml.bz2" if compressed else "dump.xml")
    data = DUMP.encode("utf-8")
    path.write_bytes(bz2.compress(data) if compressed else data)
    sentences = list(read_wikidump(path))
    assert sentences == EXPECTED


def test_not_a_dump(tmp_path):
    path = tmp_path / "x.xml"
    path.write_text("<mediawiki><page><title>")
    with pytest.raises(DataError, match="MediaWiki XML dump"):
        list(read_wikidump(path))


HEAD = '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10">\n' \
       "<siteinfo><sitename>Test</sitename></siteinfo>\n"
GOOD = "<page><title>Dog</title><ns>0</ns><id>7</id><revision><id>70</id><text>Dogs bark at night.</text>" \
       "</revision></page>\n"


def dump(*pages: str) -> bytes:
    """A dump whose first page is GOOD, so a fault in a later page comes after sentences were read."""
    return (HEAD + GOOD + "".join(pages) + "</mediawiki>\n").encode("utf-8")


# Pages that gensim's extract_pages met with AttributeError (issue #31): each is a DataError naming page #2.
BROKEN_PAGES = {
    "no ns": ("<page><title>Cat</title><id>1</id><revision><id>10</id><text>Cats purr.</text></revision></page>",
              "page #2 ('Cat') without <ns>"),
    "no title": ("<page><ns>0</ns><id>1</id><revision><id>10</id><text>Cats purr.</text></revision></page>",
                 "page #2 without <title>"),
    "no id": ("<page><title>Cat</title><ns>0</ns><revision><id>10</id><text>Cats purr.</text></revision></page>",
              "page #2 ('Cat') without <id>"),
    "empty title and ns": ("<page><title/><ns> </ns><id>1</id><revision><text>Cats purr.</text></revision></page>",
                           "page #2 without <title> or <ns>"),
    "empty page": ("<page/>", "an empty page #2"),
    "text outside revision": ("<page><title>Cat</title><ns>0</ns><id>1</id><text>Cats purr.</text></page>",
                              "<text> outside <revision> in page #2 ('Cat')"),
    "revision without text": ("<page><title>Cat</title><ns>0</ns><id>1</id><revision><id>10</id></revision></page>",
                              "a <revision> without <text> in page #2 ('Cat')"),
    "talk page without ns": ("<page><title>Talk:Cat</title><id>2</id><revision><text>Hi.</text></revision></page>",
                             "page #2 ('Talk:Cat') without <ns>"),
}
# Dumps refused as a whole: (bytes, words of the message).
BROKEN_DUMPS = {
    "no pages": ((HEAD + "</mediawiki>\n").encode(), "found no <page>"),
    "only empty texts": ((HEAD + "<page><title>A</title><ns>0</ns><id>1</id><revision><text/></revision></page>"
                          "<page><title>B</title><ns>0</ns><id>2</id><revision><text>  \n</text></revision></page>"
                          "</mediawiki>").encode(), "found no sentence in 2 pages: 0 redirects or in other "
                                                    "namespaces, 2 without text"),
    "only redirects": ((HEAD + "<page><title>A</title><ns>0</ns><id>1</id><revision><text>#REDIRECT [[B]]</text>"
                        "</revision></page></mediawiki>").encode(), "found no sentence in 1 page: 1 redirects"),
    "cut short": (dump()[:len(HEAD) + 60], "found malformed XML"),
    "empty file": (b"", "found malformed XML (no element found"),
    "no namespace": (b"<mediawiki><page><title>A</title></page></mediawiki>",
                     "found root element <mediawiki> in no namespace; expected a MediaWiki XML dump"),
    "another root": (b'<feed xmlns="http://www.mediawiki.org/xml/export-0.10/"/>',
                     "found root element <feed> in namespace"),
}


def write_dump(directory, data: bytes, compressed: bool):
    path = directory / ("dump.xml.bz2" if compressed else "dump.xml")
    path.write_bytes(bz2.compress(data) if compressed else data)
    return path


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("case", BROKEN_PAGES)
def test_a_broken_page_is_named(tmp_path, case, compressed):
    page, words = BROKEN_PAGES[case]
    path = write_dump(tmp_path, dump(page, GOOD), compressed)
    read = read_wikidump(path)
    assert next(read) == "Dogs bark at night."  # streamed: the good page first
    with pytest.raises(DataError) as err:
        list(read)
    assert str(err.value).startswith(f"{path}: found {words}; expected ") and "\n" not in str(err.value)


@pytest.mark.parametrize("compressed", [False, True])
@pytest.mark.parametrize("case", BROKEN_DUMPS)
def test_a_broken_dump_is_refused(tmp_path, case, compressed):
    data, words = BROKEN_DUMPS[case]
    path = write_dump(tmp_path, data, compressed)
    with pytest.raises(DataError) as err:
        list(read_wikidump(path))
    assert str(err.value).startswith(str(path)) and words in str(err.value) and "\n" not in str(err.value)


def test_a_cut_bz2_stream_is_refused(tmp_path):
    path = tmp_path / "dump.xml.bz2"
    path.write_bytes(bz2.compress(dump() * 3)[:-20])
    with pytest.raises(DataError, match="found an unreadable file .*Compressed file ended"):
        list(read_wikidump(path))


def test_pages_without_text_are_skipped_with_one_warning(tmp_path, caplog):
    no_revision = "<page><title>Cat</title><ns>0</ns><id>1</id></page>"
    deleted = '<page><title>Emu</title><ns>0</ns><id>3</id><revision><text deleted="deleted"/></revision></page>'
    talk = "<page><title>Talk:Emu</title><ns>1</ns><id>4</id></page>"  # other namespace: left out, not counted
    path = write_dump(tmp_path, dump(no_revision, talk, deleted), False)
    with caplog.at_level(logging.WARNING, logger="mbertlab"):
        assert list(read_wikidump(path)) == ["Dogs bark at night."]
    assert [r.getMessage() for r in caplog.records] == [
        f"{path}: skipped 2 pages without text (no <revision>, or an empty or deleted <text>): "
        "page #2 ('Cat'), page #4 ('Emu')"]


def test_the_newest_revision_is_read(tmp_path):
    history = "<page><title>Cat</title><ns>0</ns><id>1</id><revision><text>Old text here.</text></revision>" \
              "<revision><text>New text here.</text></revision></page>"
    assert list(read_wikidump(write_dump(tmp_path, dump(history), False))) == ["Dogs bark at night.",
                                                                               "New text here."]
