"""Wikipedia dumps: a small dump written by the test, plain and bz2-compressed."""
from __future__ import annotations

import bz2

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
