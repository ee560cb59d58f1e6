"""The transfer commands a researcher types: finetune then evaluate on another file, score, the language
matrix, language ID. Each printed number is checked against results.db or an independent re-scoring."""
from __future__ import annotations

import json

import pytest
import yaml

from mbertlab.cli.main import run
from mbertlab.store.results import ResultsDB


def ud(tiny, lang: str, split: str) -> dict:
    return {"lang": lang, "split": split, "path": str(tiny.data / lang / "ud" / f"{split}.conllu")}


def printed_json(text: str) -> dict:
    """The JSON object printed before the last line (the path)."""
    return json.loads(text[:text.rindex("}") + 1])


@pytest.mark.numbers
def test_finetune_then_evaluate_reproduces_the_row(tmp_path, tiny, capsys):
    w = ["--workdir", str(tmp_path / "w")]
    config = tmp_path / "upos.yaml"
    config.write_text(yaml.safe_dump({"task": "upos", "lr": 1e-3, "epochs": 1, "max_train_sentences": 300,
                                      "train": ud(tiny, "src", "train"), "evaluate": [ud(tiny, "src", "test")],
                                      "precision": "fp32"}))  # the row is compared: the same on every CPU
    assert run(w + ["finetune", str(config), "--encoder", str(tiny.encoder)]) == 0
    out = capsys.readouterr().out
    run_dir = out.strip().splitlines()[-1]
    (row,) = ResultsDB(tmp_path / "w" / "results.db").query(metric="accuracy", test_lang="src")
    assert printed_json(out)["src.test"]["accuracy"] == row.value and row.artifact == run_dir

    # the saved model on the same file gives the same accuracy; on another language, a new prediction file
    gold = tiny.data / "src" / "ud" / "test.conllu"
    assert run(["evaluate", run_dir, str(gold), "--lang", "src", "--out", str(tmp_path / "eval")]) == 0
    out = capsys.readouterr().out
    assert printed_json(out)["accuracy"] == pytest.approx(row.value)
    pred = out.strip().splitlines()[-1]
    assert run(["score", "upos", str(gold), pred]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(row.value)
    fake = tiny.data / "fake" / "ud" / "test.conllu"
    assert run(["evaluate", run_dir, str(fake), "--lang", "fake", "--out", str(tmp_path / "eval")]) == 0
    out = capsys.readouterr().out
    assert out.strip().endswith("upos.fake.eval.conllu")
    assert run(["score", "upos", str(fake), out.strip().splitlines()[-1]]) == 0
    assert json.loads(capsys.readouterr().out)["accuracy"] == pytest.approx(printed_json(out)["accuracy"])


def test_score_rejects_a_file_of_other_sentences(tmp_path, tiny, capsys):
    gold = tiny.data / "src" / "ud" / "test.conllu"
    assert run(["score", "upos", str(gold), str(tiny.data / "fake" / "ud" / "test.conllu")]) != 0
    assert "expected the words of" in capsys.readouterr().err


def test_matrix_trains_one_model_per_source_and_prints_the_table(tmp_path, tiny, capsys):
    config = tmp_path / "matrix.yaml"
    config.write_text(yaml.safe_dump({
        "task": "upos", "lr": 1e-3, "epochs": 1, "max_train_sentences": 200, "max_eval_sentences": 50,
        "train": [ud(tiny, "src", "train"), ud(tiny, "fake", "train")],
        "evaluate": [ud(tiny, "src", "test"), ud(tiny, "fake", "test")]}))
    assert run(["--workdir", str(tmp_path / "w"), "transfer", str(config), "--encoder", str(tiny.encoder),
                "--matrix"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    results = ResultsDB(tmp_path / "w" / "results.db")
    for source in ("src", "fake"):
        (line,) = [l for l in lines if l.split()[0] == source and " -> " not in l]
        cells = [float(x) for x in line.split()[1:]]
        for target, cell in zip(("fake.test", "src.test"), cells):  # columns sorted by name
            (row,) = results.query(metric="accuracy", train_lang=source, test_lang=target.split(".")[0])
            assert cell == pytest.approx(100 * row.value, abs=0.05)
    assert sum(" -> " in l for l in lines) == 2


def test_langid_prints_accuracy_per_layer(tmp_path, tiny, capsys):
    text = [f"--text={l}={tiny.data / l / 'text' / 'train.txt'}" for l in ("src", "fake")]
    assert run(["--workdir", str(tmp_path / "w"), "langid", "--encoder", str(tiny.encoder), "--sentences", "100",
                *text]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    rows = ResultsDB(tmp_path / "w" / "results.db").query(task="langid")
    assert len(lines) == len(rows) == 3  # embeddings + 2 layers
    by_layer = {r.extra["layer"]: r.value for r in rows}
    for line in lines:
        layer, accuracy = int(line.split()[1]), float(line.split()[3])
        assert accuracy == pytest.approx(100 * by_layer[layer], abs=0.05)
