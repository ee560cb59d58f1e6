"""Where a spec's intent cannot hold, said before it runs (`study plan` and `study validate`).

- a pretraining whose parameter count differs by more than `TOLERANCE` from the one stated for its row: the
  spec's own table level ("7.87M", or "5.8%" of the row at "100.0%" in a table of parameter shares), or at
  paper scale the paper's (a "Parameters" column or a row named "20.05M, ..." in published.yaml, or a
  setting named "... parameters" for the paper's model);
- a tokenizer asked for more pieces than its text can reach;
- pretrainings whose steps `epochs` resolves at run time from a text whose size the plan does not know (it
  counts the spec's `steps`, an estimate; where it knows the text it resolves them as the loop does);
- pretrainings that pass over a language's text more than `PASSES_WARN` times;
- a `--set` that changes no stage.
"""
from __future__ import annotations

import re
from typing import Any, Iterable

from mbertlab.studies.spec import StudySpec

PretrainEstimate = Any  # studies.plan.PretrainEstimate (plan imports this module)

TOLERANCE = 0.02
# Passes over a language's text above which `study plan` warns: a model that sees its text this often memorises
# it (wd2020's lab encoders of the 500-sentence languages overfit after ~1,500 steps of 64 x 16 tokens, about
# 100 passes over their ~15,000 tokens: back above the unigram entropy by 3,000).
PASSES_WARN = 100
MILLIONS = re.compile(r"^(\d+(?:\.\d+)?)M\b")
SHARE = re.compile(r"^(\d+(?:\.\d+)?)%$")


def plan_warnings(spec: StudySpec, pretrains: list[PretrainEstimate], shortfalls: Iterable[tuple[str, int, int]],
                  overrides: Iterable[str] = ()) -> list[str]:
    warnings = [f"{label}: vocab_size asks for {asked:,} pieces with the specials, its text reaches {reached:,}: "
                "every parameter count that assumed the full vocabulary is off" for label, asked, reached in shortfalls]
    warnings += parameter_warnings(spec, pretrains)
    by_epochs = [est for est in pretrains if est.epochs is not None and not est.passes]  # text size unknown
    warnings += [f"{len(by_epochs)} pretrainings train `epochs` passes over their text: each resolves its steps "
                 "from its shards when it runs, and the plan counts the spec's `steps` (an estimate) for them"
                 ] if by_epochs else []
    warnings += passes_warnings(pretrains)
    warnings += run_only_warnings(spec)
    warnings += [f"--set {o}: changes no stage of the study" for o in unused_overrides(spec, overrides)]
    return warnings


def passes_warnings(pretrains: list[PretrainEstimate]) -> list[str]:
    """One line: how many pretrainings see a language's text more than PASSES_WARN times, the most of them."""
    over = [(n, est.label, lang) for est in pretrains for lang, n in est.passes.items() if n > PASSES_WARN]
    if not over:
        return []
    n, label, lang = max(over)
    runs = len({label for _, label, _ in over})
    return [f"{runs} pretrainings pass over a language's text more than {PASSES_WARN} times (most: {label}, "
            f"{n:,.0f} passes over {lang}): a model that sees its text so often memorises it"]


def run_only_warnings(spec: StudySpec) -> list[str]:
    """A design that builds a share of its conditions at this scale (`run_only`) says so: the tables' other rows
    and the findings that read them are reported not run, which a reader of the plan should know first."""
    only, conditions = getattr(spec.settings, "run_only", None), getattr(spec.settings, "conditions", [])
    if only is None:
        return []
    return [f"run_only: {len(only)} of {len(conditions)} conditions are built at this scale ({', '.join(only)}); "
            "the tables' other rows and the findings that read them are reported not run"]


