"""Every task family end to end on the tiny world: parsing, tagging with grid selection, XNLI across
languages, MLDoc, language ID. Scores are checked against independent re-scoring of the written files."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from mbertlab.errors import DataError
from mbertlab.formats.conllu import read_conllu
from mbertlab.store.results import SELECTED_RUN_KEYS, ResultsDB
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.evaluate import score_files
from mbertlab.transfer.run import run_transfer_into

PARSE = {"arc_mlp": 64, "label_mlp": 32, "lr": 1e-3, "epochs": 2}


def ud(lang: str, split: str) -> DataFile:
    return DataFile(lang=lang, split=split, path=f"{lang}/ud/{split}.conllu", format="conllu")


def run(tmp_path: Path, tiny, name: str, **keys) -> tuple[Path, ResultsDB]:
    out = tmp_path / name
    out.mkdir()
    results = ResultsDB(tmp_path / "results.db")
    config = TransferConfig(**{"precision": "fp32", **keys})  # scores compared: the same on every kind of CPU
    run_transfer_into(config, tiny.encoder, out, results, "tiny", tiny.data)
    return out, results


def value(results: ResultsDB, out: Path, metric: str, lang: str, split: str = "test") -> float:
    (row,) = results.query(artifact=str(out), metric=metric, test_lang=lang, split=split)
    return row.value


@pytest.mark.numbers
def test_parser_beats_the_baseline_and_writes_trees(tmp_path, tiny):
    common = {"task": "parse", "train": ud("src", "train"), "evaluate": [ud("src", "test")], **PARSE}
    out, results = run(tmp_path, tiny, "ft", **common)
    base, _ = run(tmp_path, tiny, "base", mode="majority", **common)
    pred = out / "predictions" / "parse.src.test.conllu"
    sentences = list(read_conllu(pred))  # the reader rejects anything that is not a tree with one root
    gold = list(read_conllu(tiny.data / "src/ud/test.conllu"))
    assert [s.forms for s in sentences] == [s.forms for s in gold]
    assert all(sum(h == 0 for h in s.heads) == 1 for s in sentences)
    assert all((r == "root") == (h == 0) for s in sentences for h, r in zip(s.heads, s.deprels))
    rescored = score_files("parse", DataFile(lang="src", path=str(tiny.data / "src/ud/test.conllu")),
                           DataFile(lang="src", path=str(pred)))
    for metric in ("uas", "las", "uas_nopunct", "las_nopunct"):
        assert value(results, out, metric, "src") == pytest.approx(rescored[metric])
    assert value(results, out, "las", "src") > value(results, base, "las", "src") + 0.2


def test_gold_upos_embeddings_help_parsing(tmp_path, tiny):
    common = {"task": "parse", "train": ud("src", "train"), "evaluate": [ud("src", "test")], **PARSE}
    out, results = run(tmp_path, tiny, "plain", **common)
    pos, _ = run(tmp_path, tiny, "pos", gold_upos=True, **common)
    assert value(results, pos, "las", "src") > value(results, out, "las", "src") + 0.05


def test_parsing_drops_long_training_sentences_but_evaluates_every_test_sentence(tmp_path, tiny):
    gold = list(read_conllu(tiny.data / "src/ud/test.conllu"))
    assert max(len(s) for s in gold) > 14  # some sentences need more than one 16-subword window
    out, results = run(tmp_path, tiny, "short", task="parse", train=ud("src", "train"), evaluate=[ud("src", "test")],
                       max_length=16, **PARSE)
    sentences = list(read_conllu(out / "predictions" / "parse.src.test.conllu"))
    assert [len(s) for s in sentences] == [len(s) for s in gold]


def test_grid_selects_on_source_dev_and_records_the_oracle(tmp_path, tiny):
    evaluate = [ud("src", "dev"), ud("fake", "dev"), ud("fake", "test"), ud("unigram", "test"), ud("src", "test")]
    out, results = run(tmp_path, tiny, "grid", task="upos", train=ud("src", "train"), evaluate=evaluate,
                       lr=[1e-5, 3e-3], batch_size=[16, 64], epochs=2)
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert len(history) == 2 * 2 * 2  # lr x batch x one evaluation per epoch
    chosen = max(history, key=lambda p: p["scores"]["src.dev"]["accuracy"])
    assert value(results, out, "accuracy", "fake") == chosen["scores"]["fake.test"]["accuracy"]
    assert value(results, out, "accuracy", "src") == chosen["scores"]["src.test"]["accuracy"]
    oracle = max(history, key=lambda p: p["scores"]["fake.dev"]["accuracy"])
    assert value(results, out, "oracle_accuracy", "fake") == oracle["scores"]["fake.test"]["accuracy"]
    targets = [chosen["scores"][f"{lang}.test"]["accuracy"] for lang in ("fake", "unigram")]
    assert value(results, out, "accuracy", "avg") == pytest.approx(np.mean(targets))
    assert not results.query(artifact=str(out), test_lang="avg", split="dev")  # one target only: no average
    (row,) = results.query(artifact=str(out), metric="accuracy", test_lang="fake", split="test")
    assert (row.extra["lr"], row.extra["batch_size"]) == (chosen["lr"], chosen["batch_size"])
    assert set(row.extra) - {"transfer"} <= SELECTED_RUN_KEYS  # what checks know is not a job's tag
    # test files are scored only where a row may read them: at a point selected so far (every test file), or
    # where the language's own dev score is the best so far (its test file)
    running = {"src.dev": -1.0, "fake.dev": -1.0}
    for point in history:
        scores = point["scores"]
        assert {"src.dev", "fake.dev"} <= set(scores)
        new = {dev for dev in running if scores[dev]["accuracy"] > running[dev]}
        running |= {dev: scores[dev]["accuracy"] for dev in new}
        expected = {"fake.test", "unigram.test", "src.test"} if "src.dev" in new else \
            {"fake.test"} & ({"fake.test"} if "fake.dev" in new else set())
        assert set(scores) - {"src.dev", "fake.dev"} == expected
    assert sum("fake.test" in p["scores"] for p in history) < len(history)  # lazy scoring takes effect here


def test_without_a_source_dev_the_last_point_is_scored_once_on_every_test_file(tmp_path, tiny):
    """No dev file: the model is the run's last point (a fixed-epoch protocol, liu2020's XNLI), so its test files
    are scored once, after the run, and the rows are that point's, as the written predictions re-score."""
    out, results = run(tmp_path, tiny, "nodev", task="upos", train=ud("src", "train"),
                       evaluate=[ud("src", "test"), ud("fake", "test")], lr=3e-3, batch_size=32, epochs=2)
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [sorted(p["scores"]) for p in history] == [[], ["fake.test", "src.test"]]
    for lang in ("src", "fake"):
        rescored = score_files("upos", DataFile(lang=lang, path=str(tiny.data / f"{lang}/ud/test.conllu")),
                               DataFile(lang=lang, path=str(out / "predictions" / f"upos.{lang}.test.conllu")))
        assert value(results, out, "accuracy", lang) == pytest.approx(rescored["accuracy"])
        assert value(results, out, "accuracy", lang) == history[-1]["scores"][f"{lang}.test"]["accuracy"]
    assert json.loads((out / "scores.json").read_text())["selected"]["step"] == history[-1]["step"]


