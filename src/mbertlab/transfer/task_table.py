"""The downstream tasks, one row each: the one place that knows a task's main metric, how tables name it,
which files it reads and which adapter runs it.

An explicit table rather than registration on import, so reading it (the CLI, configs, report tables)
never imports torch: each adapter is named "module:Class" and imported only when a run needs it.
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Literal

from mbertlab.errors import ConfigError


@dataclass(frozen=True)
class Task:
    name: str  # the config's `task` and the result rows' `task`
    title: str  # how tables name the task
    metric: str  # the result-row metric that selects the model and compares runs
    metric_title: str  # how tables name that metric
    formats: tuple[str, ...]  # the data-file formats it reads; the first is the default
    adapter: str  # "module:Class" of its TaskAdapter
    suffix_formats: tuple[tuple[str, str], ...] = ()  # (file-name ending, format) overriding the default
    repaired: str = ""  # NER: the F1 after Wu & Dredze's repair of invalid I- starts, also in every run's rows

    def reported(self, repair: bool = False) -> str:
        """The metric a paper's table reports: the main one, or the repaired F1 where the paper repaired
        its predictions first (wd2019 §5.1, wd2020 §3)."""
        return self.repaired if repair and self.repaired else self.metric

    def format_of(self, path: str | Path) -> str:
        """The format of a file given without one: by its name's ending, else the task's default."""
        return next((fmt for end, fmt in self.suffix_formats if str(path).endswith(end)), self.formats[0])

    def adapter_class(self) -> type:
        """The adapter class, imported now (it imports torch)."""
        module, _, name = self.adapter.partition(":")
        return getattr(import_module(module), name)


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("upos", "POS", "accuracy", "accuracy", ("conllu", "udpos"), "mbertlab.transfer.tagging:TaggingAdapter",
         suffix_formats=((".tsv", "udpos"),)),
    Task("ner", "NER", "f1", "entity F1", ("ner",), "mbertlab.transfer.tagging:TaggingAdapter",
         repaired="f1_repaired"),
    Task("parse", "Parsing", "las_nopunct", "LAS (no punctuation)", ("conllu",),
         "mbertlab.transfer.parsing:ParsingAdapter"),
    Task("xnli", "XNLI", "accuracy", "accuracy", ("xnli",), "mbertlab.transfer.classification:ClassificationAdapter"),
    Task("mldoc", "MLDoc", "accuracy", "accuracy", ("mldoc",),
         "mbertlab.transfer.classification:ClassificationAdapter"),
)}

TASK_NAMES = tuple(TASKS)
TaskName = Literal[TASK_NAMES]  # a design that runs every task takes this, so a new task needs no edit there
DATA_FORMATS = tuple(dict.fromkeys(f for t in TASKS.values() for f in t.formats))


def get_task(name: str) -> Task:
    """A task by name; an unknown name is a config error that lists the known ones."""
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; expected one of {', '.join(TASKS)}")
    return TASKS[name]