def parameter_warnings(spec: StudySpec, pretrains: list[PretrainEstimate]) -> list[str]:
    from mbertlab.studies.runner import spec_section

    by_condition: dict[str, PretrainEstimate] = {}
    for est in pretrains:
        by_condition.setdefault(est.tags.get("condition", ""), est)
    out, seen = [], set()
    for table in spec_section(spec, "tables") or []:
        for stated, est, where in _stated_counts(spec, table, by_condition):
            if abs(est.parameters - stated) > TOLERANCE * stated and (id(est), round(stated, -4)) not in seen:
                seen.add((id(est), round(stated, -4)))  # a row's level and the paper's row often state one count
                out.append(f"{where}: {est.parameters / 1e6:.4g}M parameters ({est.layers} layers, hidden "
                           f"{est.hidden}, vocabulary {est.vocab:,}), stated {stated / 1e6:.4g}M "
                           f"({est.parameters / stated - 1:+.0%})")
    if spec.scale == "paper":
        out += _paper_total_warnings(spec, pretrains)
    return out


def _stated_counts(spec: StudySpec, table: dict[str, Any], by_condition: dict[str, PretrainEstimate]):
    """(stated parameters, the row's pretraining estimate, where it is stated) for each row of a spec table."""
    from mbertlab.studies.published import load_published

    rows = [r for r in table.get("rows") or [] if isinstance(r, dict) and r.get("condition") in by_condition]
    title = str(table.get("title", ""))
    base = next((by_condition[r["condition"]] for r in rows if str(r.get("level", "")) == "100.0%"), None)
    shares = str(table.get("factor", "")).startswith("parameters")
    published = load_published(spec.design) if spec.scale == "paper" else None
    paper_table = (table.get("paper") or {}).get("table")
    for row in rows:
        est, level = by_condition[row["condition"]], str(row.get("level", ""))
        where = f"table {title!r}, row {row['condition']!r}"
        if MILLIONS.match(level):
            yield float(MILLIONS.match(level)[1]) * 1e6, est, f"{where} (its level {level})"
        elif shares and SHARE.match(level) and base is not None:
            yield float(SHARE.match(level)[1]) / 100 * base.parameters, est, f"{where} (its level {level} of the base)"
        for name in (row.get("paper") or []) if published is not None else []:
            stated = _published_count(published, paper_table, str(name))
            if stated is not None:
                yield stated, est, f"{where} (the paper's {paper_table}, {name!r})"


def _published_count(published, table: str | None, row: str) -> float | None:
    """The parameters the paper prints for a row: its 'Parameters' column, or the count its name begins with."""
    for n in published.numbers:
        if n.table == table and n.row == row and "parameters" in n.column.lower() and n.value is not None:
            return float(n.value) * (1e6 if n.unit == "M" else 1)
    match = MILLIONS.match(row)
    return float(match[1]) * 1e6 if match else None


def _paper_total_warnings(spec: StudySpec, pretrains: list[PretrainEstimate]) -> list[str]:
    """Settings such as 'total parameters: 51193168' against the paper scale's base encoder (its first)."""
    from mbertlab.studies.published import load_published

    published = load_published(spec.design)
    if published is None or not pretrains:
        return []
    base = pretrains[0]
    out = []
    for setting in published.settings:
        if "parameters" in setting.name.lower() and isinstance(setting.value, (int, float)) and setting.value > 1e5:
            if abs(base.parameters - setting.value) > TOLERANCE * setting.value:
                out.append(f"{base.label}: {base.parameters:,} parameters (vocabulary {base.vocab:,}), the paper "
                           f"states {setting.value:,.0f} ({setting.section}: {setting.quote!r})")
    return out


def unused_overrides(spec: StudySpec, overrides: Iterable[str]) -> list[str]:
    """The overrides without which the study's stages are the same (one expansion of the study per override)."""
    from mbertlab.studies.runner import study_jobs
    from mbertlab.studies.spec import load_spec

    from mbertlab.errors import ConfigError

    def keys(rest: list[str]) -> set | None:
        try:
            return {j.key for j in study_jobs(load_spec(spec.source, spec.scale, rest))}
        except ConfigError:  # the spec needs this override (e.g. heads that divide only the overridden hidden)
            return None

    overrides = list(overrides)
    full = {j.key for j in study_jobs(spec)} if overrides else set()
    return [o for i, o in enumerate(overrides) if keys(overrides[:i] + overrides[i + 1:]) == full]
