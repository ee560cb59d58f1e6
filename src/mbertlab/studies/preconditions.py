"""Checks: the preconditions under which a finding's verdict means something, evaluated before the claim.

A finding lists `checks:`; each is tested on every side of the finding (the rows it compares) and a failing
one makes the verdict *uninformative*, with the check's numbers. Kinds:
- learned: the model's source (or in-language) score, picked by overriding the side's filters with `select`,
  above each control in `against` (random-init, majority) by more than `margin`, by a one-sided test at `alpha`
  over the seeds (and the test set's sampling error, given its size `n_test`: studies/gaps.py), in every
  language (against the control of the same languages and tags): a model that did not learn its task transfers
  nothing. A side that is itself one of those controls is not checked (it is the baseline).
- transfers: the zero-shot target score (the side's rows, or those `select` picks) above the random-init
  control's target (`against`) by more than `margin`, by the same one-sided test: a target at chance has no
  effect to show, and an equality of two chance-level targets, or a Δ that is the source minus chance, says
  nothing about transfer. Every side must pass (an intersection–union test: no correction for their number).
- headroom: the scores compared (each side's mean, or of the rows `select` picks) are not all within
  `distance` of the metric's `ceiling`, nor all within `distance` of `chance`: scores stuck at a bound cannot
  move, so neither a difference nor its absence says anything.
- left_plateau: every language's dev MLM loss of the pretraining behind the rows, at the checkpoint the rows
  used (a row's selected `checkpoint` step: wd2020's best checkpoint, Fig. 4's each step; else the final one),
  at least `nats` below the loss of the best predictor that ignores context under the run's own masking
  (analysis/plateau.py: with 80/10/10 masking it sits about 0.1·H − 0.14 nats below the unigram entropy H, since
  a shown token is often the answer), computed from the language's training tokens: a model at that plateau
  learned no context.
- control: the control's rows (`against`) exist and the side's mean is above theirs by `margin`.
- surface: a classifier on surface cues (lengths, word overlap) of the task files behind the rows stays within
  `margin` of `chance`: else the task is solved without reading the sentences.
- rises: a manipulation took effect: the mean of the rows `select` picks rises over the levels of `by` (e.g. the
  teachers' MRR with their corpus size), each step by more than `margin`, by the same one-sided test at `alpha`
  (with fewer than 3 seeds a level, by the means themselves, said so): a claim about a manipulation means
  nothing where the manipulation itself did not move the model.
- at_most, at_least: the rows `select` picks (overriding the side's filters) have their mean at most / at least
  `value`, e.g. "training size is itself significant" before "adding vocabulary adds nothing to it" means
  anything.
Artifacts are read through the rows' `artifact` paths, resolved under the study's workdir, or replayed from a
recorded run's answers (analysis/artifact_facts.py).
"""
from __future__ import annotations

import json
import math
from typing import Annotated, Any, Literal

from pydantic import Field

from mbertlab.analysis.artifact_facts import ArtifactFacts, NotRecorded
from mbertlab.config import Config
from mbertlab.store.results import ResultRow
from mbertlab.studies.gaps import CheckResult, gap_checks, headroom, rises
from mbertlab.studies.selection import SEL_HELP, Selection, label, merged, pick

ENCODERS_TRAINED_ELSEWHERE = ("hf_encoder", "static")


class _Check(Config):
    name: str = Field("", description="A label for the report (default: the kind).")


class _Gap(_Check):
    select: Selection = Field(default_factory=dict, description="Overrides of each side's filters that pick the "
                              "model's score checked, e.g. {test_lang: src}. " + SEL_HELP)
    margin: float = Field(0.0, ge=0, description="The model's mean above the control's by more than this.")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="Level of the one-sided test over the seeds.")
    n_test: int | None = Field(None, gt=0, description="Test items behind each score: adds the test set's "
                               "binomial sampling error to the seeds' spread (for an accuracy or F1 in [0, 1]).")
    baselines: list[Selection] = Field(default_factory=list, description="Sides that are baselines, not models "
                                       "to check, besides the controls themselves (e.g. [{control: random_init}] "
                                       "where the control is the majority label).")


