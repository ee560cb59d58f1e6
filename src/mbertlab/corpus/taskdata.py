"""The taskdata stage: task files of real languages gathered into one layout (the generated one's),
respelled word by word for derived languages (fake script, ...), and gold lexicons for word retrieval.

Layout: `<lang>/upos/<split>.tsv` (token<TAB>UPOS), `<lang>/ner/<split>.txt` (token<TAB>BIO),
`<lang>/xnli/<split>.tsv` (premise<TAB>hypothesis<TAB>label), `lexicon/<source>-<lang>.txt` (MUSE). A derived
language's lexicon maps the base's most frequent words to their respelling (the gold alignment K et al.'s
Fake-English has by construction).
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Literal

from pydantic import Field

from mbertlab.config import Config, ContentPath, LanguageName
from mbertlab.corpus.manipulations import WORD_MAPS, WordMapName, respell_line
from mbertlab.errors import DataError
from mbertlab.formats.records import PairExample, TaggedSentence
from mbertlab.store.layout import TASK_FILES


class TaskFile(Config):
    path: ContentPath
    format: Literal["conllu", "udpos", "ner", "xnli"]
    v1_to_v2: bool = Field(False, description="CoNLL-U: map UD v1 UPOS (CONJ, ...) to v2 on reading. Off: a v1 "
                           "tag is a one-line error naming file and line, never a silent change.")
    start: int = Field(0, ge=0, description="Keep items (sentences, pairs) [start, end) of the file.")
    end: int | None = Field(None, ge=1)


class TaskLanguage(Config):
    name: LanguageName
    derive: WordMapName | None = Field(None, description="A word-by-word manipulation (corpus/manipulations.py "
                                       "WORD_MAPS) that respells every word of the files: a derived language.")
    upos: dict[str, TaskFile] = Field(default_factory=dict, description="split -> file")
    ner: dict[str, TaskFile] = Field(default_factory=dict, description="split -> file")
    xnli: dict[str, TaskFile] = Field(default_factory=dict, description="split -> file")
    lexicon: ContentPath | None = Field(None, description="MUSE dictionary source->this language.")
    text: list[ContentPath] = Field(default_factory=list, description="Text to take a derived lexicon's words "
                                    "from.")


class TaskDataConfig(Config):
    source: str
    languages: list[TaskLanguage]
    fake_lexicon_words: int = 3000  # words of a derived language's lexicon


def _read(file: TaskFile) -> list[TaggedSentence] | list[PairExample]:
    """The file's items [start, end); a range past the file's end is an error, never a short split."""
    from mbertlab.formats.conllu import read_conllu
    from mbertlab.formats.ner_columns import read_ner
    from mbertlab.formats.udpos import read_udpos_tsv
    from mbertlab.formats.xnli import read_xnli

    if file.format == "conllu":
        items: list = [TaggedSentence(s.forms, s.upos) for s in read_conllu(file.path, v1_to_v2=file.v1_to_v2)]
    elif file.format == "xnli":
        items = list(read_xnli(file.path))
    else:
        items = list(read_udpos_tsv(file.path) if file.format == "udpos" else read_ner(file.path))
    end = len(items) if file.end is None else file.end
    if end > len(items) or file.start >= end:
        raise DataError(file.path, None, f"found {len(items)} items; expected items [{file.start}, {end}) to exist")
    return items[file.start:end]


def _write(items: list[TaggedSentence] | list[PairExample], path: Path, derive: str | None) -> None:
    spell = respell_line(derive) if derive else str
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="\n") as f:
        for item in items:
            if isinstance(item, PairExample):
                f.write(f"{spell(item.premise)}\t{spell(item.hypothesis)}\t{item.label}\n")
                continue
            for token, tag in zip(item.tokens, item.tags):
                f.write(f"{spell(token)}\t{tag}\n")
            f.write("\n")


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
        for task, (pattern, _) in TASK_FILES["taskdata"].items():
            for split, file in getattr(lang, task).items():
                _write(_read(file), out / pattern.format(lang=lang.name, split=split), lang.derive)
        target = out / "lexicon" / f"{config.source}-{lang.name}.txt"
        if lang.derive and lang.text:
            _derived_lexicon(lang, config.fake_lexicon_words, target)
        elif lang.lexicon:
            target.write_bytes(Path(lang.lexicon).read_bytes())
