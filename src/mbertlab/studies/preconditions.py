"""Checks: the preconditions under which a finding's verdict means something, evaluated before the claim.

A finding lists `checks:`; each is tested on every side of the finding (the rows it compares) and a failing
one makes the verdict *uninformative*, with the check's numbers. Kinds:
- learned: the model's source (or in-language) score, picked by overriding the side's filters with `select`,
  above each control in `against` (random-init, majority) by `margin`, at every seed and language (the
  control of the same languages and seed where it has one): a model that did not learn its task transfers
  nothing. A side that is itself one of those controls is not checked (it is the baseline).
- left_plateau: every language's dev MLM loss of the pretraining behind the rows, at the checkpoint the rows
  used (a row's selected `checkpoint` step: wd2020's best checkpoint, Fig. 4's each step; else the final one),
  at least `nats` below the unigram entropy of its training tokens (a model at the plateau predicts word
  frequencies only).
- control: the control's rows (`against`) exist and the side's mean is above theirs by `margin`.
- surface: a classifier on surface cues (lengths, word overlap) of the task files behind the rows stays within
  `margin` of `chance`: else the task is solved without reading the sentences.
- at_most, at_least: the rows `select` picks (overriding the side's filters) have their mean at most / at least
  `value`, e.g. "training size is itself significant" before "adding vocabulary adds nothing to it" means
  anything.
Artifacts are read through the rows' `artifact` paths, resolved under the study's workdir.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field

from mbertlab.config import Config
from mbertlab.store.results import SELECTED_RUN_KEYS, ResultRow
from mbertlab.studies.selection import SEL_HELP, Selection, label, merged, pick

ENCODERS_TRAINED_ELSEWHERE = ("hf_encoder", "static")


class _Check(Config):
    name: str = Field("", description="A label for the report (default: the kind).")


class Learned(_Check):
    kind: Literal["learned"]
    select: Selection = Field(default_factory=dict, description="Overrides of each side's filters that pick the "
                          "model's own source or in-language score, e.g. {test_lang: src}. " + SEL_HELP)
    against: list[Selection] = Field(min_length=1, description="Overrides that pick each control, e.g. "
                                     "[{control: random_init}, {control: majority}]; null drops a filter.")
    margin: float = Field(0.0, ge=0, description="Every seed above every control by more than this.")


class LeftPlateau(_Check):
    kind: Literal["left_plateau"]
    nats: float = Field(gt=0, description="Final dev loss at least this far below the unigram entropy.")


class Control(_Check):
    kind: Literal["control"]
    against: Selection = Field(description="Overrides of each side's filters that pick the control's rows.")
    margin: float = Field(0.0, ge=0, description="The side's mean above the control's by more than this.")


class Surface(_Check):
    kind: Literal["surface"]
    chance: float = Field(gt=0, lt=1, description="Chance accuracy of the task, e.g. 1/3 for XNLI.")
    margin: float = Field(0.05, gt=0, description="The surface-only accuracy within this of chance.")


class Bound(_Check):
    kind: Literal["at_most", "at_least"]
    select: Selection = Field(description="Overrides of each side's filters that pick the rows. " + SEL_HELP)
    value: float = Field(description="Their mean must be at most (at_most) or at least (at_least) this.")


Check = Annotated[Learned | LeftPlateau | Control | Surface | Bound, Field(discriminator="kind")]


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool | None  # None: the check could not be evaluated (its rows or artifacts are missing)
    text: str

    def __str__(self) -> str:
        mark = "passed" if self.passed else "failed" if self.passed is False else "not evaluated"
        return f"{self.name} {mark}: {self.text}"


def evaluate_checks(checks: list, sides: list[Selection], rows: list[ResultRow],
                    workdir: Path | None = None) -> list[CheckResult]:
    """Each check over the finding's sides (their full filters), worst side first in its text."""
    unique = list({json.dumps(s, sort_keys=True, default=str): s for s in sides}.values())
    out = []
    for check in checks:
        name = check.name or check.kind
        if isinstance(check, Learned):
            out.append(_learned(name, check, unique, rows))
        elif isinstance(check, Control):
            out.append(_control(name, check, unique, rows))
        elif isinstance(check, Bound):
            out.append(_bound(name, check, unique, rows))
        elif isinstance(check, LeftPlateau):
            out.append(_per_artifact(name, unique, rows, workdir, lambda p, steps: _plateau(check, p, steps),
                                     "pretrain"))
        else:
            out.append(_per_artifact(name, unique, rows, workdir, lambda p, _: _surface(check, p), "transfer"))
    return out


def _alike(control: list[ResultRow], row: ResultRow, overridden: Selection) -> list[ResultRow]:
    """The control's rows that carry the model row's own value of each tag on which they differ among
    themselves (lms2023's a100 is in both sets: its probe is compared with its own set's control). Not a tag:
    what the check overrides, and what a row records of its own selected run (the step a run chose)."""
    keys = {k for c in control for k in c.extra} - set(overridden) - SELECTED_RUN_KEYS
    for key in sorted(k for k in keys if k in row.extra and not k.startswith("row ")):
        if len({str(c.extra.get(key)) for c in control}) > 1:
            control = [c for c in control if str(c.extra.get(key)) == str(row.extra[key])] or control
    return control


