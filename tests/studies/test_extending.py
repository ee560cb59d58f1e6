"""What a researcher adds, added the way docs/adding-a-study.md says, and run through a whole study at test
scale: a sentence-pair task of their own (PAWS-X's layout: a task-table row and a reader, nothing else) and a
transliterated language (one entry of the word-by-word manipulations)."""
from __future__ import annotations

import random
from pathlib import Path

import pytest

from mbertlab.errors import ConfigError, DataError
from mbertlab.formats.common import numbered_lines
from mbertlab.formats.guess import summarize
from mbertlab.formats.records import PairExample
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.runner import build_job, run_study, study_jobs, study_status
from mbertlab.studies.spec import load_spec

REPO = Path(__file__).resolve().parents[2]
SPEC = REPO / "studies" / "k2020-lab.yaml"

# The transliteration: a single entry of the word-by-word manipulations.
GREEK = str.maketrans("abcdefghiklmnoprstuxyz", "αβψδεφγηικλμνοπρστυχυζ")


def _greek(word: str) -> str:
    return word.lower().translate(GREEK)


# The task: PAWS-X's files (`id<TAB>sentence1<TAB>sentence2<TAB>label` under a header) or the headerless
# three columns the taskdata stage gathers them into; label 1 = paraphrase.
def read_paws(path, *, lang: str = "", **_) -> list[PairExample]:
    out = []
    for number, line in numbered_lines(path):
        cols = line.split("\t")
        if number == 1 and cols[:2] == ["id", "sentence1"]:
            continue
        cols = cols[1:] if len(cols) == 4 else cols
        if len(cols) != 3 or cols[2] not in ("0", "1"):
            raise DataError(path, number, "expected [id<TAB>]sentence1<TAB>sentence2<TAB>label with label 0 or 1")
        out.append(PairExample(cols[0], cols[1], cols[2], lang=lang, line=number))
    return out


@pytest.fixture
def registered():
    """The two additions, registered as a researcher's module would at import; removed afterwards."""
    from mbertlab.corpus.manipulations import WORD_MAPS, register_word_map
    from mbertlab.formats.xnli import write_pairs
    from mbertlab.transfer.task_table import TASKS, Stored, Task, register_task

    if "test-greek" not in WORD_MAPS:
        register_word_map("test-greek", _greek)
    register_task(Task("pawsx", "PAWS-X", "accuracy", "accuracy", (("pawsx", read_paws),),
                       "mbertlab.transfer.classification:ClassificationAdapter",
                       gathered=Stored("{lang}/pawsx/{split}.tsv", "pawsx", write_pairs)))
    yield
    del TASKS["pawsx"]


def _paws_file(path: Path, lines: list[str], n: int, seed: int) -> list[str]:
    """n PAWS-X-style pairs over `lines`: a sentence and itself with two neighbouring words swapped (1), or
    a sentence and another one (0)."""
    rng = random.Random(seed)
    rows, labels = ["id\tsentence1\tsentence2\tlabel"], []
    for i in range(n):
        words = rng.choice(lines).split()
        if i % 2:
            j = rng.randrange(len(words) - 1)
            other, label = words[:j] + [words[j + 1], words[j]] + words[j + 2:], "1"
        else:
            other, label = rng.choice(lines).split(), "0"
        rows.append(f"{i}\t{' '.join(words)}\t{' '.join(other)}\t{label}")
        labels.append(label)
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    return labels


