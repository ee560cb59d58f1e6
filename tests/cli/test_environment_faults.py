"""Environment faults through the CLI: a name over 255 bytes, a read-only workdir or one that is a file, a damaged
results.db, a full disk, a truncated newest checkpoint, an empty language for a tokenizer. Each ends in one line
(exit 1, no traceback) with nothing half-written left; a truncated checkpoint is skipped with one warning line."""
from __future__ import annotations

import builtins
import errno
import io
import os
import re
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from mbertlab.cli.main import run
from mbertlab.pretrain.checkpoint import list_checkpoints
from mbertlab.store.results import ResultRow, ResultsDB

LONG = "n" * 300  # bytes in one path component; file systems allow 255
PRETRAIN = ["--set", "model.layers=2", "--set", "model.hidden=32", "--set", "model.heads=2", "--set", "batch_size=8",
            "--set", "seq_len=16", "--set", "steps=30", "--set", "checkpoint_every=10", "--set", "warmup=5",
            "--set", "eval_batches=1", "--set", "precision=fp32", "--set", "keep_checkpoints=2"]


def error_line(capsys) -> str:
    """The one line the CLI printed on stderr, checked to be alone and free of a traceback."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    return lines[0]


def files_under(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def partials(workdir: Path) -> list[Path]:
    return list(workdir.rglob(".partial-*")) + list(workdir.rglob(".tmp-*"))


def only_artifact(work: Path, stage: str) -> Path:
    [found] = [p for p in (work / stage).iterdir() if not p.name.startswith(".")]
    return found


@pytest.fixture(scope="module")
def base(tmp_path_factory, shared_data) -> dict[str, Path]:
    """A corpus (en, de: real text), a word tokenizer and en shards, built through the CLI."""
    root = tmp_path_factory.mktemp("base")
    work = root / "w"
    config = root / "corpus.yaml"
    config.write_text(yaml.safe_dump({"languages": [
        {"name": l, "sources": [{"path": str(shared_data / "raw_text" / f"{l}.txt")}], "max_sentences": 400}
        for l in ("en", "de")], "dev_fraction": 0.1}))
    assert run(["-w", str(work), "corpus", "build", str(config)]) == 0
    corpus = only_artifact(work, "corpus")
    assert run(["-w", str(work), "tokenizer", "train", str(_tokenizer_config(root, "word")), "--corpus",
                str(corpus)]) == 0
    assert run(["-w", str(work), "tokenizer", "encode", "--tokenizer", str(only_artifact(work, "tokenizer")),
                "--corpus", str(corpus), "--lang", "en"]) == 0
    return {"root": root, "corpus_config": config, "corpus": corpus, "shards": only_artifact(work, "shards")}


def _tokenizer_config(root: Path, kind: str) -> Path:
    path = root / f"tok-{kind}.yaml"
    path.write_text(yaml.safe_dump({"kind": kind, "vocab_size": 300, "languages": ["en", "de"]}))
    return path


# -- names over 255 bytes ---------------------------------------------------------------------------------------

def test_a_file_name_over_255_bytes_is_one_line(tmp_path, base, capsys):
    ResultsDB(tmp_path / "w" / "results.db")
    before = files_under(tmp_path)
    assert run(["-w", str(tmp_path / LONG), "corpus", "build", str(base["corpus_config"])]) == 1
    line = error_line(capsys)
    assert str(tmp_path / LONG) in line and "file name too long" in line and "300 bytes" in line
    assert run(["data", "check", str(tmp_path / f"{LONG}.conllu")]) == 1
    assert "file name too long" in error_line(capsys)
    assert run(["-w", str(tmp_path / "w"), "results", "--csv", str(tmp_path / f"{LONG}.csv")]) == 1
    assert f"{LONG}.csv: file name too long" in error_line(capsys)
    assert files_under(tmp_path) == before


# -- a workdir that cannot be written, or is a file ---------------------------------------------------------------

def read_only_cli(folder: Path):
    """A function running the CLI in a subprocess that cannot write into `folder`: its mode without write bits,
    or, for root (who ignores modes), a read-only bind mount in a private mount namespace."""
    cli = [sys.executable, "-m", "mbertlab"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return lambda args: subprocess.run(cli + args, capture_output=True, text=True, env=env)
    probe = subprocess.run(["unshare", "-m", "sh", "-c", f"mount --bind -o ro '{folder}' '{folder}'"],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"running as root without mount namespaces: cannot make a folder read-only ({probe.stderr})")
    script = 'mount --bind -o ro "$0" "$0" && exec "$@"'
    return lambda args: subprocess.run(["unshare", "-m", "sh", "-c", script, str(folder), *cli, *args],
                                       capture_output=True, text=True, env=env)


def test_a_read_only_workdir_is_one_line(tmp_path, base):
    work = tmp_path / "ro"
    ResultsDB(work / "results.db").add([ResultRow(metric="accuracy", value=0.5)])
    before = files_under(work)
    cli = read_only_cli(work)
    for args, names in ((["corpus", "build", str(base["corpus_config"])], str(work / "corpus")),
                        (["results"], str(work / "results.db"))):
        out = cli(["-w", str(work), *args])
        lines = out.stderr.strip().splitlines()
        assert out.returncode == 1 and len(lines) == 1 and "Traceback" not in out.stderr, out.stderr
        assert lines[0].startswith(f"error: {names}: ") and ("read-only" in lines[0] or "permission" in lines[0]
                                                               or "cannot open or write" in lines[0]), lines[0]
    work.chmod(0o755)
    assert files_under(work) == before


def test_a_workdir_that_is_a_file_is_one_line(tmp_path, base, capsys):
    work = tmp_path / "work"
    work.write_text("not a folder\n")
    for args in (["corpus", "build", str(base["corpus_config"])], ["results"]):
        assert run(["-w", str(work), *args]) == 1
        assert error_line(capsys) == f"error: --workdir {work}: not a directory"
    assert files_under(tmp_path) == {"work": b"not a folder\n"}


def test_an_output_in_a_missing_folder_is_one_line(tmp_path, capsys):
    ResultsDB(tmp_path / "w" / "results.db")
    before = files_under(tmp_path)
    assert run(["-w", str(tmp_path / "w"), "results", "--csv", str(tmp_path / "no" / "such" / "out.csv")]) == 1
    assert error_line(capsys) == f"error: {tmp_path / 'no' / 'such' / 'out.csv'}: no such file or folder"
    assert files_under(tmp_path) == before


# -- a damaged results.db ----------------------------------------------------------------------------------------

def test_a_damaged_results_db_is_one_line_naming_it(tmp_path, capsys):
    db = tmp_path / "results.db"
    db.write_bytes(b"this was never a database\n" * 100)
    assert run(["-w", str(tmp_path), "results"]) == 1
    line = error_line(capsys)
    assert f"{db}: a damaged results database (file is not a database); move it aside" in line
    assert db.read_bytes() == b"this was never a database\n" * 100 and sorted(os.listdir(tmp_path)) == ["results.db"]


def test_a_results_db_with_a_damaged_page_is_one_line(tmp_path, capsys):
    db = tmp_path / "results.db"
    ResultsDB(db).add([ResultRow(metric="accuracy", value=i / 1000, study="x" * 200) for i in range(1000)])
    with sqlite3.connect(db) as con:
        con.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        page = con.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(db.read_bytes())
    data[page:3 * page] = b"\xff" * (2 * page)  # the table's root and first leaf: sqlite must notice
    db.write_bytes(bytes(data))
    assert run(["-w", str(tmp_path), "results"]) == 1
    line = error_line(capsys)
    assert f"{db}: a damaged results database (database disk image is malformed)" in line


# -- a full disk -------------------------------------------------------------------------------------------------

class SmallDisk:
    """Python's writers under `root` share `room` bytes; the write that passes it stores what fits and raises
    ENOSPC without a file name, as write(2) on a full disk does."""

    def __init__(self, root: Path, room: int):
        self.root, self.room, self.real = str(root), room, builtins.open

    def open(self, file, mode="r", *args, **kwargs):
        f = self.real(file, mode, *args, **kwargs)
        under = isinstance(file, (str, os.PathLike)) and os.path.abspath(os.fspath(file)).startswith(self.root)
        return _Metered(f, self) if under and any(c in mode for c in "wax+") else f


class _Metered:
    def __init__(self, f, disk: SmallDisk):
        self._f, self._disk = f, disk

    def write(self, data):
        fits = data[: self._disk.room]
        self._f.write(fits)
        self._disk.room -= len(fits)
        if len(fits) < len(data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return len(data)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()

    def __getattr__(self, name):
        return getattr(self._f, name)


def test_a_full_disk_is_one_line_and_leaves_no_partial_artifact(tmp_path, base, capsys, monkeypatch):
    work = tmp_path / "w"
    disk = SmallDisk(work, room=20_000)  # the corpus needs about 60 kB
    monkeypatch.setattr(io, "open", disk.open)
    monkeypatch.setattr(builtins, "open", disk.open)
    assert run(["-w", str(work), "corpus", "build", str(base["corpus_config"])]) == 1
    line = error_line(capsys)
    assert line.startswith(f"error: {work / 'corpus' / base['corpus'].name}: no space left on device; free some")
    assert disk.room == 0 and not partials(work)
    assert [p.name for p in (work / "corpus").iterdir()] == [".locks"]
    monkeypatch.undo()
    assert run(["-w", str(work), "corpus", "build", str(base["corpus_config"])]) == 0
    assert files_under(work / "corpus" / base["corpus"].name)["en/train.txt"] == \
        (base["corpus"] / "en" / "train.txt").read_bytes()


def weights(model_dir: Path) -> dict:
    from safetensors.torch import load_file

    return load_file(str(model_dir / "model.safetensors"))


def assert_same_weights(a: Path, b: Path) -> None:
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys() and all((wa[k] == wb[k]).all() for k in wa)


@pytest.fixture(scope="module")
def straight(base) -> Path:
    """The pretraining run uninterrupted: the weights every interrupted run must end with."""
    work = base["root"] / "straight"
    assert run(["-w", str(work), "pretrain", "--shards", str(base["shards"]), *PRETRAIN]) == 0
    return only_artifact(work, "pretrain")


def test_a_full_disk_during_pretraining_resumes_to_the_same_weights(tmp_path, base, straight, capsys, monkeypatch):
    """The second checkpoint's weights are cut short by a full disk (the message is safetensors' own on a full
    1 MiB tmpfs); the rerun, with space, resumes from the first checkpoint and ends as the straight run."""
    import transformers.modeling_utils as hf
    from safetensors import SafetensorError

    real, saves = hf.safe_save_file, []

    def save_file(tensors, filename, *args, **kwargs):
        saves.append(filename)
        real(tensors, filename, *args, **kwargs)
        if len(saves) == 2:
            os.truncate(filename, os.path.getsize(filename) // 2)
            raise SafetensorError("Error while serializing: I/O error: No space left on device (os error 28)")

    monkeypatch.setattr(hf, "safe_save_file", save_file)
    work = tmp_path / "w"
    assert run(["-w", str(work), "pretrain", "--shards", str(base["shards"]), *PRETRAIN]) == 1
    line = error_line(capsys)
    partial = work / "pretrain" / f".partial-{straight.name}"
    step_20 = partial / "checkpoints" / ".tmp-step-20"
    assert line == f"error: {step_20 / 'model.safetensors'}: no space left on device; free some space and run " \
                   "the command again (finished stages are reused, pretraining resumes from its last intact checkpoint)"
    assert ".tmp-step-20" in saves[1] and [s for s, _ in list_checkpoints(partial)] == [10]
    monkeypatch.undo()
    assert run(["-w", str(work), "pretrain", "--shards", str(base["shards"]), *PRETRAIN]) == 0
    assert capsys.readouterr().err == ""
    assert not partials(work)
    assert_same_weights(work / "pretrain" / straight.name / "model", straight / "model")


def _full_disk_at_step_10(monkeypatch, module, name: str, fault: Exception) -> None:
    """`module.name` (a writer of the checkpoint) raises `fault`, as on a full disk, from the first checkpoint on;
    the disk reads as full to the check that tells a no-space error from another when the writer gives no errno."""
    from mbertlab.store import faults

    def full(*args, **kwargs):
        raise fault
    monkeypatch.setattr(module, name, full)
    monkeypatch.setattr(faults, "_free_bytes", lambda path: 0)


def test_a_full_disk_writing_trainer_state_names_that_file(tmp_path, base, straight, capsys, monkeypatch):
    """torch.save's own words on a 260 kB tmpfs (issue 54): `basic_ios::clear: iostream error`, which has no
    errno; before, a RuntimeError traceback."""
    import torch

    _full_disk_at_step_10(monkeypatch, torch, "save", RuntimeError("basic_ios::clear: iostream error"))
    work = tmp_path / "w"
    assert run(["-w", str(work), "pretrain", "--shards", str(base["shards"]), *PRETRAIN]) == 1
    step_10 = work / "pretrain" / f".partial-{straight.name}" / "checkpoints" / ".tmp-step-10"
    assert error_line(capsys) == f"error: {step_10 / 'trainer_state.pt'}: no space left on device; free some " \
        "space and run the command again (finished stages are reused, pretraining resumes from its last intact " \
        "checkpoint)"


def test_a_full_disk_copying_the_tokenizer_names_the_copy_not_its_source(tmp_path, base, straight, capsys,
                                                                          monkeypatch):
    """A copy that fills the disk: `shutil.copy` names the source (the tokenizer's file, on another disk) as the
    error's filename and the file it was writing as filename2 (issue 54: the line named the source)."""
    work = tmp_path / "w"
    step_10 = work / "pretrain" / f".partial-{straight.name}" / "checkpoints" / ".tmp-step-10"
    source = next(p for p in (base["root"] / "w" / "tokenizer").rglob("*.json") if p.name != "config.json")
    fault = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(source), None, str(step_10 / source.name))
    _full_disk_at_step_10(monkeypatch, shutil, "copy2", fault)
    assert run(["-w", str(work), "pretrain", "--shards", str(base["shards"]), *PRETRAIN]) == 1
    assert error_line(capsys).startswith(f"error: {step_10 / source.name}: no space left on device; free some")