def test_epochs_grid_runs_each_value_with_its_own_decay(tmp_path, tiny):
    """Wu & Dredze 2019 §5's epochs {3, 4}: a grid of two runs, each decayed over its own length (not the 4-epoch
    run's evaluation after epoch 3), the point chosen on source dev across both."""
    evaluate = [ud("src", "dev"), ud("src", "test")]
    out, results = run(tmp_path, tiny, "epochs", task="upos", train=ud("src", "train"), evaluate=evaluate, lr=1e-3,
                       batch_size=32, epochs=[1, 2], max_train_sentences=320, max_eval_sentences=30)
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [(p["epochs"], p["step"]) for p in history] == [(1, 10), (2, 10), (2, 20)]
    assert history[0]["scores"] != history[1]["scores"]  # one epoch decayed to 0 is not the 2-epoch run's first
    chosen = max(history, key=lambda p: p["scores"]["src.dev"]["accuracy"])
    (row,) = results.query(artifact=str(out), metric="accuracy", test_lang="src", split="test")
    assert (row.value, row.extra["epochs"]) == (chosen["scores"]["src.test"]["accuracy"], chosen["epochs"])
    with pytest.raises(ValueError, match="exclude each other"):
        TransferConfig(task="upos", train=ud("src", "train"), evaluate=evaluate, epochs=[3, 4], steps=100)


