"""A paper's own numbers and stated settings (`papers/<key>/published.yaml`), transcribed from its text.

Reports put the paper's number beside ours; a test holds each paper-scale spec to the settings the
paper states. Schema:

    paper: "K et al. 2020. Cross-lingual ability of multilingual BERT. ICLR"
    source: k2020-cross-lingual-ability-of-multilingual-bert.txt   # in ../shared/papers/
    numbers:
      - {table: "Table 1", row: "Fake-English–Spanish, XNLI", column: "Fake-Eng", value: 69.7, unit: "%"}
      - {table: "Figure 2", row: "...", column: "...", value: null, note: "only in the figure"}
    settings:
      - {name: "pretraining batch size", value: 32, section: "§3.1", quote: "...", spec: "pretrain.batch_size"}
      - {name: "...", value: 2000000, section: "...", quote: "...", spec: "...", deviation: "why we differ"}

`spec` is a dotted path into the study's validated settings at `paper` scale; a setting with a `deviation`
is one the paper-scale spec does not mirror, and says why.
"""
from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from pydantic import Field, ValidationError, model_validator

from mbertlab.config import Config, format_validation_error, read_yaml
from mbertlab.errors import ConfigError


class PublishedNumber(Config):
    table: str = Field(description="'Table 2' or 'Figure 3', as the paper numbers it.")
    row: str
    column: str
    value: float | None = Field(description="As printed in the paper; null when only a figure shows it.")
    unit: str = Field("", description="The paper's unit: '%', 'F1', 'accuracy', 'MRR', 'LAS' ...")
    pm: float | None = Field(None, ge=0, description="The ± the paper prints beside it, if any.")
    note: str = ""

    @model_validator(mode="after")
    def _figures_say_why(self):
        if self.value is None and not self.note:
            raise ValueError("a number without a value needs a 'note' (e.g. 'only in the figure')")
        return self

    def text(self) -> str:
        """The paper's number as a report cell ('69.7', '69.7 ± 0.4'), or '—' when the paper gives none."""
        if self.value is None:
            return "—"
        return f"{self.value:g}" + (f" ± {self.pm:g}" if self.pm is not None else "")


class PaperSetting(Config):
    name: str
    value: Any
    section: str
    quote: str = Field(description="The paper's sentence stating it, verbatim.")
    spec: str | None = Field(None, description="Dotted path of the setting in the paper-scale spec.")
    deviation: str = Field("", description="Why the paper-scale spec does not mirror it, if it does not.")


class Published(Config):
    paper: str
    source: str = Field(description="The paper's text file in ../shared/papers/.")
    numbers: list[PublishedNumber]
    settings: list[PaperSetting] = []

    def number(self, table: str, row: str, column: str) -> PublishedNumber | None:
        for n in self.numbers:
            if (n.table, n.row, n.column) == (table, row, column):
                return n
        return None

    def cell(self, table: str, row: str, column: str) -> str:
        """The paper's number for a report cell; '—' where the paper has none."""
        n = self.number(table, row, column)
        return n.text() if n is not None else "—"

    def rows(self, table: str) -> list[str]:
        """The paper's row labels of one table, in its order."""
        return list(dict.fromkeys(n.row for n in self.numbers if n.table == table))


def published_path(key: str) -> Path:
    return Path(str(resources.files("mbertlab") / "papers" / key / "published.yaml"))


def read_published(path: Path) -> Published:
    try:
        return Published.model_validate(read_yaml(path))
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, str(path))) from None


@cache
def load_published(key: str) -> Published | None:
    """The paper's published.yaml, or None for a design without one (a user's own study)."""
    path = published_path(key)
    return read_published(path) if path.is_file() else None