class Learned(_Gap):
    kind: Literal["learned"]
    against: list[Selection] = Field(min_length=1, description="Overrides that pick each control, e.g. "
                                     "[{control: random_init}, {control: majority}]; null drops a filter.")


class Transfers(_Gap):
    kind: Literal["transfers"]
    against: Selection = Field(description="Overrides that pick the random-init control's target, e.g. "
                               "{control: random_init}.")


class Headroom(_Check):
    kind: Literal["headroom"]
    select: Selection = Field(default_factory=dict, description="Overrides of each side's filters that pick "
                              "the scores compared (e.g. {test_lang: tgt_fake} for a Δ claim). " + SEL_HELP)
    ceiling: float = Field(1.0, description="The metric's best score.")
    chance: float = Field(description="The score of a model that learned nothing (e.g. 1/3 for XNLI).")
    distance: float = Field(gt=0, description="Scores this close to a bound have no room to move.")


class LeftPlateau(_Check):
    kind: Literal["left_plateau"]
    nats: float = Field(gt=0, description="Final dev loss at least this far below the context-free predictor's "
                        "loss (analysis/plateau.py).")


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


class Rises(_Check):
    kind: Literal["rises"]
    select: Selection = Field(default_factory=dict, description="Overrides of each side's filters that pick the "
                              "manipulated rows. " + SEL_HELP)
    by: str = Field(description="The manipulated factor, a column or tag.")
    levels: list[Any] = Field(min_length=2, description="Its values in the order the scores must rise.")
    margin: float = Field(0.0, description="Each step up by more than this.")
    alpha: float = Field(0.05, gt=0, lt=0.5, description="Level of each step's one-sided test over the seeds.")


Check = Annotated[Learned | Transfers | Headroom | Rises | LeftPlateau | Control | Surface | Bound,
                  Field(discriminator="kind")]


def evaluate_checks(checks: list, sides: list[Selection], rows: list[ResultRow],
                    facts: ArtifactFacts) -> list[CheckResult]:
    """Each check over the finding's sides (their full filters), worst side first in its text; `facts` reads
    the artifacts behind the rows (a workdir's, or a recorded run's answers; without a workdir: the rows' own
    paths)."""
    unique = list({json.dumps(s, sort_keys=True, default=str): s for s in sides}.values())
    out = []
    for check in checks:
        name = check.name or check.kind
        if isinstance(check, (Learned, Transfers)):
            controls = check.against if isinstance(check, Learned) else [check.against]
            models = [side for side in unique if not _baseline(merged(side, check.select), check.baselines)]
            out.append(gap_checks(name, check, controls, models, rows) if models or not unique else
                       CheckResult(name, None, "every side is a baseline: no model to check"))
        elif isinstance(check, Headroom):
            out.append(headroom(name, check, unique, rows))
        elif isinstance(check, Rises):
            out.append(rises(name, check, unique, rows))
        elif isinstance(check, Control):
            out.append(_control(name, check, unique, rows))
        elif isinstance(check, Bound):
            out.append(_bound(name, check, unique, rows))
        elif isinstance(check, LeftPlateau):
            out.append(_per_artifact(name, unique, rows, facts, lambda p, steps: _plateau(check, facts, p, steps),
                                     "pretrain"))
        else:
            out.append(_per_artifact(name, unique, rows, facts, lambda p, _: _surface(check, facts, p), "transfer"))
    return out


def _baseline(side: Selection, baselines: list[Selection]) -> bool:
    return any(b and all(side.get(k) == v for k, v in b.items()) for b in map(merged, baselines))


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


def _behind(facts: ArtifactFacts, top: str, stages: tuple[str, ...]) -> list[str]:
    """The artifacts of `stages` that `top` is or reads, however deep (a correlation reads transfers that read
    a pretraining), not looking past one that is found."""
    found, todo, seen = [], [top], set()
    while todo:
        d = todo.pop()
        if d in seen:
            continue
        seen.add(d)
        if d.split("/")[0] in stages:
            found.append(d)
        else:
            todo += facts.inputs(d)
    return found


