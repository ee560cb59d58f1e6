"""Values that look like Rich markup (`[/x]`, `[red]`) in a file, a label or an argument are printed literally:
one error line and exit 1, never a MarkupError traceback, never a tag swallowed from the message."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def mbertlab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}  # wide enough that no table cell is cut
    return subprocess.run([sys.executable, "-m", "mbertlab", *args], capture_output=True, text=True, cwd=cwd,
                          env=env)


def assert_one_line_error(out: subprocess.CompletedProcess, literal: str) -> None:
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr and "MarkupError" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and literal in lines[0], out.stderr


def test_label_with_a_closing_tag_in_a_file(tmp_path):
    (tmp_path / "m.ner").write_text("EU B-[/x]\n\n", encoding="utf-8")
    assert_one_line_error(mbertlab("data", "check", "-f", "ner", "m.ner", cwd=tmp_path), "'B-[/x]'")


def test_study_name_with_a_closing_tag(tmp_path):
    assert_one_line_error(mbertlab("study", "run", "quick[/b]", cwd=tmp_path), "'quick[/b]'")


def test_option_value_with_an_opening_tag_is_not_swallowed(tmp_path):
    out = mbertlab("study", "validate", "quick", "--scale", "te[red]st", cwd=tmp_path)
    assert_one_line_error(out, "got 'te[red]st'")


def test_tables_print_user_values_literally(tmp_path):
    (tmp_path / "x[b]y[red].txt").write_text("a b c\n", encoding="utf-8")
    out = mbertlab("corpus", "stats", "x[b]y[red].txt", cwd=tmp_path)
    assert out.returncode == 0 and "x[b]y[red].txt" in out.stdout, out.stderr
