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

`spec` is a dotted path into the study's validated settings at `paper` scale (`conditions.<name>.x` picks a
list entry by its name); a setting with a `deviation`
is one the paper-scale spec does not mirror, and says why.
"""
from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError, model_validator

from mbertlab.config import Config, format_validation_error, read_yaml
from mbertlab.errors import ConfigError
from mbertlab.yaml_loader import UniqueKeyLoader


class PrintedFloat(float):
    """A float that keeps the digits it was written with in the YAML ('45.0' stays '45.0' in a report)."""

    printed: str


class _PrintedLoader(UniqueKeyLoader):
    """Safe YAML whose floats remember their text."""


def _printed_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    number = PrintedFloat(loader.construct_yaml_float(node))
    number.printed = node.value
    return number


_PrintedLoader.add_constructor("tag:yaml.org,2002:float", _printed_float)


def _as_printed(value: Any) -> str:
    return value.printed if isinstance(value, PrintedFloat) else "" if value is None else f"{value:g}"


class PublishedNumber(Config):
    table: str = Field(description="'Table 2' or 'Figure 3', as the paper numbers it.")
    row: str
    column: str
    value: float | None = Field(description="As printed in the paper; null when only a figure shows it.")
    unit: str = Field("", description="The paper's unit: '%', 'F1', 'accuracy', 'MRR', 'LAS' ...")
    pm: float | None = Field(None, ge=0, description="The ± the paper prints beside it, if any.")
    note: str = ""
    printed: str = Field("", exclude=True, description="value as written (the paper's digits).")
    pm_printed: str = Field("", exclude=True, description="pm as written.")

    @model_validator(mode="before")
    @classmethod
    def _keep_digits(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("printed"):
            data = {**data, "printed": _as_printed(data.get("value")), "pm_printed": _as_printed(data.get("pm"))}
        return data

    @model_validator(mode="after")
    def _figures_say_why(self):
        if self.value is None and not self.note:
            raise ValueError("a number without a value needs a 'note' (e.g. 'only in the figure')")
        return self

    def text(self) -> str:
        """The paper's number as a report cell ('69.7', '69.7 ± 0.4'), or '—' when the paper gives none."""
        if self.value is None:
            return "—"
        return self.printed + (f" ± {self.pm_printed}" if self.pm is not None else "")


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
        return Published.model_validate(read_yaml(path, _PrintedLoader))
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, str(path))) from None


@cache
def load_published(key: str) -> Published | None:
    """The paper's published.yaml, or None for a design without one (a user's own study)."""
    path = published_path(key)
    return read_published(path) if path.is_file() else None