def test_steps_protocol_trains_a_fixed_number_of_steps_and_evaluates_every_k(tmp_path, tiny):
    """Wu & Dredze 2020 §3.2: a fixed number of steps whatever the training set's size, dev every k steps, the
    model selected there. 600 training sentences at batch 32 are 19 steps an epoch: 45 steps cross 3 epochs."""
    evaluate = [ud("src", "dev"), ud("src", "test")]
    out, results = run(tmp_path, tiny, "steps", task="upos", train=ud("src", "train"), evaluate=evaluate, lr=1e-3,
                       batch_size=32, steps=45, eval_every=10, max_eval_sentences=30)
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [p["step"] for p in history] == [10, 20, 30, 40, 45]
    assert history[-1]["epoch"] == pytest.approx(45 / 19, abs=1e-4)
    chosen = max(history, key=lambda p: p["scores"]["src.dev"]["accuracy"])
    assert value(results, out, "accuracy", "src") == chosen["scores"]["src.test"]["accuracy"]
    small, _ = run(tmp_path, tiny, "steps-small", task="upos", train=ud("src", "train"), evaluate=evaluate, lr=1e-3,
                   batch_size=32, steps=45, eval_every=10, max_eval_sentences=30, max_train_sentences=100)
    history = [json.loads(line) for line in (small / "history.jsonl").read_text().splitlines()]
    assert [p["step"] for p in history] == [10, 20, 30, 40, 45]  # 4 steps an epoch: 12 epochs, same steps
    keys = {"task": "upos", "train": ud("src", "train"), "evaluate": evaluate}
    assert "steps" not in TransferConfig(**keys).model_dump()  # configs without steps keep their hashes
    assert TransferConfig(**keys, steps=10).model_dump()["steps"] == 10


def test_checkpoints_are_grid_candidates_chosen_on_source_dev(tmp_path, tiny):
    """Wu & Dredze 2020 §3.3, the best of the saved checkpoints: each listed checkpoint of a pretrain artifact is
    fine-tuned like the final model, and the point with the best source-dev score over all of them is kept."""
    import shutil

    import torch

    from mbertlab.pretrain.config import ModelShape
    from mbertlab.pretrain.model import new_model

    pretrain = tmp_path / "pretrain"
    shutil.copytree(tiny.encoder, pretrain / "model")
    for step, seed in ((10, 1), (20, 2)):  # two other encoders standing for earlier saves
        torch.manual_seed(seed)
        save = pretrain / "checkpoints" / f"step-{step}"
        new_model(ModelShape(layers=2, hidden=32, heads=2), 2000).save_pretrained(save)
        for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
            if (tiny.encoder / name).is_file():
                shutil.copy(tiny.encoder / name, save / name)
    evaluate = [ud("src", "dev"), ud("src", "test")]
    out = tmp_path / "best"
    out.mkdir()
    results = ResultsDB(tmp_path / "results.db")
    config = TransferConfig(task="upos", train=ud("src", "train"), evaluate=evaluate, lr=1e-3, epochs=2,
                            max_train_sentences=200, max_eval_sentences=40, checkpoints=[10, 20])
    run_transfer_into(config, pretrain / "model", out, results, "tiny", tiny.data)
    history = [json.loads(line) for line in (out / "history.jsonl").read_text().splitlines()]
    assert [p["checkpoint"] for p in history] == [10, 10, 20, 20, None, None]  # one evaluation per epoch
    chosen = max(history, key=lambda p: p["scores"]["src.dev"]["accuracy"])
    (row,) = results.query(artifact=str(out), metric="accuracy", test_lang="src", split="test")
    assert row.value == chosen["scores"]["src.test"]["accuracy"]
    assert row.extra["checkpoint"] == (chosen["checkpoint"] or "final")
    assert set(row.extra) - {"transfer"} <= SELECTED_RUN_KEYS
    with pytest.raises(DataError, match="step-30"):
        run_transfer_into(config.model_copy(update={"checkpoints": [30]}), pretrain / "model", tmp_path / "x",
                          results, "tiny", tiny.data)


