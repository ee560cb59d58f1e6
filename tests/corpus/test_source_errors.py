"""`mbertlab corpus build` on broken sources (issue #31): exit 1 and one line naming the file, no traceback, no
`.partial-*` folder, nothing written outside the workdir; a dump's pages without text are skipped with one
warning line. The sources are the crafted cases of the reader tests, written here."""
from __future__ import annotations

import bz2
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mbertlab.cli.main import run
from mbertlab.formats import common
from tests.formats.test_extracted import ARTICLES, EXPECTED
from tests.formats.test_wikidump import BROKEN_DUMPS, BROKEN_PAGES, GOOD, dump


def _wikidump(data: bytes, compressed: bool = False):
    return ("wikidump", "dump.xml.bz2" if compressed else "dump.xml", bz2.compress(data) if compressed else data)


def _parquet(table: pa.Table) -> tuple[str, str, bytes]:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return "parquet", "wiki.parquet", sink.getvalue().to_pybytes()


CASES = {
    **{f"{case}{' bz2' if z else ''}": _wikidump(dump(page, GOOD), z)
       for case, (page, _) in BROKEN_PAGES.items() for z in (False, True)},
    **{f"{case}{' bz2' if z else ''}": _wikidump(data, z) for case, (data, _) in BROKEN_DUMPS.items()
       for z in (False, True)},
    "bz2 cut short": _wikidump(bz2.compress(dump())[:-20]),
    "json: not JSON": ("jsonl", "wiki.jsonl", b'{"text": "A b c."}\n{"text": \n'),
    "json: no text key": ("jsonl", "wiki.jsonl", b'{"title": "A"}\n'),
    "json: text not a string": ("jsonl", "wiki.jsonl", b'{"text": 3}\n'),
    "json: not an object": ("jsonl", "wiki.jsonl", b'"A b c."\n'),
    "json: no sentence": ("jsonl", "wiki.jsonl", b'{"text": ""}\n'),
    "parquet: no text column": _parquet(pa.table({"body": ["A b c."]})),
    "parquet: text not strings": _parquet(pa.table({"text": [1.5]})),
    "parquet: null text": _parquet(pa.table({"text": pa.array(["A b c.", None])})),
    "parquet: not Parquet": ("parquet", "wiki.parquet", b"PAR1 nothing else"),
    "text: huge line": ("text", "huge.txt", b"A b c.\n" + b"x" * 300_000),
    "json: huge line": ("jsonl", "wiki.jsonl", b'{"text": "' + b"x" * 300_000 + b'"}\n'),
}


def build(tmp_path, monkeypatch, capsys, fmt: str, name: str, data: bytes) -> tuple[int, str, str]:
    """Run `corpus build` from an empty working directory; return (exit code, stdout, stderr)."""
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / name).write_bytes(data)
    config = tmp_path / "in" / "corpus.yaml"
    config.write_text(json.dumps({"languages": [{"name": "xx", "sources": [{"path": str(tmp_path / "in" / name),
                                                                           "format": fmt}]}]}))
    (tmp_path / "cwd").mkdir()
    monkeypatch.chdir(tmp_path / "cwd")
    monkeypatch.setattr(common, "MAX_LINE_BYTES", 2**16)
    code = run(["-w", str(tmp_path / "work"), "corpus", "build", str(config)])
    return code, *capsys.readouterr()


@pytest.mark.parametrize("case", CASES)
def test_a_broken_source_is_one_line(tmp_path, monkeypatch, capsys, case):
    fmt, name, data = CASES[case]
    code, out, err = build(tmp_path, monkeypatch, capsys, fmt, name, data)
    assert code == 1 and out == "" and "Traceback" not in err, err
    assert err.startswith(f"error: {tmp_path / 'in' / name}") and len(err.strip().splitlines()) == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cwd", "in", "work"]
    assert not list((tmp_path / "cwd").iterdir()) and len(list((tmp_path / "in").iterdir())) == 2
    assert [p.name for p in (tmp_path / "work" / "corpus").iterdir()] == [".locks"]  # no artifact, no .partial-*


def test_pages_without_text_are_skipped_with_one_warning_line(tmp_path, monkeypatch, capsys):
    no_revision = "<page><title>Cat</title><ns>0</ns><id>1</id></page>"
    code, out, err = build(tmp_path, monkeypatch, capsys, *_wikidump(dump(no_revision), True))
    assert code == 0, err
    assert err == f"warning: {tmp_path / 'in' / 'dump.xml.bz2'}: skipped 1 page without text (no <revision>, " \
                  "or an empty or deleted <text>): page #2 ('Cat')\n"
    corpus = tmp_path / "work" / "corpus" / out.strip().rsplit("/", 1)[-1] / "xx"
    assert (corpus / "train.txt").read_text() + (corpus / "dev.txt").read_text() == "Dogs bark at night.\n"


@pytest.mark.parametrize("fmt, name", [("jsonl", "wiki.jsonl"), ("parquet", "wiki.parquet")])
def test_pre_extracted_articles_make_a_corpus(tmp_path, monkeypatch, capsys, fmt, name):
    data = "".join(json.dumps(a) + "\n" for a in ARTICLES).encode() if fmt == "jsonl" \
        else _parquet(pa.Table.from_pylist(ARTICLES))[2]
    code, out, err = build(tmp_path, monkeypatch, capsys, fmt, name, data)
    assert code == 0 and err == "", err
    corpus = tmp_path / "work" / "corpus" / out.strip().rsplit("/", 1)[-1] / "xx"
    lines = (corpus / "train.txt").read_text().splitlines() + (corpus / "dev.txt").read_text().splitlines()
    assert sorted(lines) == sorted(EXPECTED)


def test_a_dump_read_twice_warns_once(tmp_path, monkeypatch, capsys):
    """With `sampling`, each source is read to count it, then to build: the warning still comes once."""
    no_revision = "<page><title>Cat</title><ns>0</ns><id>1</id></page>"
    (tmp_path / "dump.xml").write_bytes(dump(no_revision))
    config = tmp_path / "corpus.yaml"
    config.write_text(json.dumps({"sampling": "balanced", "languages": [
        {"name": l, "sources": [{"path": str(tmp_path / "dump.xml"), "format": "wikidump"}]} for l in ("xx", "yy")]}))
    assert run(["-w", str(tmp_path / "work"), "corpus", "build", str(config)]) == 0
    assert capsys.readouterr().err == f"warning: {tmp_path / 'dump.xml'}: skipped 1 page without text (no " \
                                      "<revision>, or an empty or deleted <text>): page #2 ('Cat')\n"
