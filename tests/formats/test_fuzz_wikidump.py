"""Fuzzing the Wikipedia dump reader, 1,000 cases: the shared data has no dump, so the cases mutate a small
dump written here (plain and bz2), byte by byte or element by element (one dropped, or its tags removed).
A complete dump must give its sentences; a dump cut short must be rejected; a randomly mutated one may be
read or rejected. Only DataError may come out."""
from __future__ import annotations

import bz2
import re

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mbertlab.errors import DataError
from mbertlab.formats.wikidump import read_wikidump
from tests.conftest import examples
from tests.formats.test_wikidump import BROKEN_DUMPS, BROKEN_PAGES, DUMP, EXPECTED, dump

RAW = DUMP.encode("utf-8")
END = RAW.rindex(b"</mediawiki>")
ELEMENT = re.compile(rb"<(\w+)[^<>]*/>|<(\w+)[^<>]*>(.*?)</\2>", re.DOTALL)  # an element without the same inside


def _read(tmp_path, data: bytes, compressed: bool) -> list[str] | DataError:
    path = tmp_path / ("dump.xml.bz2" if compressed else "dump.xml")
    path.write_bytes(bz2.compress(data) if compressed else data)
    try:
        return list(read_wikidump(path))
    except DataError as err:
        assert str(path) in str(err) and "\n" not in str(err)
        return err


@st.composite
def mutated(draw) -> bytes:
    data = bytearray(RAW)
    for _ in range(draw(st.integers(1, 4), label="mutations")):
        if not data:
            break
        at = draw(st.integers(0, len(data) - 1), label="at")
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut", "drop", "unwrap"]), label="kind")
        elements = [m for i in range(len(data)) if data[i] == ord("<") and (m := ELEMENT.match(data, i))] \
            if kind in ("drop", "unwrap") else []
        if elements:  # the page structure the crafted dumps broke: an element dropped, or its tags
            element = elements[at % len(elements)]
            kept = element.group(3) if kind == "unwrap" and element.group(3) is not None else b""
            data[element.start():element.end()] = kept
        elif kind == "flip":
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        elif kind == "cut":
            del data[at:]
    return bytes(data)


def crash_examples(test):
    """The dumps that crashed the reader (issue #31: gensim's AttributeError), kept as fixed examples."""
    for data in [dump(page) for page, _ in BROKEN_PAGES.values()] + [data for data, _ in BROKEN_DUMPS.values()]:
        for compressed in (False, True):
            test = example(case=("mutated", data), compressed=compressed)(test)
    return test


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@crash_examples
@given(case=st.one_of(st.tuples(st.just("cut"), st.integers(0, END - 1)), st.tuples(st.just("mutated"), mutated())),
       compressed=st.booleans())
def test_wikidump_reader_reads_or_rejects_only(tmp_path, case, compressed):
    kind, value = case
    if kind == "cut":  # a dump cut before its closing tag is invalid: never read as if complete
        assert isinstance(_read(tmp_path, RAW[:value], compressed), DataError)
    else:
        out = _read(tmp_path, value, compressed)
        assert isinstance(out, (list, DataError))
        if isinstance(out, list):
            assert all(isinstance(s, str) and s == s.strip() and s for s in out)


def test_the_whole_dump_is_read(tmp_path):
    assert _read(tmp_path, RAW, False) == EXPECTED == _read(tmp_path, RAW, True)