def _control_value(control: list[ResultRow], row: ResultRow, overridden: Selection) -> float:
    """The control's score for a model's row: of the same train and test language and seed where the control
    has it, else of the same languages (a majority label is one run), else its mean; among those, the rows of
    the model row's own tags (`_alike`)."""
    found = control
    for key in ((row.train_lang, row.test_lang, row.seed), (row.train_lang, row.test_lang)):
        if matching := [c for c in control if (c.train_lang, c.test_lang, c.seed)[:len(key)] == key]:
            found = matching
            break
    found = _alike(found, row, overridden)
    return sum(c.value for c in found) / len(found)


def _is_control(side: Selection, check: Learned) -> bool:
    """A side that selects one of the check's controls (K et al.'s "better than random" compares a model with
    its random-init control): the control is the baseline, not a model that had to learn."""
    return any(f and all(side.get(k) == v for k, v in f.items()) for f in map(merged, check.against))


def _learned(name: str, check: Learned, sides: list[Selection], rows: list[ResultRow]) -> CheckResult:
    worst = None  # (model − control − margin, words)
    for side in sides:
        own = merged(side, check.select)
        if _is_control(own, check):
            continue
        model = pick(rows, own)
        if not model:
            return CheckResult(name, None, f"no rows for {label(own)}")
        for against in check.against:
            control = pick(rows, merged(own, against))
            if not control:
                return CheckResult(name, None, f"no rows for the control {label(merged(own, against))}")
            for r in model:
                c = _control_value(control, r, against)
                gap = r.value - c - check.margin
                if worst is None or gap < worst[0]:
                    worst = (gap, f"{label(own)}, seed {r.seed}: {r.value:.4g} vs "
                                  f"{label(against)} {c:.4g} ({r.value - c:+.4g}, needs > {check.margin:.4g})")
    if worst is None:
        return CheckResult(name, None, "every side is a control: no model to check")
    return CheckResult(name, worst[0] > 0, ("lowest: " if worst[0] > 0 else "") + worst[1])


def _control(name: str, check: Control, sides: list[Selection], rows: list[ResultRow]) -> CheckResult:
    worst = None
    for side in sides:
        own, control = pick(rows, side), pick(rows, merged(side, check.against))
        if not control:
            return CheckResult(name, None, f"no rows for the control {label(merged(side, check.against))}")
        a, b = (sum(r.value for r in x) / len(x) for x in (own, control))
        gap = a - b - check.margin
        if worst is None or gap < worst[0]:
            worst = (gap, f"{label(side)}: {a:.4g} vs {label(check.against)} {b:.4g} ({a - b:+.4g}, "
                          f"needs > {check.margin:.4g})")
    return CheckResult(name, worst[0] > 0, worst[1])


def _bound(name: str, check: Bound, sides: list[Selection], rows: list[ResultRow]) -> CheckResult:
    texts, passed = [], True
    for side in sides:
        picked = pick(rows, merged(side, check.select))
        if not picked:
            return CheckResult(name, None, f"no rows for {label(merged(side, check.select))}")
        mean = sum(r.value for r in picked) / len(picked)
        ok = mean <= check.value if check.kind == "at_most" else mean >= check.value
        passed &= ok
        texts.append(f"{label(check.select)}: {mean:.4g} {'≤' if check.kind == 'at_most' else '≥'} {check.value:.4g}"
                     + ("" if ok else " fails"))
    return CheckResult(name, passed, "; ".join(texts))


def artifact_dir(path: str, workdir: Path | None) -> Path:
    """An artifact's directory, `<stage>/<hash>` under the study's workdir (a moved workdir still resolves)."""
    p = Path(path)
    return workdir / p.parent.name / p.name if workdir is not None else p


def _inputs(directory: Path, workdir: Path | None) -> list[Path]:
    found = directory / "inputs.json"
    if not found.is_file():
        return []
    return [artifact_dir(i["path"], workdir) for i in json.loads(found.read_text(encoding="utf-8"))]


def _behind(top: Path, stages: tuple[str, ...], workdir: Path | None) -> list[Path]:
    """The artifacts of `stages` that `top` is or reads, however deep (a correlation reads transfers that read
    a pretraining), not looking past one that is found."""
    found, todo, seen = [], [top], set()
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        if d.parent.name in stages:
            found.append(d)
        else:
            todo += _inputs(d, workdir)
    return found


