"""Fine-tuning (tagging with and without a CRF and BiLSTM, parsing, classification), probing, evaluation of a
saved model, language ID and contextual word vectors run on the device their config names: every model and
batch there (tests/simulated_device.py); meta.json records what ran; the device is not part of the hash."""
from __future__ import annotations

import json
from pathlib import Path

from mbertlab.runtime import processor_name
from mbertlab.store.artifacts import ArtifactStore, external
from mbertlab.store.results import ResultsDB
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.run import run_transfer, run_transfer_into
from tests.simulated_device import assert_ran_on_device, simulated_device

SMALL = {"epochs": 1, "batch_size": 16, "lr": 1e-3, "max_train_sentences": 40, "max_eval_sentences": 20,
         "arc_mlp": 16, "label_mlp": 8, "lstm_hidden": 8, "device": "cuda"}


def ud(lang: str, split: str) -> DataFile:
    return DataFile(lang=lang, split=split, path=f"{lang}/ud/{split}.conllu", format="conllu")


def ner(lang: str, split: str) -> DataFile:
    return DataFile(lang=lang, split=split, path=f"{lang}/ner/{split}.txt", format="ner")


def mldoc(tmp_path: Path, tiny, split: str) -> DataFile:
    """Documents made of generated sentences, labelled by their first word's parity."""
    sentences = (tiny.data / "src/text/train.txt").read_text(encoding="utf-8").splitlines()[:60]
    lines = [f"{'CCAT' if i % 2 else 'ECAT'}\t{s}. {s}" for i, s in enumerate(sentences)]
    path = tmp_path / f"mldoc-{split}.tsv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return DataFile(lang="src", split=split, path=str(path), format="mldoc")


def transfer(tmp_path: Path, tiny, name: str, **keys) -> Path:
    out, config = tmp_path / name, TransferConfig(**{**SMALL, **keys})
    out.mkdir()
    (out / "config.json").write_text(config.canonical_json(), encoding="utf-8")  # as the store writes it
    run_transfer_into(config, tiny.encoder, out, ResultsDB(tmp_path / "r.db"), "tiny", tiny.data)
    return out


def test_fine_tuning_and_probing_run_every_model_and_batch_on_the_configured_device(monkeypatch, tmp_path, tiny):
    from mbertlab.transfer.evaluate import evaluate_file

    with simulated_device(monkeypatch) as sim:
        transfer(tmp_path, tiny, "parse", task="parse", train=ud("src", "train"), evaluate=[ud("fake", "test")])
        transfer(tmp_path, tiny, "crf", task="ner", mode="bilstm_crf", train=ner("src", "train"),
                 evaluate=[ner("src", "test")])
        transfer(tmp_path, tiny, "probe", task="upos", mode="probe", probe_layer=1, train=ud("src", "train"),
                 evaluate=[ud("src", "test")])
        saved = transfer(tmp_path, tiny, "doc", task="mldoc", save_model=True, train=mldoc(tmp_path, tiny, "train"),
                         evaluate=[mldoc(tmp_path, tiny, "test")])
        metrics, _ = evaluate_file(saved, mldoc(tmp_path, tiny, "test"), tmp_path / "eval", device="cuda")
    assert_ran_on_device(sim)
    assert 0.0 <= metrics["accuracy"] <= 1.0


def test_language_id_and_contextual_vectors_run_on_the_configured_device(monkeypatch, tmp_path, tiny):
    from mbertlab.analysis.contextual import encoder_word_vectors, read_sentences
    from mbertlab.runtime import resolve_device
    from mbertlab.transfer.langid import LangFile, LangIdConfig, run_langid_into

    config = LangIdConfig(files=[LangFile(lang=l, path=f"{l}/text/train.txt") for l in ("src", "fake")],
                          sentences=40, device="cuda")
    text = [tiny.data / f"{l}/text/train.txt" for l in ("src", "fake")]
    with simulated_device(monkeypatch) as sim:
        scores = run_langid_into(config, tiny.encoder, tmp_path, ResultsDB(tmp_path / "r.db"), "tiny", tiny.data)
        vectors = encoder_word_vectors(tiny.encoder, tuple(read_sentences(t, 30) for t in text), (None, None),
                                       all_layers=True, device=resolve_device("cuda"))
    assert_ran_on_device(sim)
    assert len(scores) == 3 and sorted(vectors) == [0, 1, 2]


def test_transfer_meta_records_what_ran_and_the_device_leaves_the_hash_alone(tmp_path, tiny):
    store, results = ArtifactStore(tmp_path / "work"), ResultsDB(tmp_path / "r.db")
    keys = {**SMALL, "task": "upos", "train": ud("src", "train"), "evaluate": [ud("src", "test")]}
    data = external(tiny.data)
    built = run_transfer(TransferConfig(**{**keys, "device": "cpu"}), store, results, encoder_dir=tiny.encoder,
                         data=data)
    meta = built.meta
    assert (meta["device"], meta["processor"]) == ("cpu", processor_name())
    assert meta["precision"] in ("bf16", "fp32")
    again = run_transfer(TransferConfig(**{**keys, "device": "auto"}), store, results, encoder_dir=tiny.encoder,
                         data=data)
    assert again.path == built.path and not again.fresh
    assert "device" not in json.loads((built.path / "config.json").read_text())


def test_a_fine_tuning_step_reads_nothing_back_from_the_device(monkeypatch, tmp_path, tiny):
    """Between optimiser steps (no evaluation among them) the host never waits for the device."""
    from tests.simulated_device import reads_between_steps

    steady = {"steps": 6, "eval_every": 6, "max_train_sentences": 40, "batch_size": 8}
    with simulated_device(monkeypatch) as sim, reads_between_steps(sim) as tagging:
        transfer(tmp_path, tiny, "upos", task="upos", train=ud("src", "train"), evaluate=[ud("src", "test")], **steady)
    with simulated_device(monkeypatch) as sim, reads_between_steps(sim) as classifying:
        transfer(tmp_path, tiny, "doc", task="mldoc", train=mldoc(tmp_path, tiny, "train"),
                 evaluate=[mldoc(tmp_path, tiny, "test")], **steady)
    assert (tagging, classifying) == ([0] * 5, [0] * 5), sim.host_reads


def test_the_encoder_is_built_for_the_run_s_device(monkeypatch, tmp_path, tiny):
    """Fine-tuning and probing ask `attention_for` about the device the run is on (SDPA on CUDA), not the CPU."""
    import mbertlab.transfer.encoder as encoder

    asked = []
    monkeypatch.setattr(encoder, "attention_for", lambda device: asked.append(str(device)) or "eager")
    with simulated_device(monkeypatch):
        transfer(tmp_path, tiny, "tune", task="upos", train=ud("src", "train"), evaluate=[ud("src", "test")], steps=1)
        transfer(tmp_path, tiny, "probe", task="upos", mode="probe", probe_layer=1, train=ud("src", "train"),
                 evaluate=[ud("src", "test")], steps=1)
    assert asked and set(asked) == {"meta:1"}
