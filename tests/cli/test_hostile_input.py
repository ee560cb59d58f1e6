"""Hostile input, second round (issue 54): each case through the CLI is refused with one line naming the file, key
or value and what was expected, exit 1, no traceback, nothing created; or, where the input is valid, a correct
result. Cases that need huge inputs trip the same limit with a lowered one (`common.MAX_LINE_BYTES` is 64 KiB
in `test_source_errors.build`)."""
from __future__ import annotations

import json
import math
import os
import sqlite3
import time
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from mbertlab import yaml_loader
from mbertlab.cli.main import run
from tests.cli.test_hostile_configs import refused
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


# -- specs and configs: refused before anything is made (`refused` checks exit 1, one line, nothing created) ----

BOMB = "".join(f"{b}: &{b} [{', '.join([f'*{a}'] * 9)}]\n" for a, b in zip("abcdefgh", "bcdefghi"))
BOMB = 'a: &a ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB  # 9^9 values, 700 bytes


@pytest.mark.parametrize("command", [["study", "validate"], ["corpus", "build"]])
def test_a_yaml_alias_bomb_is_refused_before_it_expands(tmp_path, capsys, monkeypatch, command):
    """The issue's 700-byte bomb took 105 s and 12.6 GB; the bound is lowered so that a bomb of 9^4 values trips
    it, which the old code read in full (and then refused the unknown keys, not the bomb)."""
    monkeypatch.setattr(yaml_loader, "MAX_YAML_NODES", 1_000)
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(BOMB.splitlines()[:4]) + "\n", encoding="utf-8")
    line = refused([*command, str(path)], tmp_path / "w", capsys)
    assert line.startswith(f"error: {path}:") and "expand to more than 1,000 values (an alias bomb?)" in line


def test_the_issues_alias_bomb_is_refused_in_a_second(tmp_path, capsys):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB, encoding="utf-8")
    assert len(BOMB) < 800
    started = time.perf_counter()
    line = refused(["study", "validate", str(path)], tmp_path / "w", capsys)
    assert "an alias bomb?" in line and time.perf_counter() - started < 2.0


@pytest.mark.parametrize(("text", "says"), [
    ("a: &a [*a]\n", "found an alias inside the value it names"),
    ("[" * 1_000 + "\n", "nested too deeply"),
])
def test_a_recursive_or_deep_yaml_is_one_line(tmp_path, capsys, text, says):
    path = tmp_path / "c.yaml"
    path.write_text(text, encoding="utf-8")
    line = refused(["corpus", "build", str(path)], tmp_path / "w", capsys)
    assert line.startswith(f"error: {path}") and says in line and "expected" in line


@pytest.mark.parametrize(("spec", "says"), [
    ("include: [quick, quick]\nname: x\n", "key 'include': expected the name or path of one spec, got ['quick', "),
    ("include: quick\nname: x\nscales: {test: 5}\n", "key 'scales.test': expected a mapping of the keys this scale "
                                                     "sets, got 5"),
    ("include: quick\nname: x\nscales: [test]\n", "key 'scales': expected a mapping from scales"),
    ("include: quick\nname: x\nscales: {huge: {}}\n", "key 'scales': found scale 'huge'; expected one of"),
])
def test_spec_structure_is_checked_before_merging(tmp_path, capsys, spec, says):
    path = tmp_path / "spec.yaml"
    path.write_text(spec, encoding="utf-8")
    line = refused(["study", "validate", str(path), "--scale", "test"], tmp_path / "w", capsys)
    assert line.startswith(f"error: {path}: ") and says in line


@pytest.mark.parametrize("command", ["run", "plan", "validate", "report", "status"])
def test_an_empty_scale_is_an_error_not_lab(tmp_path, capsys, command):
    line = refused(["study", command, "quick", "--scale", ""], tmp_path / "w", capsys)
    assert line == "error: --scale: expected one of test, lab, gpu, paper, got ''"