@pytest.mark.parametrize("mode", ["feature", "bilstm_crf", "probe"])
def test_frozen_modes_learn_tags(tmp_path, tiny, mode):
    out, results = run(tmp_path, tiny, mode, task="upos", mode=mode, train=ud("src", "train"),
                       evaluate=[ud("src", "test")], epochs=3, lstm_hidden=32, feature_lr=3e-3)
    base, _ = run(tmp_path, tiny, "base", task="upos", mode="majority", train=ud("src", "train"),
                  evaluate=[ud("src", "test")])
    assert value(results, out, "accuracy", "src") > value(results, base, "accuracy", "src") + 0.1


@pytest.mark.numbers
def test_ner_with_crf_scores_equal_seqeval_on_its_predictions(tmp_path, tiny):
    from seqeval.metrics import f1_score

    from mbertlab.formats.ner_columns import read_ner

    ner = lambda l, s: DataFile(lang=l, split=s, path=f"{l}/ner/{s}.txt", format="ner")  # noqa: E731
    out, results = run(tmp_path, tiny, "crf", task="ner", crf=True, lr=1e-3, epochs=3, train=ner("src", "train"),
                       evaluate=[ner("src", "test")])
    gold = [s.tags for s in read_ner(tiny.data / "src/ner/test.txt")]
    pred = [s.tags for s in read_ner(out / "predictions" / "ner.src.test.txt", scheme="bio")]  # as written
    assert value(results, out, "f1", "src") == pytest.approx(f1_score(gold, pred), abs=1e-12)
    assert value(results, out, "f1", "src") > 0.3


def xnli(lang: str, split: str, start: int, end: int, **extra) -> DataFile:
    return DataFile(lang=lang, split=split, path=f"xnli/xtreme/dev-{lang[:2]}.tsv", format="xnli", start=start,
                    end=end, **extra)


def test_xnli_premise_and_hypothesis_in_different_languages(tmp_path, tiny, shared_data):
    from mbertlab.formats.xnli import read_xnli

    cross = xnli("en-de", "test", 2000, 2100, hypothesis_path="xnli/xtreme/dev-de.tsv", hypothesis_lang="de")
    out = tmp_path / "xnli"
    out.mkdir()
    results = ResultsDB(tmp_path / "results.db")
    config = TransferConfig(task="xnli", lr=1e-3, epochs=1, train=xnli("en", "train", 0, 300),
                            evaluate=[xnli("en", "dev", 2000, 2100), cross])
    run_transfer_into(config, tiny.encoder, out, results, "tiny", shared_data)
    written = list(read_xnli(out / "predictions" / "xnli.en-de.test.tsv"))
    en = list(read_xnli(shared_data / "xnli/xtreme/dev-en.tsv"))[2000:2100]
    de = list(read_xnli(shared_data / "xnli/xtreme/dev-de.tsv"))[2000:2100]
    assert [(p.premise, p.hypothesis) for p in written] == [(a.premise, b.hypothesis) for a, b in zip(en, de)]
    accuracy = np.mean([w.label == g.label for w, g in zip(written, en)])
    assert value(results, out, "accuracy", "en-de") == pytest.approx(accuracy)

    bad = tmp_path / "short.tsv"
    bad.write_text("".join(f"{p.premise}\t{p.hypothesis}\t{p.label}\n" for p in de[:50]), encoding="utf-8")
    config = config.model_copy(update={"evaluate": [xnli("en", "test", 2000, 2100, hypothesis_path=str(bad))]})
    (tmp_path / "bad").mkdir()
    with pytest.raises(DataError, match="parallel"):
        run_transfer_into(config, tiny.encoder, tmp_path / "bad", results, "tiny", shared_data)


