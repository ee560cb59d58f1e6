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
    build_taskdata_into(TaskDataConfig(source="en", languages=[TaskLanguage(name="en", upos={"test": file})]), out)
    return (out / "en" / "upos" / "test.tsv").read_text(encoding="utf-8")


def test_a_v1_tag_is_an_error_naming_file_and_line_unless_the_mapping_is_asked_for(tmp_path):
    with pytest.raises(DataError, match=r"v1\.conllu:3: found UPOS .CONJ.*v1-to-v2"):
        _build(tmp_path, v1_to_v2=False)
    assert _build(tmp_path, v1_to_v2=True) == "Tom\tPROPN\nand\tCCONJ\nAnn\tPROPN\n\n"


def test_the_mapping_left_off_keeps_the_hash_a_task_file_had_before_it_existed():
    assert "v1_to_v2" not in TaskFile(path="x", format="conllu").model_dump(mode="json")
    assert TaskFile(path="x", format="conllu", v1_to_v2=True).model_dump(mode="json")["v1_to_v2"] is True
