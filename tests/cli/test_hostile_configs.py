"""Hostile or mistaken configs through the command line: each is refused with one line naming the file and key,
exit 1, no traceback, before any artifact folder is made, and nothing is written outside the workdir."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from mbertlab.cli.main import run
from mbertlab.store.results import ResultsDB


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def refused(argv: list[str], workdir: Path, capsys) -> str:
    """Run the CLI expecting a one-line refusal; the workdir gets no artifact folder, partial or whole."""
    before = files_under(workdir.parent)
    assert run(["--workdir", str(workdir), *argv]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ") and "Traceback" not in err[0]
    created = files_under(workdir.parent) - before
    assert not created, sorted(map(str, created))  # no stage folder, no .partial-*, nothing outside the workdir
    return err[0]


@pytest.fixture
def text(tmp_path) -> Path:
    path = tmp_path / "en.txt"
    path.write_text("".join(f"sentence number {i} here\n" for i in range(40)), encoding="utf-8")
    return path


def corpus_yaml(tmp_path: Path, text: Path, **keys) -> Path:
    data = {"languages": [{"name": "en", "sources": [{"path": str(text)}]}], **keys}
    path = tmp_path / "corpus.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_invalid_utf8_names_file_line_and_byte_offset(tmp_path, capsys):
    path = tmp_path / "corpus.yaml"
    raw = b"dedup: true\nlanguages:\n  - name: en\xe9\n"
    path.write_bytes(raw)
    offset = raw.index(b"\xe9")
    line = refused(["corpus", "build", str(path)], tmp_path / "w", capsys)
    assert f"{path}:3:" in line and f"offset {offset}" in line and "UTF-8" in line


def test_duplicated_key_names_key_and_lines(tmp_path, text, capsys):
    path = tmp_path / "corpus.yaml"
    path.write_text(f"seed: 1\nlanguages: [{{name: en, sources: [{{path: {text}}}]}}]\nseed: 2\n", encoding="utf-8")
    line = refused(["corpus", "build", str(path)], tmp_path / "w", capsys)
    assert f"{path}:3:" in line and "'seed' appears twice (lines 1 and 3)" in line


def test_duplicated_key_in_a_nested_mapping_of_a_study_spec(tmp_path, capsys):
    path = tmp_path / "spec.yaml"
    path.write_text("include: quick\nname: dup\npretrain:\n  steps: 5\n  lr: 0.1\n  steps: 7\n", encoding="utf-8")
    line = refused(["study", "run", str(path), "--scale", "test"], tmp_path / "w", capsys)
    assert f"{path}:6:" in line and "'steps' appears twice (lines 4 and 6)" in line


@pytest.mark.parametrize(("keys", "key", "says"), [
    ({"seed": -1}, "seed", "expected 0 to 4294967295"),
    ({"seed": 2**32}, "seed", "unsigned 32-bit"),
    ({"sampling": "smoothed", "alpha": float("inf")}, "alpha", "finite"),
    ({"sampling": "smoothed", "alpha": float("nan")}, "alpha", "finite"),
    ({"sampling": "smoothed", "alpha": 1000.0}, "alpha", "expected 0.0 to 20.0"),
    ({"dedup": 1.5}, "dedup", "boolean"),
    ({"dev_fraction": True}, "dev_fraction", "got a boolean"),
    ({"total": True, "sampling": "smoothed"}, "total", "got a boolean"),
])
def test_corpus_values_refused_naming_the_key(tmp_path, text, capsys, keys, key, says):
    path = corpus_yaml(tmp_path, text, **keys)
    line = refused(["corpus", "build", str(path)], tmp_path / "w", capsys)
    assert f"{path}: key '{key}'" in line and says in line


@pytest.mark.parametrize(("language", "key", "says"), [
    ({"max_sentences": -3}, "languages.0.max_sentences", "greater than 0"),
    ({"max_sentences": 0}, "languages.0.max_sentences", "greater than 0"),
    ({"max_characters": True}, "languages.0.max_characters", "got a boolean"),
    ({"name": "../../../evil"}, "languages.0.name", "not a safe name"),
    ({"name": "/tmp/evil"}, "languages.0.name", "not a safe name"),
    ({"name": ".hidden"}, "languages.0.name", "not a safe name"),
    ({"name": "a..b"}, "languages.0.name", "not a safe name"),
    ({"name": "x" * 65}, "languages.0.name", "not a safe name"),
])
def test_corpus_language_values_refused(tmp_path, text, capsys, language, key, says):
    path = corpus_yaml(tmp_path, text)
    data = yaml.safe_load(path.read_text())
    data["languages"][0].update(language)
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    line = refused(["corpus", "build", str(path)], tmp_path / "w", capsys)
    assert f"{path}: key '{key}'" in line and says in line


def test_same_language_twice_in_a_corpus(tmp_path, text, capsys):
    path = corpus_yaml(tmp_path, text)
    data = yaml.safe_load(path.read_text())
    data["languages"].append({"name": "en", "sources": [{"path": str(text)}], "derive": "fake-script"})
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    line = refused(["corpus", "build", str(path)], tmp_path / "w", capsys)
    assert f"{path}: key 'languages'" in line and "en listed more than once" in line


@pytest.mark.parametrize(("override", "key", "says"), [
    ("grad_clip=-1", "grad_clip", "greater than 0"),
    ("grad_clip=0", "grad_clip", "greater than 0"),
    ("steps=true", "steps", "got a boolean"),
    ("steps=99999999999999999999999", "steps", "beyond a 64-bit integer"),
    ("steps=1000000000000", "steps", "a billion steps"),
    ("seed=-1", "seed", "expected 0 to 4294967295"),
    ("alpha=.inf", "alpha", "finite"),
    ("lr=.nan", "lr", "finite"),
    ("model.layers=true", "model.layers", "got a boolean"),
    ("permute={../x: 0.5}", "permute.../x", "not a safe name"),
    ("betas=[0.9, true]", "betas", "got a boolean"),
])
def test_pretrain_values_refused_before_the_shards_are_read(tmp_path, capsys, override, key, says):
    line = refused(["pretrain", "--shards", str(tmp_path / "no-shards"), "--set", override], tmp_path / "w", capsys)
    assert f"key '{key}'" in line and says in line


@pytest.mark.parametrize(("keys", "key", "says"), [
    ({"evaluate": [{"lang": "../de", "path": "y.conllu"}]}, "evaluate.0.lang", "not a safe name"),
    ({"warmup": 2.0}, "warmup", "less than or equal to 1"),
    ({"max_train_sentences": -1}, "max_train_sentences", "greater than 0"),
    ({"steps": True}, "steps", "got a boolean"),
    ({"lr": [1e-4, float("inf")]}, "lr.1", "finite"),
    ({"batch_size": [16, True]}, "batch_size", "got a boolean"),
])
def test_transfer_values_refused(tmp_path, capsys, keys, key, says):
    path = tmp_path / "transfer.yaml"
    data = {"task": "upos", "train": {"lang": "en", "path": "x.conllu"}, "evaluate": [{"lang": "de", "path": "y"}]}
    path.write_text(yaml.safe_dump({**data, **keys}), encoding="utf-8")
    line = refused(["transfer", str(path), "--encoder", str(tmp_path / "enc")], tmp_path / "w", capsys)
    assert f"{path}: key '{key}'" in line and says in line


def test_tokenizer_language_the_corpus_lacks(tmp_path, text, capsys):
    workdir = tmp_path / "w"
    assert run(["--workdir", str(workdir), "corpus", "build", str(corpus_yaml(tmp_path, text))]) == 0
    corpus = capsys.readouterr().out.strip().splitlines()[-1]
    tok = tmp_path / "tok.yaml"
    tok.write_text(yaml.safe_dump({"kind": "word", "vocab_size": 50, "languages": ["en", "de"]}), encoding="utf-8")
    line = refused(["tokenizer", "train", str(tok), "--corpus", corpus], workdir, capsys)
    assert "key 'languages'" in line and "no training text for de" in line and "(the corpus has en)" in line
    assert not (workdir / "tokenizer").exists()
    tok.write_text(yaml.safe_dump({"kind": "word", "vocab_size": 50, "languages": ["en", "en"]}), encoding="utf-8")
    line = refused(["tokenizer", "train", str(tok), "--corpus", corpus], workdir, capsys)
    assert f"{tok}: key 'languages'" in line and "en listed more than once" in line
    # no languages listed: every language of the corpus (it crashed on an empty list before)
    tok.write_text(yaml.safe_dump({"kind": "word", "vocab_size": 50}), encoding="utf-8")
    assert run(["--workdir", str(workdir), "tokenizer", "train", str(tok), "--corpus", corpus]) == 0
    tokenizer = capsys.readouterr().out.strip().splitlines()[-1]
    encode = ["tokenizer", "encode", "--tokenizer", tokenizer, "--corpus", corpus, "--lang"]
    line = refused([*encode, "de"], workdir, capsys)
    assert line == "error: tokenizer encode: --lang de: not in the corpus (it has en)"
    line = refused([*encode, "../x"], workdir, capsys)
    assert "key 'languages.0'" in line and "not a safe name" in line
    langid = ["langid", "--encoder", tokenizer, "--text", f"en={text}", "--text"]
    line = refused([*langid, f"../x={text}"], workdir, capsys)
    assert "langid: key 'files.1.lang'" in line and "not a safe name" in line
    line = refused([*langid, f"de={text}", "--seed", "-1"], workdir, capsys)
    assert "langid: key 'seed'" in line


def test_workdir_that_is_a_file(tmp_path, text, capsys):
    workdir = tmp_path / "file"
    workdir.write_text("not a folder\n")
    before = files_under(tmp_path)
    assert run(["--workdir", str(workdir), "corpus", "build", str(corpus_yaml(tmp_path, text))]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: --workdir {workdir}: not a directory"]
    assert files_under(tmp_path) - before == {tmp_path / "corpus.yaml"}


def test_study_name_must_stay_inside_the_workdir(tmp_path, capsys):
    spec = tmp_path / "spec.yaml"
    spec.write_text('include: quick\nname: "../../x<script>alert(1)</script>"\n', encoding="utf-8")
    for command in (["study", "run", str(spec), "--scale", "test"], ["study", "report", str(spec), "--scale", "test"]):
        line = refused(command, tmp_path / "w", capsys)
        assert f"{spec}: key 'name'" in line and "not a safe name" in line


def test_markdown_report_escapes_user_text_as_html_does(tmp_path, capsys):
    """The description and name come out as text in report.md, as in report.html: no raw tag."""
    import html

    hostile = "see <img src=x onerror=alert(1)> & <script>alert(2)</script>"
    spec = tmp_path / "spec.yaml"
    description = f"{hostile}; p <0.001"  # a '<' before a digit opens no tag: it stays readable
    spec.write_text(yaml.safe_dump({"include": "quick", "name": "mine", "description": description}),
                    encoding="utf-8")
    ResultsDB(tmp_path / "w" / "results.db")  # `study report` reads a workdir's results; it makes none
    assert run(["--workdir", str(tmp_path / "w"), "study", "report", str(spec), "--scale", "test"]) == 0
    out = tmp_path / "w" / "reports" / "mine-test"
    markdown = (out / "report.md").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    assert hostile.replace("<", "&lt;") + "; p <0.001" in markdown  # every '<' of `hostile` opens a tag
    assert html.escape(description) in page
    for raw in ("<img src=x", "<script>"):
        assert raw not in markdown and raw not in page


def test_a_plot_named_from_spec_words_stays_in_the_report_folder(tmp_path):
    """Plot names can carry a spec's words (a language set's name): the PNG is written inside the folder."""
    from mbertlab.report.render import Plot, Report, render_markdown

    out = tmp_path / "a" / "b" / "report"
    plot = Plot("<b>title</b>", b"\x89PNG", "../../escape me")
    markdown = render_markdown(Report("t", "d", [], plots=[plot]), out).read_text(encoding="utf-8")
    [png] = [p for p in tmp_path.rglob("*.png")]
    assert png.parent == out and "![&lt;b>title&lt;/b>](" + png.name + ")" in markdown