def test_a_new_pair_task_and_a_transliteration_run_through_a_study(tmp_path, shared_data, registered):
    text = [l for l in (shared_data / "raw_text" / "en.txt").read_text(encoding="utf-8").splitlines()
            if 4 <= len(l.split()) <= 12][:200]
    labels = {name: _paws_file(tmp_path / f"{name}.tsv", text, n, seed)
              for name, n, seed in (("train", 60, 0), ("test", 30, 1), ("es-test", 24, 2))}
    spec = load_spec(SPEC, "test", [
        "tasks=[pawsx]", "data.languages.fake_en.derive.transform=test-greek",
        f"data.languages.en.tasks.pawsx={{train: {tmp_path / 'train.tsv'}, test: {tmp_path / 'test.tsv'}}}",
        f"data.languages.es.tasks.pawsx={{test: {tmp_path / 'es-test.tsv'}}}"])
    ctx = RunContext(ArtifactStore(tmp_path / "work"), ResultsDB(tmp_path / "results.db"), "k2020-lab")
    run_study(spec, ctx, jobs=1)
    assert {s.state for s in study_status(spec, ctx.store)} == {"done"}

    rows = [r for r in ctx.results.query(study="k2020-lab") if r.task == "pawsx" and r.metric == "accuracy"]
    assert {r.test_lang for r in rows} == {"en", "fake_en", "es"}
    # the majority control: the training file's commoner label, scored on each test file, counted here apart
    top = max(("0", "1"), key=lambda l: (labels["train"].count(l), l == "0"))
    expected = {"en": labels["test"].count(top) / 30, "fake_en": labels["test"].count(top) / 30,
                "es": labels["es-test"].count(top) / 24}
    majority = {r.test_lang: r.value for r in rows if r.mode == "majority" and r.split == "test"}
    assert majority == pytest.approx({l: expected[l] for l in majority}) and majority
    assert all(0.0 <= r.value <= 1.0 for r in rows)
    # `mbertlab data summarize` reads the new format through its row too
    assert summarize(tmp_path / "train.tsv", "pawsx")["labels"] == {l: labels["train"].count(l) for l in "01"}

    # the transliterated language: its text, its pairs and its lexicon respelled word by word, labels kept
    corpus = next((ctx.store.workdir / "corpus").glob("[0-9a-f]*"))
    tasks = next((ctx.store.workdir / "taskdata").glob("[0-9a-f]*"))
    en = (corpus / "en" / "train.txt").read_text(encoding="utf-8").splitlines()
    assert (corpus / "fake_en" / "train.txt").read_text(encoding="utf-8").splitlines() == [
        " ".join(_greek(w) for w in line.split(" ")) for line in en]
    ours, theirs = (read_paws(tasks / lang / "pawsx" / "test.tsv") for lang in ("en", "fake_en"))
    assert [p.label for p in ours] == [p.label for p in theirs] == labels["test"]
    assert [p.premise for p in theirs] == [" ".join(_greek(w) for w in p.premise.split(" ")) for p in ours]
    lexicon = (tasks / "lexicon" / "en-fake_en.txt").read_text(encoding="utf-8").splitlines()
    assert lexicon and all(b == _greek(a) for a, b in (line.split(" ") for line in lexicon))


def test_the_derived_language_keeps_every_gathered_task_file(tmp_path, shared_data, registered):
    """The built-in tasks of the same spec: a derived language's UPOS and NER files keep their tags and token
    counts, each token respelled."""
    spec = load_spec(SPEC, "test", ["data.languages.fake_en.derive.transform=test-greek"])
    ctx = RunContext(ArtifactStore(tmp_path), ResultsDB(tmp_path / "results.db"), "k2020-lab")
    (taskdata,) = (j for j in study_jobs(spec) if j.kind == "taskdata")
    tasks = build_job(taskdata, [], ctx).path
    for task, name in (("upos", "test.tsv"), ("ner", "train.txt")):
        ours, theirs = ((tasks / lang / task / name).read_text(encoding="utf-8").splitlines() for lang in
                        ("en", "fake_en"))
        assert [line.split("\t")[1:] for line in theirs] == [line.split("\t")[1:] for line in ours]
        assert [line.split("\t")[0] for line in theirs] == [_greek(line.split("\t")[0]) for line in ours]


def test_unknown_names_are_one_line_errors(registered):
    with pytest.raises(ConfigError, match="unknown word-by-word manipulation 'greek'"):
        load_spec(SPEC, "test", ["data.languages.fake_en.derive.transform=greek"])
    with pytest.raises(ConfigError, match="unknown task 'paws'"):
        load_spec(SPEC, "test", ["data.languages.en.tasks.paws={test: x.tsv}"])
    with pytest.raises(ConfigError, match="task 'parse' has no gathered layout"):
        study_jobs(load_spec(SPEC, "test", ["data.languages.en.tasks.parse={test: ud/en_ewt-ud-test.conllu}"]))


def test_a_generated_language_takes_the_same_entry(tmp_path, registered):
    """The generator reaches the same registry: `variant: test-greek` respells the base's word forms, so with the
    base's sample seed its text is the base's, word by word."""
    from mbertlab.data.generate import preset_config
    from mbertlab.data.generate.build import generate_into

    config = preset_config("quick", 0, {"languages": [{"name": "src", "sample_seed": 1},
                                                      {"name": "gr", "base": "src", "variant": "test-greek",
                                                       "sample_seed": 1}],
                                        "sentences": {"train": 50, "dev": 10, "test": 10}})
    generate_into(config, tmp_path)
    src, gr = ((tmp_path / lang / "text" / "train.txt").read_text(encoding="utf-8").splitlines()
               for lang in ("src", "gr"))
    assert len(src) == len(gr) == 50 and src != gr
    assert gr == [" ".join(_greek(w) for w in line.split(" ")) for line in src]
    with pytest.raises(ConfigError, match="unknown variant 'greek'"):
        preset_config("quick", 0, {"languages": [{"name": "src"}, {"name": "gr", "base": "src", "variant": "greek"}]})