@pytest.mark.slow
@pytest.mark.parametrize("size", ["1400k", "260k"])  # 260k: torch.save's `basic_ios::clear` (issue 54)
def test_a_real_full_disk_during_pretraining_is_one_line_and_resumes(tmp_path, base, straight, size):
    """A real full disk: a 1,400 kB tmpfs in a private mount namespace (root, or a user namespace) holds two
    checkpoints, not the third; the write that fails is torch's or safetensors' own. The run ends in one line;
    the same run with the disk grown to 64 MB resumes and ends as the straight run."""
    disk = tmp_path / "disk"
    disk.mkdir()
    unshare = ["unshare", "-m"] if os.geteuid() == 0 else ["unshare", "-rm"]
    probe = subprocess.run([*unshare, "mount", "-t", "tmpfs", "-o", "size=1m", "none", str(disk)],
                           capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip(f"no mount namespace here, so no small disk to fill ({probe.stderr.strip()})")
    work = disk / "w"
    cli = [sys.executable, "-m", "mbertlab", "-w", str(work), "pretrain", "--shards", str(base["shards"]), *PRETRAIN]
    script = (f'mount -t tmpfs -o size={size} none "$0" && "$@" 2> "$0.1.err"; echo $? > "$0.1.rc"; '
              'mount -o remount,size=64m "$0" && "$@" 2> "$0.2.err"; echo $? > "$0.2.rc"; cp -r "$0/w" "$0.w"')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    subprocess.run([*unshare, "sh", "-c", script, str(disk), *cli], check=True, env=env)
    first, second = (Path(f"{disk}.{i}.err").read_text() for i in (1, 2))
    assert Path(f"{disk}.1.rc").read_text().strip() == "1" and Path(f"{disk}.2.rc").read_text().strip() == "0"
    checkpoints = work / "pretrain" / f".partial-{straight.name}" / "checkpoints"
    assert re.fullmatch(rf"error: {re.escape(str(checkpoints))}/\.tmp-step-\d+/(model\.safetensors|trainer_state\.pt): "
                        "no space left on device; free some space and run the command again \\(finished stages are "
                        "reused, pretraining resumes from its last intact checkpoint\\)\n", first), first
    assert second == "", second
    assert_same_weights(Path(f"{disk}.w") / "pretrain" / straight.name / "model", straight / "model")


# -- a truncated newest checkpoint -------------------------------------------------------------------------------

@pytest.mark.parametrize("cut", ["model.safetensors", "trainer_state.pt"])
def test_a_truncated_newest_checkpoint_is_skipped_with_one_warning(tmp_path, base, straight, capsys, cut):
    """As if killed after step 30's checkpoint, before the model was saved, with that checkpoint's file cut
    short (a disk that lost power before its data reached it): the run resumes from step 20 and ends as the
    straight run, metrics included."""
    work = tmp_path / "w"
    partial = work / "pretrain" / f".partial-{straight.name}"
    shutil.copytree(straight, partial)
    shutil.rmtree(partial / "model")
    (partial / "meta.json").unlink()
    newest = partial / "checkpoints" / "step-30" / cut
    os.truncate(newest, newest.stat().st_size // 2)
    assert [s for s, _ in list_checkpoints(partial)] == [20, 30]
    assert run(["-w", str(work), "pretrain", "--shards", str(base["shards"]), *PRETRAIN]) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"warning: checkpoint {newest.parent} is unreadable ("), err
    assert err[0].endswith("); skipped, trying the one before it")
    final = work / "pretrain" / straight.name
    assert_same_weights(final / "model", straight / "model")
    assert (final / "metrics.jsonl").read_text() == (straight / "metrics.jsonl").read_text()
    assert_same_weights(final / "checkpoints" / "step-30", straight / "checkpoints" / "step-30")  # written anew


# -- an empty language for a tokenizer ----------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["word", "wordpiece", "char", "sentencepiece"])
@pytest.mark.parametrize("text", ["", "\n  \n\t\n"])
def test_every_tokenizer_kind_refuses_an_empty_language(tmp_path, base, capsys, kind, text):
    corpus = tmp_path / "corpus" / base["corpus"].name  # a corpus whose `de` lost its text
    shutil.copytree(base["corpus"], corpus)
    (corpus / "de" / "train.txt").write_text(text, encoding="utf-8")
    work = tmp_path / "w"
    assert run(["-w", str(work), "tokenizer", "train", str(_tokenizer_config(base["root"], kind)),
                "--corpus", str(corpus)]) == 1
    assert error_line(capsys) == (f"error: {corpus / 'de' / 'train.txt'}: found no text for language 'de' (an "
                                  "empty file, or blank lines only); expected one sentence per line to learn the "
                                  "vocabulary from")
    assert not partials(work) and [p.name for p in (work / "tokenizer").iterdir()] == [".locks"]
