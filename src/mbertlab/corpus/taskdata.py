"""The taskdata stage: task files of real languages gathered into one layout (the generated one's),
respelled word by word for derived languages (fake script, ...), and gold lexicons for word retrieval.

Layout: each task's `gathered` pattern and format in the task table (`<lang>/upos/<split>.tsv`, token<TAB>UPOS;
`<lang>/ner/<split>.txt`; `<lang>/xnli/<split>.tsv`, premise<TAB>hypothesis<TAB>label), and
`lexicon/<source>-<lang>.txt` (MUSE). A derived language's lexicon maps the base's most frequent words to their
respelling (the gold alignment K et al.'s Fake-English has by construction).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from pydantic import Field, field_validator

from mbertlab.config import Config, ContentPath, LanguageName
from mbertlab.corpus.manipulations import WORD_MAPS, WordMapName, respell_line
from mbertlab.errors import DataError
from mbertlab.store.layout import task_files
from mbertlab.transfer.task_table import DataFormatName, TaskName, get_task


class TaskFile(Config):
    path: ContentPath
    format: DataFormatName
    v1_to_v2: bool = Field(False, description="CoNLL-U: map UD v1 UPOS (CONJ, ...) to v2 on reading. Off: a v1 "
                           "tag is a one-line error naming file and line, never a silent change.")
    start: int = Field(0, ge=0, description="Keep items (sentences, pairs) [start, end) of the file.")
    end: int | None = Field(None, ge=1)


class TaskLanguage(Config):
    name: LanguageName
    derive: WordMapName | None = Field(None, description="A word-by-word manipulation (corpus/manipulations.py "
                                       "WORD_MAPS) that respells every word of the files: a derived language.")
    tasks: dict[TaskName, dict[str, TaskFile]] = Field(default_factory=dict, description="task -> split -> file; "
                                                       "each task one the stage gathers (its `gathered` layout).")
    lexicon: ContentPath | None = Field(None, description="MUSE dictionary source->this language.")
    text: list[ContentPath] = Field(default_factory=list, description="Text to take a derived lexicon's words "
                                    "from.")

    @field_validator("tasks")
    @classmethod
    def _gathered(cls, tasks: dict) -> dict:
        for task in tasks:
            if get_task(task).gathered is None:
                raise ValueError(f"task {task!r} has no gathered layout in the task table; the taskdata stage "
                                 f"gathers {', '.join(task_files('taskdata'))}")
        return tasks


class TaskDataConfig(Config):
    source: str
    languages: list[TaskLanguage]
    fake_lexicon_words: int = 3000  # words of a derived language's lexicon


def _read(task: str, file: TaskFile) -> list:
    """The file's items [start, end), read by the task's reader; a range past the file's end is an error,
    never a short split."""
    items = get_task(task).read(file.path, file.format, v1_to_v2=file.v1_to_v2)
    end = len(items) if file.end is None else file.end
    if end > len(items) or file.start >= end:
        raise DataError(file.path, None, f"found {len(items)} items; expected items [{file.start}, {end}) to exist")
    return items[file.start:end]


def _derived_lexicon(lang: TaskLanguage, n: int, out: Path) -> None:
    """A gold dictionary from the base language to the derived one: its n most frequent words and their
    respelling."""
    from mbertlab.formats.text import read_lines

    counts: Counter[str] = Counter()
    for path in lang.text:
        for line in read_lines(path):
            counts.update(line.split())
    word_map = WORD_MAPS.get(lang.derive)
    with out.open("w", encoding="utf-8", newline="\n") as f:
        for word, _ in counts.most_common(n):
            f.write(f"{word} {word_map(word)}\n")


def build_taskdata_into(config: TaskDataConfig, out: Path) -> None:
    (out / "lexicon").mkdir()
    for lang in config.languages:
        spell = respell_line(lang.derive) if lang.derive else None
        for task, splits in lang.tasks.items():
            stored = get_task(task).gathered
            for split, file in splits.items():
                items = _read(task, file)
                path = out / stored.pattern.format(lang=lang.name, split=split)
                path.parent.mkdir(parents=True, exist_ok=True)
                stored.write([item.respelled(spell) for item in items] if spell else items, path)
        target = out / "lexicon" / f"{config.source}-{lang.name}.txt"
        if lang.derive and lang.text:
            _derived_lexicon(lang, config.fake_lexicon_words, target)
        elif lang.lexicon:
            target.write_bytes(Path(lang.lexicon).read_bytes())
