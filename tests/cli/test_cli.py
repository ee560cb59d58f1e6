"""The command line: help everywhere, no heavy imports at start, one-line errors, --debug tracebacks."""
from __future__ import annotations

import subprocess
import sys

import typer

from mbertlab.cli.main import app, run


def all_commands() -> list[list[str]]:
    root = typer.main.get_command(app)
    out = []

    def walk(cmd, path: list[str]) -> None:
        out.append(path)
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, path + [name])

    walk(root, [])
    return out


def test_every_command_has_help(capsys):
    commands = all_commands()
    assert ["study", "run"] in commands and ["generate"] in commands and ["data", "check"] in commands
    for path in commands:
        assert run(path + ["--help"]) == 0, path
        assert "Usage" in capsys.readouterr().out


def test_version(capsys):
    assert run(["--version"]) == 0
    assert capsys.readouterr().out.startswith("mbertlab ")


def test_import_and_help_do_not_load_torch():
    code = ("import sys, mbertlab.cli.main as m\n"
            "try:\n    m.run(['--help'])\nexcept SystemExit:\n    pass\n"
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "False False"


def test_user_error_is_one_line_and_debug_shows_traceback(tmp_path):
    bad = tmp_path / "bad.conllu"
    bad.write_text("1\tx\t_\tNOUN\t_\t_\t7\troot\t_\t_\n\n")
    cmd = [sys.executable, "-m", "mbertlab", "data", "check", str(bad)]
    plain = subprocess.run(cmd, capture_output=True, text=True)
    assert plain.returncode == 1
    lines = plain.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{bad}:1" in lines[0] and "HEAD" in lines[0]
    debug = subprocess.run(cmd[:3] + ["--debug"] + cmd[3:], capture_output=True, text=True)
    assert debug.returncode != 0 and "Traceback" in debug.stderr


def test_unknown_study_suggests(capsys):
    assert run(["study", "validate", "quik"]) == 1
    assert "did you mean quick" in capsys.readouterr().err


def test_usage_errors_are_reported_without_traceback():
    out = subprocess.run([sys.executable, "-m", "mbertlab", "no-such-command"], capture_output=True, text=True)
    assert out.returncode == 2 and "No such command" in out.stderr and "Traceback" not in out.stderr
    out = subprocess.run([sys.executable, "-m", "mbertlab", "data", "check"], capture_output=True, text=True)
    assert out.returncode == 2 and "Missing argument" in out.stderr and "Traceback" not in out.stderr


def test_corpus_transform_dispatches_through_the_manipulation_registry(tmp_path, capsys):
    from mbertlab.corpus.manipulations import MANIPULATIONS

    # A subset: another test on this worker may have registered a user's word map (tests/studies/toyextension.py).
    assert {"fake-script", "permute", "unigram", "window"} <= set(MANIPULATIONS.names())
    src, dst = tmp_path / "in.txt", tmp_path / "out.txt"
    src.write_text("a b c d e\n", encoding="utf-8")
    assert run(["corpus", "transform", "window", str(src), str(dst), "--w", "2"]) == 0
    assert dst.read_text(encoding="utf-8").splitlines() == ["a b", "c d", "e"]
    assert run(["corpus", "transform", "wndow", str(src), str(dst)]) == 1
    assert "did you mean 'window'" in capsys.readouterr().err
