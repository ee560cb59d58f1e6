"""Fuzzing the Wikipedia dump reader, 1,000 cases: the shared data has no dump, so the cases mutate a small
dump written here (plain and bz2). A complete dump must give its sentences; a dump cut short must be
rejected; a randomly mutated one may be read or rejected. Only DataError may come out."""
from __future__ import annotations

import bz2

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mbertlab.errors import DataError
from mbertlab.formats.wikidump import read_wikidump
from tests.conftest import examples
from tests.formats.test_wikidump import DUMP, EXPECTED

RAW = DUMP.encode("utf-8")
END = RAW.rindex(b"</mediawiki>")


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
        kind = draw(st.sampled_from(["flip", "insert", "delete", "cut"]), label="kind")
        if kind == "flip":
            data[at] = draw(st.integers(0, 255))
        elif kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif kind == "delete":
            del data[at:at + draw(st.integers(1, 16))]
        else:
            del data[at:]
    return bytes(data)


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
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
