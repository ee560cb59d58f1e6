"""studies/wd2019-real.yaml: the whole wd2019 design on every language and task of ../shared/data with a local
encoder directory, at its test scale. Zero-shot and in-language rows for every file the spec names, parsing
scores equal to the official CoNLL 2018 scorer and NER entity F1 equal to seqeval on the written predictions."""
from __future__ import annotations

from itertools import islice
from pathlib import Path

import pytest
from seqeval.metrics import f1_score
from udtools.udeval import evaluate, load_conllu_file

from mbertlab.formats.conllu import read_conllu, write_conllu
from mbertlab.formats.ner_columns import read_ner
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.runner import run_study, study_jobs
from mbertlab.studies.spec import load_spec
from tests.conftest import REPO, local_encoder

pytestmark = pytest.mark.slow
SPEC = REPO / "studies" / "wd2019-real.yaml"
TEXT = ("en", "es", "de", "ru", "zh", "ar", "hi", "af", "lv")


@pytest.fixture(scope="module")
def real(tmp_path_factory, shared_data):
    """The spec run at test scale with a random 2-layer encoder whose WordPiece vocabulary is learned from the
    raw text of every language that has it."""
    root = tmp_path_factory.mktemp("wd2019-real")
    enc = local_encoder(root / "encoder", TEXT, vocab_size=3000)
    spec = load_spec(SPEC, "test", [f"encoder={enc}"])
    ctx = RunContext(ArtifactStore(root / "work"), ResultsDB(root / "work" / "results.db"), "wd2019-real")
    run_study(spec, ctx, jobs=1)
    return spec, ctx


def test_every_language_and_task_of_the_shared_data_is_tested(real):
    spec, ctx = real
    s = spec.settings
    named = {(task, lang) for lang, files in s.data.languages.items() for task, splits in files.tasks.items()
             if "test" in splits}
    rows = ctx.results.query(split="test")
    zero_shot = {(r.task, r.test_lang) for r in rows if r.mode == "finetune" and r.train_lang == "en"}
    assert named <= zero_shot
    in_language = {(r.task, r.test_lang) for r in rows if r.mode == "finetune" and r.train_lang == r.test_lang != "en"}
    assert in_language == {("ner", l) for l in ("de", "hau", "yor")} | \
        {(t, l) for t in ("upos", "parse") for l in ("af", "lv")}
    assert {r.test_lang for r in ctx.results.query(task="langid")} == {"+".join(TEXT)}  # nl, hau, yor: no text
    overlap = {(r.task, r.test_lang) for r in ctx.results.query(mode="overlap")}
    assert overlap == {pair for pair in named if pair[1] != "en"}
    assert not [j for j in study_jobs(spec) if j.kind == "pretrain"]


def test_xnli_targets_are_tested_apart_from_the_translated_training_examples(real):
    """English trains on XTREME dev [0, 1800) and selects on [1800, 2000): a target's XTREME dev set (which
    translates the English one) is tested from example 2000 on, apart from both."""
    spec, _ = real
    (xnli,) = [j for j in study_jobs(spec) if j.kind == "transfer" and j.config.task == "xnli"
               and j.config.mode == "finetune"]
    assert (xnli.config.train[0].start, xnli.config.train[0].end) == (0, 1800)
    assert [(f.start, f.end) for f in xnli.config.evaluate if f.lang == "en"] == [(1800, 2000)]
    for f in xnli.config.evaluate:
        if f.lang != "en":
            assert f.start == 2000 or f.lang == "de" and f.start == 0  # de: XNLI's own test set (XGLUE)


def test_parsing_scores_equal_the_conll_2018_scorer(real, tmp_path, shared_data):
    _, ctx = real
    (row,) = [r for r in ctx.results.query(task="parse", split="test", metric="las", mode="finetune")
              if r.train_lang == "lv" == r.test_lang]
    predicted = _predictions(row, "parse.lv.test.conllu")
    gold = tmp_path / "gold.conllu"
    write_conllu(list(islice(read_conllu(shared_data / "ud" / "lv-ud-test.conllu"), 20)), gold)
    official = evaluate(load_conllu_file(str(gold)), load_conllu_file(str(predicted)))
    assert row.value == pytest.approx(official["LAS"].f1, abs=1e-9)


def test_ner_entity_f1_equals_seqeval(real, shared_data):
    _, ctx = real
    (row,) = [r for r in ctx.results.query(task="ner", split="test", metric="f1", mode="finetune")
              if r.train_lang == "hau" == r.test_lang]
    predicted = _predictions(row, "ner.hau.test.txt")
    gold = [s.tags for s in islice(read_ner(shared_data / "ner" / "masakhaner" / "hau" / "test.txt"), 20)]
    pred = [s.tags for s in read_ner(predicted)]
    assert row.value == pytest.approx(f1_score(gold, pred), abs=1e-9)


def _predictions(row, name: str) -> Path:
    found = Path(row.artifact) / "predictions" / name
    assert found.is_file(), f"no prediction file {found}"
    return found


def test_parsing_targets_are_ordered_by_word_order_distance(real, tmp_path, shared_data):
    """Table 6's order: one distance per parsing target, recounted here from the treebanks the transfer read."""
    from mbertlab.analysis.word_order import head_directions, word_order_distance
    from mbertlab.studies.report import write_report

    spec, ctx = real
    rows = {r.test_lang: r.value for r in ctx.results.query(mode="word_order", metric="word_order_distance")}
    assert set(rows) == {"es", "de", "ru", "zh", "ar", "hi", "af", "lv"}
    ud = shared_data / "ud"
    en = head_directions([ud / "en_partut-ud-train.conllu"])
    assert rows["hi"] == pytest.approx(word_order_distance(en, head_directions([ud / "hi_pud-ud-test.conllu"]))[0])
    md = write_report(spec, ctx, tmp_path / "report")[0].read_text(encoding="utf-8")
    section = md.split("Dependency parsing by word-order distance")[1].split("###")[0]
    order = [line.split("|")[1].strip() for line in section.splitlines()
             if line.startswith("| ") and "target" not in line]
    assert order == sorted(rows, key=rows.get) and "Spearman's rho" in section
