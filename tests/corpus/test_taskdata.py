"""The taskdata stage reads CoNLL-U labels as written: a UD v1 tag is an error unless the mapping is asked for."""
from __future__ import annotations

import pytest

from mbertlab.corpus.taskdata import TaskDataConfig, TaskFile, TaskLanguage, build_taskdata_into
from mbertlab.errors import DataError

V1 = """# text = Tom and Ann
1	Tom	Tom	PROPN	_	_	0	root	_	_
2	and	and	CONJ	_	_	3	cc	_	_
3	Ann	Ann	PROPN	_	_	1	conj	_	_

"""


def _build(tmp_path, v1_to_v2: bool):
    src = tmp_path / "v1.conllu"
    src.write_text(V1, encoding="utf-8")
    out = tmp_path / ("mapped" if v1_to_v2 else "plain")
    out.mkdir()
    file = TaskFile(path=str(src), format="conllu", v1_to_v2=v1_to_v2)
    languages = [TaskLanguage(name="en", tasks={"upos": {"test": file}})]
    build_taskdata_into(TaskDataConfig(source="en", languages=languages), out)
    return (out / "en" / "upos" / "test.tsv").read_text(encoding="utf-8")


def test_a_v1_tag_is_an_error_naming_file_and_line_unless_the_mapping_is_asked_for(tmp_path):
    with pytest.raises(DataError, match=r"v1\.conllu:3: found UPOS .CONJ.*v1-to-v2"):
        _build(tmp_path, v1_to_v2=False)
    assert _build(tmp_path, v1_to_v2=True) == "Tom\tPROPN\nand\tCCONJ\nAnn\tPROPN\n\n"


def test_the_mapping_left_off_keeps_the_hash_a_task_file_had_before_it_existed():
    assert "v1_to_v2" not in TaskFile(path="x", format="conllu").model_dump(mode="json")
    assert TaskFile(path="x", format="conllu", v1_to_v2=True).model_dump(mode="json")["v1_to_v2"] is True


XNLI = "".join(f"premise {i}\thypothesis {i}\t{label}\n" for i, label in
               enumerate(["entailment", "neutral", "contradiction", "neutral", "entailment"]))


def _xnli_file(tmp_path):
    """An XNLI file of 5 pairs, and an empty folder to build into."""
    src = tmp_path / "dev.tsv"
    src.write_text(XNLI, encoding="utf-8")
    (tmp_path / "out").mkdir()
    return str(src), tmp_path / "out"


def test_xnli_files_keep_the_asked_range_and_a_fake_copy_shares_no_character(tmp_path):
    src, out = _xnli_file(tmp_path)
    part = dict(path=src, format="xnli", start=1, end=3)
    langs = [TaskLanguage(name="en", tasks={"xnli": {"test": TaskFile(**part)}}),
             TaskLanguage(name="fake", derive="fake-script", tasks={"xnli": {"test": TaskFile(**part)}})]
    build_taskdata_into(TaskDataConfig(source="en", languages=langs), out)
    assert (out / "en" / "xnli" / "test.tsv").read_text(encoding="utf-8").splitlines() == XNLI.splitlines()[1:3]
    fake = [line.split("\t") for line in (out / "fake" / "xnli" / "test.tsv").read_text(encoding="utf-8").splitlines()]
    assert [label for _, _, label in fake] == ["neutral", "contradiction"]
    assert not set("".join(p + h for p, h, _ in fake)) & set(XNLI) - {" "}


def test_a_range_past_the_file_is_an_error_naming_the_file_and_nothing_is_written(tmp_path):
    src, out = _xnli_file(tmp_path)
    file = TaskFile(path=src, format="xnli", start=2, end=9)
    with pytest.raises(DataError, match=r"dev\.tsv: found 5 items; expected items \[2, 9\)"):
        build_taskdata_into(TaskDataConfig(source="en", languages=[TaskLanguage(name="en",
                                                                                 tasks={"xnli": {"test": file}})]),
                            out)
    assert not (out / "en").exists()


def test_task_files_without_a_range_keep_the_hashes_they_had_before_ranges_existed():
    file = TaskFile(path="x", format="udpos")
    plain = TaskLanguage(name="en", tasks={"upos": {"test": file}}).model_dump(mode="json")
    assert set(plain["tasks"]) == {"upos"} and set(plain["tasks"]["upos"]["test"]) == {"path", "format"}
    ranged = TaskFile(path="x", format="xnli", start=5).model_dump(mode="json")
    assert ranged["start"] == 5 and "end" not in ranged
