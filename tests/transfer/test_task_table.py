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
