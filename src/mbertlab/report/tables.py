"""Table model: cells hold every seed's value so the report can show mean ± std."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field


@dataclass
class Cell:
    values: list[float] = field(default_factory=list)
    scale: float = 1.0  # e.g. 100 to show accuracies in %
    digits: int = 1

    @property
    def mean(self) -> float:
        return sum(self.values) / len(self.values) if self.values else math.nan

    @property
    def std(self) -> float:
        """Sample standard deviation (n-1); 0 for a single value."""
        n = len(self.values)
        if n < 2:
            return 0.0
        m = self.mean
        return math.sqrt(sum((v - m) ** 2 for v in self.values) / (n - 1))

    def __str__(self) -> str:
        if not self.values:
            return "—"
        mean = f"{self.mean * self.scale:.{self.digits}f}"
        if len(self.values) == 1:
            return mean
        return f"{mean} ± {self.std * self.scale:.{self.digits}f}"


@dataclass
class Table:
    title: str
    columns: list[str]
    rows: list[list[Cell | str]]
    note: str = ""

    def as_text_rows(self) -> list[list[str]]:
        return [[str(c) for c in row] for row in self.rows]


def delta(a: Cell, b: Cell) -> Cell:
    """Per-seed difference a − b when both have the same seeds' values, else difference of means."""
    if len(a.values) == len(b.values) and a.values:
        return Cell([x - y for x, y in zip(a.values, b.values)], a.scale, a.digits)
    if a.values and b.values:
        return Cell([a.mean - b.mean], a.scale, a.digits)
    return Cell([], a.scale, a.digits)


HTML_START = re.compile(r"<(?=[A-Za-z/!?])")  # what opens a tag, comment or declaration in CommonMark


def markdown_text(text: str) -> str:
    """User text (names, descriptions, labels) for Markdown, where raw HTML passes through (a description's
    `<img onerror=...>` would run in a viewer): every '<' that could open HTML becomes `&lt;`, as in the HTML
    report; a '<' before a number (`<0.001`) or a '&' stays as written, since neither can open a tag."""
    return HTML_START.sub("&lt;", text)


def _cell(text: str) -> str:
    return markdown_text(text).replace("|", "\\|")  # a bare '|' would split the cell


def markdown_table(table: Table) -> str:
    lines = [f"### {markdown_text(table.title)}", "", "| " + " | ".join(map(_cell, table.columns)) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in table.as_text_rows()]
    if table.note:
        lines += ["", markdown_text(table.note)]
    return "\n".join(lines) + "\n"