@pytest.mark.parametrize(("args", "says"), [
    (["--set", "scales.test=5"], "error: --set 'scales.test=5': key 'scales' cannot be set with --set"),
    (["--set", "scale=lab"], "error: --set 'scale=lab': key 'scale' cannot be set with --set"),
    (["-j", "-1"], "error: --jobs -1: expected 0 (one worker per core; no cap on slurm) or a positive count"),
])
def test_options_without_effect_are_refused(tmp_path, capsys, args, says):
    assert refused(["study", "run", "quick", "--scale", "test", *args], tmp_path / "w", capsys).startswith(says)


@pytest.mark.parametrize(("args", "says"), [
    (["--set", "seeds=true"], "error: --set seeds=true: key 'seeds': expected a number, got a boolean"),
    (["--set", "data.seed=-1"], "error: --set data.seed=-1: key 'data.generated.seed': expected 0 to 4294967295"),
    (["--set", "data.kind=5"], "error: --set data.kind=5: key 'data': expected kind generated or files"),
    (["--scale", "paper"], "error: --scale: scale 'paper' is not defined by "),
])
def test_errors_name_the_option_the_value_came_from_not_the_spec(tmp_path, capsys, args, says):
    """Before, each blamed the built-in quick.yaml, and `data.kind` printed a line per key of both kinds."""
    line = refused(["study", "validate", "quick", "--scale", "test", *args], tmp_path / "w", capsys)
    assert line.startswith(says), line


def test_a_stage_config_error_from_set_names_the_option(tmp_path, capsys):
    path = tmp_path / "corpus.yaml"
    path.write_text("seed: 1\nlanguages: [{name: en, sources: [{path: en.txt}]}]\n", encoding="utf-8")
    line = refused(["corpus", "build", str(path), "--set", "seed=-1"], tmp_path / "w", capsys)
    assert line.startswith("error: --set seed=-1: key 'seed': expected 0 to 4294967295")
    path.write_text("seed: -2\nlanguages: [{name: en, sources: [{path: en.txt}]}]\n", encoding="utf-8")
    line = refused(["corpus", "build", str(path), "--set", "seed=-1"], tmp_path / "w", capsys)
    assert line.startswith(f"error: {path}: key 'seed'")  # wrong without the --set too: the file is named


def test_several_problems_of_one_spec_are_one_line(tmp_path, capsys):
    line = refused(["study", "validate", "quick", "--scale", "test", "--set", "data.kind=files"], tmp_path / "w",
                   capsys)
    assert line.startswith("error: --set data.kind=files: key 'data.files.languages': Field required; key ")
    assert line.endswith("(and 1 more)")


@pytest.mark.parametrize(("override", "key", "says"), [
    ("sentences.train=-400", "sentences.train", "greater than or equal to 1"),
    ("lexicon.NOUN=0", "lexicon.NOUN", "greater than or equal to 1"),
    ("lexicon.NOUN=-5", "lexicon.NOUN", "greater than or equal to 1"),
    ("languages=[{name: a, alphabet: abc}]", "languages.0.alphabet", "expected consonants, one space, vowels"),
    ("languages=[{name: a, alphabet: ''}]", "languages.0.alphabet", "expected consonants, one space, vowels"),
])
def test_generator_settings_are_bounded(tmp_path, capsys, override, key, says):
    line = refused(["generate", "--set", override], tmp_path / "w", capsys)
    assert line.startswith(f"error: --set {override}: key '{key}'") and says in line  # not "preset quick"
    line = refused(["study", "validate", "quick", "--scale", "test", "--set", f"data.set.{override}"],
                   tmp_path / "w", capsys)
    assert f"key '{key}'" in line and says in line


def test_an_alphabet_too_small_for_the_lexicon_is_one_line(tmp_path, capsys):
    """Valid in shape, too few syllables for five distinct determiners: it looped forever drawing new forms."""
    line = refused(["generate", "--set", "languages=[{name: a, alphabet: 'p a'}]"], tmp_path / "w", capsys)
    assert "key 'languages'" in line and "language 'a': alphabet 'p a' spells 1 one-syllable words" in line
    assert not list((tmp_path / "w" / "generate").glob(".partial-*"))


