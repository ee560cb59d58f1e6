"""Hostile input, second round (issue 54): each case through the CLI is refused with one line naming the file, key
or value and what was expected, exit 1, no traceback, nothing created; or, where the input is valid, a correct
result. Cases that need huge inputs trip the same limit with a lowered one (`common.MAX_LINE_BYTES` is 64 KiB
in `test_source_errors.build`)."""
from __future__ import annotations

import pyarrow as pa
import pytest

from tests.corpus.test_source_errors import _parquet, build
from tests.formats.test_wikidump import dump

PAGE = "<page><title>Big</title><ns>0</ns><id>9</id><revision><text>{}</text></revision></page>"

SOURCES = {
    "json: 20,000 nested brackets": ("jsonl", "wiki.jsonl", b"[" * 20_000 + b"\n", "nested too deeply"),
    "json: a lone surrogate": ("jsonl", "wiki.jsonl", b'{"text": "A cat sat. \\ud800 and more."}\n',
                               "lone surrogate U+D800"),
    "json: a NUL": ("jsonl", "wiki.jsonl", b'{"text": "A cat sat. A \\u0000 dog ran."}\n', "NUL character"),
    "parquet: invalid UTF-8": _parquet(pa.table({"text": pa.array([b"A cat sat here.", b"A \xff dog ran here."],
                                                                  type=pa.binary()).view(pa.string())}))
    + ("invalid UTF-8 at byte 2 of the text in row 2",),
    "parquet: a row over the line limit": _parquet(pa.table({"text": ["A cat sat here.", "Word here. " * 7_000]}))
    + ("a text of 77,000 bytes in row 2 (counting from 1); expected at most 65,536 bytes",),
    "wikidump: a page over the line limit": ("wikidump", "dump.xml", dump(PAGE.format("Word here. " * 20_000)),
                                             "found page #2 longer than 65,536 bytes"),
}


@pytest.mark.parametrize("case", SOURCES)
def test_a_hostile_source_is_one_line(tmp_path, monkeypatch, capsys, case):
    fmt, name, data, says = SOURCES[case]
    code, out, err = build(tmp_path, monkeypatch, capsys, fmt, name, data)
    assert code == 1 and out == "" and "Traceback" not in err, err
    assert err.startswith(f"error: {tmp_path / 'in' / name}") and len(err.strip().splitlines()) == 1, err
    assert says in err and "expected" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "in", "work"]
    assert [p.name for p in (tmp_path / "work" / "corpus").iterdir()] == [".locks"]  # no artifact, no .partial-*
