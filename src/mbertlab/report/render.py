"""Render a report as Markdown (with PNG files beside it) and as one self-contained HTML page."""
from __future__ import annotations

import base64
import html
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mbertlab.report.tables import Table, markdown_table, markdown_text


@dataclass
class Plot:
    title: str
    png: bytes
    name: str  # file stem


@dataclass
class Report:
    title: str
    description: str
    tables: list[Table]
    plots: list[Plot] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    configs: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    ran_on: str = ""  # one line: the precision, device and processor the numbers were computed with


def file_stem(name: str) -> str:
    """A plot's name as a file name in the report's folder: names can hold a spec's words (a language set's
    name), so anything but letters, digits, '_', '.' and '-' becomes '-' and no '..' or leading '.' is left."""
    return re.sub(r"\.{2,}", "-", re.sub(r"[^A-Za-z0-9_.-]", "-", name)).lstrip(".")[:100] or "plot"


def render_markdown(report: Report, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = [f"# {markdown_text(report.title)}", "", markdown_text(report.description), ""]
    parts += [markdown_table(t) for t in report.tables]
    for plot in report.plots:
        stem = file_stem(plot.name)
        (out_dir / f"{stem}.png").write_bytes(plot.png)
        parts += [f"![{markdown_text(plot.title)}]({stem}.png)", ""]
    if report.notes:
        parts += ["## Notes", ""] + [f"- {markdown_text(n)}" for n in report.notes] + [""]
    parts += ["## Versions", ""] + ([markdown_text(report.ran_on), ""] if report.ran_on else [])
    parts += ["```json", json.dumps(report.versions, indent=1, sort_keys=True), "```", ""]
    parts += ["## Configs", ""]
    for label, config in report.configs.items():
        parts += [f"<details><summary>{markdown_text(label)}</summary>", "", "```json",
                  json.dumps(config, indent=1, sort_keys=True), "```", "</details>", ""]
    path = out_dir / "report.md"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


CSS = """
body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}
table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #bbb;padding:4px 10px;text-align:right}
th{background:#eee}td{white-space:nowrap}td:first-child,th:first-child{text-align:left;white-space:normal}pre{background:#f6f6f6;padding:8px;overflow:auto}
img{max-width:100%}.note{color:#555}
"""


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                   for row in table.as_text_rows())
    note = f"<p class='note'>{html.escape(table.note)}</p>" if table.note else ""
    return f"<h3>{html.escape(table.title)}</h3><table><tr>{head}</tr>{body}</table>{note}"


def render_html(report: Report, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(report.title)}</title>",
             f"<style>{CSS}</style></head><body><h1>{html.escape(report.title)}</h1>",
             f"<p>{html.escape(report.description)}</p>"]
    parts += [_html_table(t) for t in report.tables]
    for plot in report.plots:
        data = base64.b64encode(plot.png).decode("ascii")
        parts.append(f"<h3>{html.escape(plot.title)}</h3><img alt='{html.escape(plot.title)}' "
                     f"src='data:image/png;base64,{data}'>")
    if report.notes:
        parts.append("<h2>Notes</h2><ul>" + "".join(f"<li>{html.escape(n)}</li>" for n in report.notes) + "</ul>")
    versions = json.dumps(report.versions, indent=1, sort_keys=True)
    ran_on = f"<p>{html.escape(report.ran_on)}</p>" if report.ran_on else ""
    parts.append("<h2>Versions</h2>" + ran_on + "<pre>" + html.escape(versions) + "</pre>")
    parts.append("<h2>Configs</h2>")
    for label, config in report.configs.items():
        parts.append(f"<details><summary>{html.escape(label)}</summary><pre>"
                     f"{html.escape(json.dumps(config, indent=1, sort_keys=True))}</pre></details>")
    parts.append("</body></html>")
    path = out_dir / "report.html"
    path.write_text("\n".join(parts), encoding="utf-8")
    return path