# -- workdirs and files ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["results"], ["study", "report", "quick", "--scale", "test"],
                                     ["study", "compare", "a", "b"], ["analyze", "layers"]])
def test_a_reading_command_never_creates_a_workdir(tmp_path, capsys, command):
    line = refused(command, tmp_path / "mistyped", capsys)
    assert line == f"error: {tmp_path / 'mistyped' / 'results.db'}: no such file; expected the results database " \
                   "of a workdir where studies or stages have run (is -w right?)"


def test_a_results_db_of_another_schema_says_so(tmp_path, capsys):
    work = tmp_path / "w"
    work.mkdir()
    with sqlite3.connect(work / "results.db") as con:
        con.execute("CREATE TABLE results (name TEXT, score REAL)")
    before = (work / "results.db").read_bytes()
    line = refused(["results"], work, capsys)
    assert line.startswith(f"error: {work / 'results.db'}: not an mbertlab results database (its table `results` "
                           "lacks the columns study, model, task,")
    assert (work / "results.db").read_bytes() == before


def _fifo(tmp_path: Path) -> Path:
    os.mkfifo(tmp_path / "pipe")
    return tmp_path / "pipe"


@pytest.mark.parametrize(("make", "says"), [
    (lambda tmp_path: Path("/dev/null"), "found a character device; expected a regular file"),
    (_fifo, "found a FIFO (named pipe); expected a regular file"),
])
@pytest.mark.parametrize("as_what", ["config", "source", "spec"])
def test_a_device_or_fifo_is_named_as_such(tmp_path, capsys, make, says, as_what):
    path = make(tmp_path)
    if as_what == "source":
        config_path = tmp_path / "corpus.yaml"
        config_path.write_text(yaml.safe_dump({"languages": [{"name": "en", "sources": [{"path": str(path)}]}]}))
        argv = ["corpus", "build", str(config_path)]
    else:
        argv = ["corpus", "build", str(path)] if as_what == "config" else ["study", "validate", str(path)]
    assert refused(argv, tmp_path / "w", capsys) == f"error: {path}: {says}"


@pytest.mark.parametrize("content", ["", "\n  \n\n"])
def test_an_empty_text_source_is_refused(tmp_path, monkeypatch, capsys, content):
    """As the JSON lines, Parquet and dump readers refuse a file without a sentence; before, a 0-sentence
    language was built."""
    code, out, err = build(tmp_path, monkeypatch, capsys, "text", "empty.txt", content.encode())
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1, err
    assert err.strip() == f"error: {tmp_path / 'in' / 'empty.txt'}: found no sentence (an empty file, or blank " \
                          "lines only); expected one sentence per line"
    assert [p.name for p in (tmp_path / "work" / "corpus").iterdir()] == [".locks"]


def test_stats_json_is_json_when_a_split_is_empty(tmp_path, monkeypatch, capsys):
    """Three sentences leave the dev split empty: its WikiSize (log2 of 0 MB) is null, not -Infinity."""
    code, out, err = build(tmp_path, monkeypatch, capsys, "text", "three.txt",
                           b"A cat sat here.\nA dog ran there.\nA bird flew off.\n")
    assert code == 0, err
    artifact = Path(out.strip().splitlines()[-1])
    stats = json.loads((artifact / "stats.json").read_text(), parse_constant=_not_json)
    assert stats["xx"]["dev"]["sentences"] == 0 and stats["xx"]["dev"]["wikisize"] is None
    assert stats["xx"]["train"]["wikisize"] == pytest.approx(math.log2(stats["xx"]["train"]["bytes"] / 2**20))
    assert run(["-w", str(tmp_path / "work"), "corpus", "stats", str(artifact)]) == 0


def _not_json(constant: str):
    raise AssertionError(f"{constant} is not JSON")
