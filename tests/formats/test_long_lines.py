"""A line longer than MAX_LINE_BYTES is refused while it is read: memory stays bounded by the limit, not by
the line (issue #31: a 3 GB file without a newline ran out of memory before its check)."""
from __future__ import annotations

import tracemalloc

import pytest

from mbertlab.errors import DataError
from mbertlab.formats import common
from mbertlab.formats.conllu import read_conllu
from mbertlab.formats.extracted import read_jsonl
from mbertlab.formats.text import read_lines

LIMIT = 64 * 1024


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(common, "MAX_LINE_BYTES", LIMIT)


@pytest.mark.parametrize("reader", [read_lines, read_jsonl, lambda path: read_conllu(path)])
def test_a_line_without_end_is_refused_in_bounded_memory(tmp_path, small_limit, reader):
    path = tmp_path / "huge.txt"
    with path.open("wb") as f:
        f.write(b'{"text": "A first line."}\n')
        for _ in range(64):  # 4 MiB in one line
            f.write(b"x" * 2**16)
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as err:
            list(reader(path))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert str(err.value) == f"{path}:2: found a line longer than {LIMIT:,} bytes; expected at most that per line " \
                             "(a file without line ends?)"
    assert peak < 4 * LIMIT < path.stat().st_size / 16, peak


def test_a_line_of_exactly_the_limit_is_read(tmp_path, small_limit):
    path = tmp_path / "edge.txt"
    path.write_bytes(b"a" * LIMIT + b"\n" + b"b" * LIMIT)
    assert [len(line) for line in read_lines(path)] == [LIMIT, LIMIT]
    path.write_bytes(b"a" * LIMIT + b"\n" + b"b" * (LIMIT + 1))
    with pytest.raises(DataError, match=":2: found a line longer"):
        list(read_lines(path))
