"""Two studies' tables side by side with the difference B − A per cell, and how each finding moved.

A side is `name@scale` (a spec at a scale: the design's own tables over the rows of that scale's
artifacts, plus its scorecard) or a bare study name (every results.db row with that `study`, one
table by task and languages; two scales run in one workdir share a name, so prefer `name@scale`).
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mbertlab.errors import ConfigError
from mbertlab.report.render import Report
from mbertlab.report.tables import Cell, Table, markdown_table, markdown_text
from mbertlab.store.results import ResultRow
from mbertlab.studies.jobs import RunContext

KEY_COLUMNS = ("task", "model", "mode", "train_lang", "test_lang", "split")


@dataclass
class Side:
    ref: str
    tables: list[Table]
    verdicts: list  # scorecard Verdicts; empty for a bare study name


def rows_table(rows: list[ResultRow], title: str = "results") -> Table:
    """Every metric of a study's rows as mean ± std over seeds, by the key columns that are set."""
    keys = [k for k in KEY_COLUMNS if any(getattr(r, k) for r in rows)]
    metrics = sorted({r.metric for r in rows})
    cells: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        cells[tuple(getattr(r, k) for k in keys)][r.metric].append(r.value)
    body = [[*label, *(Cell(by[m], 1.0, 4) for m in metrics)] for label, by in sorted(cells.items())]
    return Table(title, [*keys, *metrics], body)


def load_side(ref: str, ctx: RunContext) -> Side:
    if "@" in ref:
        from mbertlab.studies.designs import get_design
        from mbertlab.studies.report import study_rows
        from mbertlab.studies.runner import spec_section
        from mbertlab.studies.scorecard import evaluate_findings, parse_findings
        from mbertlab.studies.spec import load_spec

        name, scale = ref.split("@", 1)
        spec = load_spec(name, scale)
        tables = get_design(spec.design).report(spec, ctx.store, ctx.results).tables
        findings = parse_findings(spec_section(spec, "findings"), spec.source)
        verdicts = evaluate_findings(findings, study_rows(spec, ctx), ctx.store.workdir) if findings else []
        return Side(ref, tables, verdicts)
    rows = ctx.results.query(study=ref)
    if not rows:
        known = sorted({r.study for r in ctx.results.query()})
        raise ConfigError(f"study {ref!r}: no rows in {ctx.results.path} (studies there: {', '.join(known) or 'none'};"
                          " or give name@scale for a spec)")
    return Side(ref, [rows_table(rows)], [])


def _numeric(table: Table, col: int) -> bool:
    return any(isinstance(row[col], Cell) for row in table.rows if col < len(row))


def _delta(a: Cell | str | None, b: Cell | str | None) -> str:
    if not (isinstance(a, Cell) and isinstance(b, Cell) and a.values and b.values):
        return "—"
    return f"{(b.mean - a.mean) * b.scale:+.{b.digits}f}"


def diff_tables(a: Table, b: Table, names: tuple[str, str] = ("A", "B")) -> Table:
    """Rows matched by their label cells, numeric columns by header: A, B and Δ = B − A for each."""
    labels = [c for i, c in enumerate(a.columns)
              if not _numeric(a, i) and not (c in b.columns and _numeric(b, b.columns.index(c)))]
    numbers = [c for c in a.columns if c not in labels]
    numbers += [c for c in b.columns if c not in a.columns and c not in labels]

    def index(table: Table) -> dict[tuple, dict[str, Cell | str]]:
        out = {}
        for row in table.rows:
            cells = dict(zip(table.columns, row))
            out[tuple(str(cells.get(c, "")) for c in labels)] = cells
        return out

    ia, ib = index(a), index(b)
    body = []
    for key in list(ia) + [k for k in ib if k not in ia]:
        ca, cb = ia.get(key, {}), ib.get(key, {})
        row: list[Cell | str] = list(key)
        for col in numbers:
            row += [ca.get(col, "—"), cb.get(col, "—"), _delta(ca.get(col), cb.get(col))]
        body.append(row)
    columns = labels + [f"{c} [{n}]" for c in numbers for n in (*names, "Δ")]
    note = f"Δ = {names[1]} − {names[0]} (difference of means)." + (f" {a.note}" if a.note else "")
    return Table(a.title, columns, body, note)


def _num(x: float | None) -> str:
    return "—" if x is None else f"{x:+.4g}"


def findings_table(a: Side, b: Side) -> Table:
    """Each finding's verdict and effect under A and under B."""
    va, vb = {v.id: v for v in a.verdicts}, {v.id: v for v in b.verdicts}
    body = []
    for fid in list(va) + [i for i in vb if i not in va]:
        x, y = va.get(fid), vb.get(fid)
        ex, ey = (x.effect if x else None), (y.effect if y else None)
        body.append([fid, (x or y).claim, x.state if x else "—", y.state if y else "—", _num(ex), _num(ey),
                     _num(ey - ex) if ex is not None and ey is not None else "—"])
    return Table("Reproduction scorecard", ["finding", "paper's claim", f"verdict [{a.ref}]", f"verdict [{b.ref}]",
                                            f"effect [{a.ref}]", f"effect [{b.ref}]", "Δ effect"], body)


def compare(ref_a: str, ref_b: str, ctx: RunContext) -> Report:
    a, b = load_side(ref_a, ctx), load_side(ref_b, ctx)
    tb = {t.title: t for t in b.tables}
    tables = [diff_tables(t, tb[t.title], (ref_a, ref_b)) for t in a.tables if t.title in tb]
    only = [f"only in {ref_a}: {t.title}" for t in a.tables if t.title not in tb]
    only += [f"only in {ref_b}: {t.title}" for t in b.tables if t.title not in {x.title for x in a.tables}]
    if a.verdicts or b.verdicts:
        tables.append(findings_table(a, b))
    return Report(f"{ref_a} vs {ref_b}", f"Each cell: {ref_a}, {ref_b} and Δ = {ref_b} − {ref_a}.", tables,
                  notes=only)


def markdown(report: Report) -> str:
    """The comparison as Markdown text (for stdout; `render_html` gives the page)."""
    parts = [f"# {markdown_text(report.title)}", "", markdown_text(report.description), ""]
    parts += [markdown_table(t) for t in report.tables]
    return "\n".join(parts + [f"- {markdown_text(n)}" for n in report.notes])