def _per_artifact(name: str, sides: list[Selection], rows: list[ResultRow], facts: ArtifactFacts, measure,
                  stage: str) -> CheckResult:
    """`measure(artifact, steps) -> (gap, words)` (a gap > 0 passes) over every `stage` artifact behind the rows,
    with the checkpoint steps the rows used of it (None: the final model)."""
    stages = (stage, *ENCODERS_TRAINED_ELSEWHERE) if stage == "pretrain" else (stage,)
    found: dict[str, set] = {}
    try:
        for side in sides:
            for r in pick(rows, side):
                for d in _behind(facts, facts.locate(r.artifact), stages) if r.artifact else ():
                    found.setdefault(d, set()).add(used_step(r))
        if not found:
            return CheckResult(name, None, f"no {stage} artifact behind the rows of {label(sides[0])}")
        results = [measure(d, steps) for d, steps in found.items()]
    except NotRecorded as e:
        return CheckResult(name, None, str(e))
    missing = [words for gap, words in results if gap is None]
    if missing:
        return CheckResult(name, None, missing[0])
    gap, words = min(results, key=lambda x: x[0])
    return CheckResult(name, gap > 0, ("closest: " if gap > 0 else "") + words)


def _plateau(check: LeftPlateau, facts: ArtifactFacts, pretrain: str,
             steps: set | frozenset = frozenset({None})) -> tuple[float | None, str]:
    """The worst language at the worst checkpoint the rows used."""
    stage = pretrain.split("/")[0]
    if stage in ENCODERS_TRAINED_ELSEWHERE:
        return math.inf, f"{pretrain}: an encoder not pretrained here"
    shards = next((d for d in facts.inputs(pretrain) if d.split("/")[0] == "shards"), None)
    losses = {step: facts.dev_losses(pretrain, step) for step in sorted(steps, key=lambda s: (s is None, s or 0))}
    if not all(losses.values()) or shards is None:
        return None, f"{pretrain}: no dev losses (metrics.jsonl) or no shards input"
    selection = facts.setting(pretrain, "selection", "uniform")
    gaps = [(facts.plateau(shards, lang, selection), lang, loss, step)
            for step, by_lang in losses.items() for lang, loss in by_lang.items()]
    (entropy, free), lang, loss, step = min(gaps, key=lambda g: g[0][1] - g[2])
    at = "" if step is None else f" (checkpoint {step})"
    return free - loss - check.nats, (f"{pretrain} {lang}{at}: dev loss {loss:.3f} vs context-free "
                                      f"{free:.3f} nats ({free - loss:.3f} below, needs ≥ {check.nats:g}; "
                                      f"unigram entropy {entropy:.3f})")


def _surface(check: Surface, facts: ArtifactFacts, transfer: str) -> tuple[float | None, str]:
    data = next((d for d in facts.inputs(transfer) if d.split("/")[0] not in
                 ("pretrain", *ENCODERS_TRAINED_ELSEWHERE)), None)
    if data is None or facts.setting(transfer, "task") != "xnli":
        return None, f"{transfer}: no XNLI data input"
    train = facts.setting(transfer, "train")[0]["path"]
    tests = [f["path"] for f in facts.setting(transfer, "evaluate")
             if f.get("split") == "test" and not f.get("hypothesis_path")]
    acc, test = max(((facts.surface(data, train, test), test) for test in tests),
                    key=lambda x: abs(x[0] - check.chance))
    return check.margin - abs(acc - check.chance), (f"surface-only accuracy {acc:.3f} on {test} "
                                                    f"(chance {check.chance:.3f} ± {check.margin:g})")


def used_step(row: ResultRow) -> int | None:
    """The pretraining checkpoint a row's model started from: its selected run's `checkpoint` (kept as `row
    checkpoint` where a tag of that name says `best`), or a `checkpoint` tag naming a step; None: the final one."""
    value = row.extra.get("row checkpoint", row.extra.get("checkpoint"))
    return int(value) if str(value).isdigit() else None

