"""The README opens with the two commands, and in a fresh clone they set everything up from nothing.

CI itself runs the test command from a fresh clone; here the make recipes are checked in a fresh
clone with a fresh environment path (a dry run: creating a venv and installing torch takes minutes).
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("#")[0].strip() for line in block.splitlines() if line.strip()]


def test_readme_starts_with_the_two_commands():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    assert text.index("```sh") < 200
    assert readme_commands()[:2] == ["make demo", "make test"]


def test_make_targets_set_up_from_nothing_in_a_fresh_clone(tmp_path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env_dir = tmp_path / "fresh-venv"
    for target, runs in (("demo", "mbertlab study run quick"), ("test", "-m pytest")):
        plan = subprocess.run(["make", "-n", target, f"VENV={env_dir}"], cwd=clone, capture_output=True,
                              text=True, check=True).stdout
        assert f"-m venv {env_dir}" in plan
        assert "pip install --quiet torch==2.13.0" in plan
        assert "pip install --quiet -e '.[test]'" in plan
        assert runs in plan
    assert (clone / ".ci" / "run").read_text().strip().endswith("make test")
