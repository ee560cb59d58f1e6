"""The task table: every row names a real adapter and readable formats, the configs accept exactly its
tasks and formats, and reading it imports no torch."""
from __future__ import annotations

import subprocess
import sys
import pytest
from pydantic import ValidationError

from mbertlab.errors import ConfigError
from mbertlab.formats.guess import known_formats
from mbertlab.transfer.config import DataFile, TransferConfig
from mbertlab.transfer.task_table import TASKS, data_formats, get_task


def test_rows_name_adapters_and_formats_that_exist():
    from mbertlab.transfer.adapter import TaskAdapter, adapter_for

    for name, task in TASKS.items():
        assert issubclass(task.adapter_class(), TaskAdapter)
        assert adapter_for(name).main_metric == task.metric
        assert set(task.formats) <= set(known_formats())
    for fmt in data_formats():
        assert DataFile(lang="en", path="x", format=fmt).format == fmt
    for name in TASKS:
        assert TransferConfig(task=name, train=[{"lang": "en", "path": "x"}],
                              evaluate=[{"lang": "en", "path": "x"}]).task == name
    with pytest.raises(ValidationError, match="unknown format 'csv'"):
        DataFile(lang="en", path="x", format="csv")
    with pytest.raises(ValidationError, match="unknown task 'pos'"):
        TransferConfig(task="pos", train=[{"lang": "en", "path": "x"}], evaluate=[{"lang": "en", "path": "x"}])


def test_default_format_and_unknown_task():
    assert get_task("upos").format_of("en/ud/test.conllu") == "conllu"
    assert get_task("upos").format_of("udpos/en.test.tsv") == "udpos"
    assert get_task("xnli").format_of("xnli/en.test.tsv") == "xnli"
    with pytest.raises(ConfigError, match="unknown task 'pos'; expected one of upos, ner, parse, xnli, mldoc"):
        get_task("pos")


def test_reading_the_table_imports_no_torch():
    code = "import sys, mbertlab.transfer.task_table, mbertlab.transfer.config; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True).stdout.strip() == "False"


GOOD = {  # two well-formed records of each task's default format; BAD: a malformed one after them
    "conllu": "1\tThe\tthe\tDET\t_\t_\t2\tdet\t_\t_\n2\tdog\tdog\tNOUN\t_\t_\t0\troot\t_\t_\n\n",
    "ner": "Ada\tB-PER\nran\tO\n\n",
    "xnli": "tu vo .\tvo tu .\tneutral\n",
    "mldoc": "CCAT\tThe firm grew . It hired .\n",
}
BAD = {"conllu": "1\tbroken\n\n", "ner": "broken\n\n", "xnli": "one column\n", "mldoc": "no label here\n"}


@pytest.mark.parametrize("task", list(TASKS))
def test_a_limited_read_parses_no_further_than_its_limit(tmp_path, task):
    """Training on 2,000 of a treebank's 20,000 sentences parses 2,000: a malformed record past the limit is never
    reached (a full read reports it), and the records read are the full read's first ones."""
    from mbertlab.errors import DataError
    from mbertlab.transfer.adapter import adapter_for, read_records

    fmt = get_task(task).formats[0]
    good, bad = tmp_path / "good", tmp_path / "bad"
    good.write_text(GOOD[fmt] * 2, encoding="utf-8")
    bad.write_text(GOOD[fmt] * 2 + BAD[fmt], encoding="utf-8")
    adapter = adapter_for(task)
    expected = read_records(adapter, DataFile(lang="en", path=str(good), format=fmt), None, None)
    assert len(expected) == 2
    assert read_records(adapter, DataFile(lang="en", path=str(bad), format=fmt), 2, None) == expected
    assert read_records(adapter, DataFile(lang="en", path=str(bad), format=fmt, start=1), 1, None) == expected[1:]
    with pytest.raises(DataError, match=f"{bad}:"):
        read_records(adapter, DataFile(lang="en", path=str(bad), format=fmt), None, None)