def test_mldoc_reads_the_first_two_sentences_and_learns_topics(tmp_path, tiny):
    from mbertlab.formats.readers import first_two_sentences
    from mbertlab.formats.records import TextExample

    pair = first_two_sentences(TextExample("One here. Two there! Three never.", "CCAT"))
    assert (pair.premise, pair.hypothesis) == ("One here.", "Two there!")
    sentences = (tiny.data / "src/text/train.txt").read_text(encoding="utf-8").splitlines()
    topic_words = dict(zip(("CCAT", "ECAT", "GCAT", "MCAT"), sentences[0].split()[:4]))
    rng = random.Random(0)
    for split, n in (("train", 400), ("test", 100)):
        lines = []
        for _ in range(n):
            label = rng.choice(sorted(topic_words))
            body = rng.sample(sentences, 3)
            lines.append(f"{label}\t{topic_words[label]} {body[0]} {body[1]} {body[2]}")
        (tmp_path / f"{split}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    doc = lambda s: DataFile(lang="src", split=s, path=str(tmp_path / f"{s}.tsv"), format="mldoc")  # noqa: E731
    out, results = run(tmp_path, tiny, "mldoc", task="mldoc", lr=3e-3, epochs=3, batch_size=16, train=doc("train"),
                       evaluate=[doc("test")])
    assert value(results, out, "accuracy", "src") > 0.9


def test_langid_by_layer(tmp_path, tiny):
    from mbertlab.transfer.langid import LangFile, LangIdConfig, run_langid_into

    config = LangIdConfig(files=[LangFile(lang=l, path=f"{l}/text/train.txt") for l in ("src", "fake")],
                          sentences=200)
    results = ResultsDB(tmp_path / "results.db")
    scores = run_langid_into(config, tiny.encoder, tmp_path, results, "tiny", tiny.data)
    assert len(scores) == 3  # embeddings + 2 layers
    # The two languages share no token, but this encoder is random and 32 wide: a probe fit on 280
    # sentences meets unseen words at test time, so it is near, not at, 1.0 (0.94-1.0 over 8 inits).
    assert min(scores) > 0.9
    rows = results.query(task="langid")
    assert sorted((r.extra["layer"], r.value) for r in rows) == list(enumerate(scores))


@pytest.mark.parametrize("mode", ["probe", "bilstm_crf"])
def test_a_frozen_encoder_scores_each_evaluation_batch_once_with_the_same_results(tmp_path, tiny, mode, monkeypatch):
    from mbertlab.transfer import encoder

    calls = {"train": 0, "eval": 0}
    states = encoder.Features._states

    def counted(self, *batch):
        calls["train" if self.training else "eval"] += 1
        return states(self, *batch)

    monkeypatch.setattr(encoder.Features, "_states", counted)
    keys = dict(task="upos", mode=mode, train=ud("src", "train"), evaluate=[ud("src", "dev"), ud("fake", "test")],
                epochs=3, lstm_hidden=16, feature_lr=3e-3, min_lr=1e-9)
    kept, _ = run(tmp_path, tiny, "kept", **keys)
    kept_calls = dict(calls)
    calls.update(train=0, eval=0)
    monkeypatch.setattr(encoder, "EVAL_CACHE_BYTES", 0)  # nothing kept: every evaluation runs the encoder
    fresh, _ = run(tmp_path, tiny, "fresh", **keys)
    assert (kept / "history.jsonl").read_text() == (fresh / "history.jsonl").read_text()
    assert len((kept / "history.jsonl").read_text().splitlines()) == 3
    assert kept_calls["train"] == calls["train"] > 0
    assert kept_calls["eval"] * 3 == calls["eval"] > 0  # three evaluations, the encoder run for the first only


@pytest.mark.parametrize("mode", ["probe", "probe_random_init"])
def test_the_probe_control_reads_fresh_frozen_weights_of_the_encoders_shape(tmp_path, tiny, mode, monkeypatch):
    """probe_random_init is the probe's control: the same linear probe on the encoder's shape with fresh
    weights, frozen; `probe` reads the encoder's own weights."""
    import torch
    from transformers import AutoModel

    from mbertlab.transfer import encoder

    seen = []
    init = encoder.Features.__init__

    def kept(self, enc, *args, **kwargs):
        init(self, enc, *args, **kwargs)
        seen.append((self, enc.embeddings.word_embeddings.weight.detach().clone()))

    monkeypatch.setattr(encoder.Features, "__init__", kept)
    run(tmp_path, tiny, mode, task="upos", mode=mode, train=ud("src", "train"), evaluate=[ud("src", "test")],
        epochs=1, feature_lr=3e-3, seed=3)  # the tiny encoder itself was drawn with seed 0
    saved = AutoModel.from_pretrained(tiny.encoder).embeddings.word_embeddings.weight
    (features, weights), = seen
    assert features.frozen and features.layer == -1 and weights.shape == saved.shape
    assert torch.equal(weights, saved) == (mode == "probe")