def _per_artifact(name: str, sides: list[Selection], rows: list[ResultRow], workdir: Path | None, measure,
                  stage: str) -> CheckResult:
    """`measure(directory, steps) -> (gap, words)` (a gap > 0 passes) over every `stage` artifact behind the rows,
    with the checkpoint steps the rows used of it (None: the final model)."""
    stages = (stage, *ENCODERS_TRAINED_ELSEWHERE) if stage == "pretrain" else (stage,)
    found: dict[Path, set] = {}
    for side in sides:
        for r in pick(rows, side):
            for d in _behind(artifact_dir(r.artifact, workdir), stages, workdir) if r.artifact else ():
                found.setdefault(d, set()).add(used_step(r))
    if not found:
        return CheckResult(name, None, f"no {stage} artifact behind the rows of {label(sides[0])}")
    results = [measure(d, steps) for d, steps in found.items()]
    missing = [words for gap, words in results if gap is None]
    if missing:
        return CheckResult(name, None, missing[0])
    gap, words = min(results, key=lambda x: x[0])
    return CheckResult(name, gap > 0, ("closest: " if gap > 0 else "") + words)


@lru_cache(maxsize=256)
def unigram_entropy(shards: Path, lang: str) -> float:
    """Entropy (nats) of the token-id frequencies of a language's training shard: the dev loss of a model that
    predicts every masked token from word frequencies alone."""
    import numpy as np

    counts = np.bincount(np.load(shards / f"{lang}.train.ids.npy", mmap_mode="r"))
    p = counts[counts > 0] / counts.sum()
    return float(-(p * np.log(p)).sum())


def used_step(row: ResultRow) -> int | None:
    """The pretraining checkpoint a row's model started from: its selected run's `checkpoint` (kept as `row
    checkpoint` where a tag of that name says `best`), or a `checkpoint` tag naming a step; None: the final one."""
    value = row.extra.get("row checkpoint", row.extra.get("checkpoint"))
    return int(value) if str(value).isdigit() else None


def final_dev_loss(pretrain: Path, step: int | None = None) -> dict[str, float]:
    """Each language's dev MLM loss at the last evaluated step of a pretraining (its metrics.jsonl), or at the
    last evaluated step up to `step` (a checkpoint's)."""
    last: dict[str, tuple[int, float]] = {}
    path = pretrain / "metrics.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if "lang" in rec and "loss" in rec and rec["step"] >= last.get(rec["lang"], (-1, 0.0))[0] and \
                    (step is None or rec["step"] <= step):
                last[rec["lang"]] = (rec["step"], rec["loss"])
    return {lang: loss for lang, (_, loss) in last.items()}


def _plateau(check: LeftPlateau, pretrain: Path,
             steps: set | frozenset = frozenset({None})) -> tuple[float | None, str]:
    """The worst language at the worst checkpoint the rows used."""
    if pretrain.parent.name in ENCODERS_TRAINED_ELSEWHERE:
        return math.inf, f"{pretrain.parent.name}/{pretrain.name}: an encoder not pretrained here"
    shards = next((d for d in _inputs(pretrain, pretrain.parent.parent) if d.parent.name == "shards"), None)
    losses = {step: final_dev_loss(pretrain, step) for step in steps}
    if not all(losses.values()) or shards is None:
        return None, f"pretrain/{pretrain.name}: no dev losses (metrics.jsonl) or no shards input"
    gaps = [(unigram_entropy(shards, lang) - loss, lang, loss, step)
            for step, by_lang in losses.items() for lang, loss in by_lang.items()]
    gap, lang, loss, step = min(gaps, key=lambda g: g[0])
    at = "" if step is None else f" (checkpoint {step})"
    return gap - check.nats, (f"pretrain/{pretrain.name} {lang}{at}: dev loss {loss:.3f} vs unigram entropy "
                              f"{loss + gap:.3f} nats ({gap:.3f} below, needs ≥ {check.nats:g})")


def _surface(check: Surface, transfer: Path) -> tuple[float | None, str]:
    config = json.loads((transfer / "config.json").read_text(encoding="utf-8"))
    data = next((d for d in _inputs(transfer, transfer.parent.parent) if d.parent.name not in
                 ("pretrain", *ENCODERS_TRAINED_ELSEWHERE)), None)
    if data is None or config.get("task") != "xnli":
        return None, f"transfer/{transfer.name}: no XNLI data input"
    train = data / config["train"][0]["path"]
    tests = [data / f["path"] for f in config["evaluate"] if f.get("split") == "test" and not f.get("hypothesis_path")]
    scores = [(_surface_accuracy(train, test), test) for test in tests]
    acc, test = max(scores, key=lambda x: abs(x[0] - check.chance))
    where = test.relative_to(data)
    return check.margin - abs(acc - check.chance), (f"surface-only accuracy {acc:.3f} on {where} "
                                                    f"(chance {check.chance:.3f} ± {check.margin:g})")


@lru_cache(maxsize=256)
def _surface_accuracy(train: Path, test: Path) -> float:
    from mbertlab.analysis.surface import surface_baseline_accuracy

    return surface_baseline_accuracy(train, test)
