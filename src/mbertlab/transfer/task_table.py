"""The downstream tasks, one row each: the one place that knows a task's main metric, how tables name it,
which file formats it reads and with which reader, where the data stages keep its files and which adapter
runs it. Designs, configs, the taskdata stage and the adapters all take a task's name and files from here.

An explicit table rather than registration on import, so reading it (the CLI, configs, report tables)
never imports torch: each adapter is named "module:Class" and imported only when a run needs it. A task of
one's own (a sentence-pair set such as PAWS-X) is a row and a reader: `register_task(Task(...))` from one's
module, or a row below (docs/adding-a-study.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path
from typing import Annotated, Callable, Literal

from pydantic import AfterValidator

from mbertlab.errors import ConfigError
from mbertlab.formats import readers
from mbertlab.formats.ner_columns import write_ner
from mbertlab.formats.xnli import write_pairs


@dataclass(frozen=True)
class Stored:
    """Where a data stage keeps a task's files (`{lang}`, `{split}` filled in) and in which format; `write`
    writes the task's records in that format (None: the stage only links or generates them)."""

    pattern: str
    format: str
    write: Callable | None = None


@dataclass(frozen=True)
class Task:
    name: str  # the config's `task` and the result rows' `task`
    title: str  # how tables name the task
    metric: str  # the result-row metric that selects the model and compares runs
    metric_title: str  # how tables name that metric
    readers: tuple[tuple[str, Callable], ...]  # (format, reader(path, lang=, v1_to_v2=, as_written=)); first: default
    adapter: str  # "module:Class" of its TaskAdapter
    generated: Stored | None = None  # where the generator writes it (None: it generates none)
    gathered: Stored | None = None  # where the taskdata stage writes a real language's files (None: not gathered)
    suffix_formats: tuple[tuple[str, str], ...] = ()  # (file-name ending, format) overriding the default
    repaired: str = ""  # NER: the F1 after Wu & Dredze's repair of invalid I- starts, also in every run's rows

    @property
    def formats(self) -> tuple[str, ...]:
        return tuple(fmt for fmt, _ in self.readers)

    def reported(self, repair: bool = False) -> str:
        """The metric a paper's table reports: the main one, or the repaired F1 where the paper repaired
        its predictions first (wd2019 §5.1, wd2020 §3)."""
        return self.repaired if repair and self.repaired else self.metric

    def format_of(self, path: str | Path) -> str:
        """The format of a file given without one: by its name's ending, else the task's default."""
        return next((fmt for end, fmt in self.suffix_formats if str(path).endswith(end)), self.formats[0])

    def read(self, path: str | Path, fmt: str, **options) -> list:
        """The task's records of a file (options: lang, v1_to_v2, as_written, limit: the first records only); a
        format the task does not read is a config error naming the file."""
        reader = dict(self.readers).get(fmt)
        if reader is None:
            raise ConfigError(f"{path}: task {self.name} reads {', '.join(self.formats)} files, not {fmt}")
        return reader(path, **options)

    def adapter_class(self) -> type:
        """The adapter class, imported now (it imports torch)."""
        module, _, name = self.adapter.partition(":")
        return getattr(import_module(module), name)


TASKS: dict[str, Task] = {t.name: t for t in (
    Task("upos", "POS", "accuracy", "accuracy",
         (("conllu", readers.upos_from_conllu), ("udpos", readers.upos_from_tsv)),
         "mbertlab.transfer.tagging:TaggingAdapter", suffix_formats=((".tsv", "udpos"),),
         generated=Stored("{lang}/ud/{split}.conllu", "conllu"),
         gathered=Stored("{lang}/upos/{split}.tsv", "udpos", write_ner)),  # token<TAB>tag, as NER columns
    Task("ner", "NER", "f1", "entity F1", (("ner", readers.ner_from_columns),),
         "mbertlab.transfer.tagging:TaggingAdapter", repaired="f1_repaired",
         generated=Stored("{lang}/ner/{split}.txt", "ner"),
         gathered=Stored("{lang}/ner/{split}.txt", "ner", write_ner)),
    Task("parse", "Parsing", "las_nopunct", "LAS (no punctuation)", (("conllu", readers.trees_from_conllu),),
         "mbertlab.transfer.parsing:ParsingAdapter", generated=Stored("{lang}/ud/{split}.conllu", "conllu")),
    Task("xnli", "XNLI", "accuracy", "accuracy", (("xnli", readers.nli_pairs),),
         "mbertlab.transfer.classification:ClassificationAdapter", generated=Stored("xnli/{lang}.{split}.tsv", "xnli"),
         gathered=Stored("{lang}/xnli/{split}.tsv", "xnli", write_pairs)),
    Task("mldoc", "MLDoc", "accuracy", "accuracy", (("mldoc", readers.mldoc_pairs),),
         "mbertlab.transfer.classification:ClassificationAdapter",
         generated=Stored("mldoc/{lang}.{split}.tsv", "mldoc")),
)}


def register_task(task: Task) -> None:
    """Add a task of one's own (a test, a user's module); its name must be new. It lives in the process
    that registers it: register it in the module of the spec's design (`design: mymodule:name`), which
    `study run --jobs N`'s workers import too."""
    if task.name in TASKS:
        raise ConfigError(f"task {task.name!r} exists; choose another name")
    TASKS[task.name] = task


def get_task(name: str) -> Task:
    """A task by name; an unknown name is a config error that lists the known ones."""
    if name not in TASKS:
        raise ConfigError(f"unknown task {name!r}; expected one of {', '.join(TASKS)}")
    return TASKS[name]


def tasks_among(*names: str):
    """A design's own subset of the table's tasks (those its plan knows how to run), as a config type; each
    name must be a row, so a task renamed in the table fails at import, not in a run."""
    for name in names:
        get_task(name)
    return Literal[names]


def data_formats() -> tuple[str, ...]:
    """Every format some task reads, in table order."""
    return tuple(dict.fromkeys(f for t in TASKS.values() for f in t.formats))


def _known_task(name: str) -> str:
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; expected one of {', '.join(TASKS)}")
    return name


def _known_format(name: str) -> str:
    if name not in data_formats():
        raise ValueError(f"unknown format {name!r}; expected one of {', '.join(data_formats())}")
    return name


# Checked against the table when a config is read, not fixed at import: a registered task is accepted too.
TaskName = Annotated[str, AfterValidator(_known_task)]
DataFormatName = Annotated[str, AfterValidator(_known_format)]
