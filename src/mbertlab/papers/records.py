"""A paper's lab run committed beside it, and the README sections rendered from it (issue 51).

`papers/<key>/runs/<scale>/` holds, small: `rows.jsonl.gz` (every result row of the spec's stages, each
artifact named `stage/hash`; JSON lines, gzipped without a timestamp so that one run gives one file: lms2023's 7,080
rows are 2.8 MB as text and 0.15 MB so; `zcat` reads it), `facts.json` (what the verdicts' checks read from the
artifacts: dev losses, context-free losses, surface-only accuracies, the inputs between artifacts;
analysis/artifact_facts.py) and `run.json` (commit, dates, processor and its bf16, precision, --jobs, wall and CPU
time of each part of the run, stages, the spec version). From them and the spec alone, `study report NAME --results
DIR --readme` renders the report's tables and scorecard into the paper's README and the verdict counts into
studies/README.md, between markers; tests/studies/test_rendered_readmes.py holds the READMEs equal to what it
renders."""
from __future__ import annotations

import gzip
import json
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from mbertlab.analysis.artifact_facts import ArtifactFacts, artifact_key
from mbertlab.errors import ConfigError
from mbertlab.report.render import Report
from mbertlab.report.tables import markdown_table
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.studies.jobs import RunContext
from mbertlab.studies.spec import StudySpec

PAPERS = Path(__file__).resolve().parent
STUDIES_README = PAPERS.parents[2] / "studies" / "README.md"
FILES = ("rows.jsonl.gz", "facts.json", "run.json")
PAPER_KEYS = ("wd2019", "wd2020", "k2020", "liu2020", "lms2023")


def runs_folder(name: str, scale: str = "lab") -> Path:
    """Where a built-in study's committed run lives: `papers/<key>/runs/<scale>` for a paper's spec, and beside its
    paper as `runs/<name>-<scale>` for another spec of that home (quick: papers/k2020/runs/quick-lab)."""
    from mbertlab.studies.spec import builtin_specs

    spec = builtin_specs().get(name)
    home = Path(str(spec)).parent if spec is not None else PAPERS / name
    return home / "runs" / (scale if home.name == name else f"{name}-{scale}")


def readme_of(name: str) -> Path:
    """The README a study's rendered section lives in: the paper's own, else studies/README.md (quick)."""
    return PAPERS / name / "README.md" if name in PAPER_KEYS else STUDIES_README


def record_run(spec: StudySpec, ctx: RunContext, out: Path, partial: bool = False) -> dict:
    """Write the study's rows, the checks' facts and the run record to `out` (replacing a record there); the
    run record. Refused while a stage is missing (a record is of a whole run), unless `partial`: then the record
    says how many stages it holds and which slices are whole (a gpu scale merged slice by slice)."""
    from mbertlab.studies.exchange import spec_version
    from mbertlab.studies.report import study_verdicts
    from mbertlab.studies.rows import rows_by_job
    from mbertlab.studies.runner import run_log, study_jobs, study_status

    statuses = study_status(spec, ctx.store)
    missing = [s for s in statuses if s.state != "done"]
    if missing and not partial:
        raise ConfigError(f"{spec.name} ({spec.scale}): {len(missing)} of {len(statuses)} stages not built (e.g. "
                          f"{missing[0].stage}/{missing[0].hash}); run the study to the end before recording it "
                          "(or record the slices built so far with --partial)")
    parts = run_log(ctx.store.workdir, spec)
    if not parts:
        raise ConfigError(f"{ctx.store.workdir / 'runs.jsonl'}: no `study run` of {spec.name} ({spec.scale}) logged "
                          "there; a record needs the run's time (run the study in this workdir, or merge exports "
                          "that carry their runs)")
    rows = [row for rows in rows_by_job(study_jobs(spec), ctx.store, ctx.results).values() for row in rows]
    records = sorted((json.dumps({**asdict(row), "artifact": artifact_key(row.artifact)}, sort_keys=True)
                      for row in rows))
    facts = ArtifactFacts(ctx.store.workdir)
    study_verdicts(spec, ctx, facts)  # every fact a check reads, remembered
    run = {"study": spec.name, "scale": spec.scale, "spec_version": spec_version(statuses), "stages": len(statuses),
           "rows": len(records), "recorded": time.strftime("%Y-%m-%d", time.gmtime()), "parts": parts}
    if missing:
        run.update(stages_built=len(statuses) - len(missing), slices=_whole_slices(spec, statuses))
    out.mkdir(parents=True, exist_ok=True)
    texts = {"rows.jsonl.gz": "".join(r + "\n" for r in records),
             "facts.json": json.dumps(facts.answers, indent=0, sort_keys=True) + "\n",
             "run.json": json.dumps(run, indent=1, sort_keys=True) + "\n"}
    for name, text in texts.items():  # each file whole or not at all
        data = text.encode("utf-8")
        tmp = out / f".{name}.tmp"
        tmp.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
        tmp.replace(out / name)
    return run


def _whole_slices(spec: StudySpec, statuses) -> list[str]:
    """The slices (`study plan --slices`) every stage of which is built."""
    from mbertlab.studies.slices import study_slicing

    done = {s.job for s in statuses if s.state == "done"}
    return [piece.name for piece in study_slicing(spec).slices if all(job in done for job in piece.jobs)]


def read_record(folder: Path) -> tuple[list[dict], dict, dict]:
    """(rows, facts, run) of a committed record; a missing file is a one-line error."""
    for name in FILES:
        if not (folder / name).is_file():
            raise ConfigError(f"{folder / name}: missing; expected a run record (`mbertlab results record`)")
    try:
        lines = gzip.decompress((folder / "rows.jsonl.gz").read_bytes()).decode("utf-8").splitlines()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{folder / 'rows.jsonl.gz'}: not a gzipped JSON-lines file ({exc})") from None
    rows = [json.loads(line) for line in lines if line]
    return (rows, json.loads((folder / "facts.json").read_text(encoding="utf-8")),
            json.loads((folder / "run.json").read_text(encoding="utf-8")))


def recorded_report(spec: StudySpec, folder: Path) -> tuple[Report, list]:
    """The study's report (design tables and scorecard) and its verdicts, computed from a record alone."""
    from mbertlab.studies.designs import get_design
    from mbertlab.studies.report import study_verdicts
    from mbertlab.studies.scorecard import scorecard_tables

    rows, answers, run = read_record(folder)
    if run.get("study") != spec.name or run.get("scale") != spec.scale:
        raise ConfigError(f"{folder}: a record of {run.get('study')!r} ({run.get('scale')}), not of {spec.name!r} "
                          f"({spec.scale})")
    with tempfile.TemporaryDirectory(prefix="mbertlab-record-") as tmp:
        workdir = Path(tmp)
        ctx = RunContext(ArtifactStore(workdir), ResultsDB(workdir / "results.db"), spec.name)
        ctx.results.add(ResultRow(**{**r, "artifact": str(workdir / r["artifact"])}) for r in rows)
        report = get_design(spec.design).report(spec, ctx.store, ctx.results)
        verdicts = study_verdicts(spec, ctx, ArtifactFacts(recorded=answers))
        report.tables.extend(scorecard_tables(verdicts) if verdicts else [])
    report.ran_on = run_line(run)
    return report, verdicts


def run_line(run: dict) -> str:
    """The run record in one sentence: when, on what, how long (and, for a partial record, how much of it)."""
    parts = run["parts"]
    wall = sum(p["wall_s"] for p in parts)
    cpu = [p["cpu_s"] for p in parts if p.get("cpu_s") is not None]
    cpu_text = (f"{sum(cpu):,.0f} s CPU" + ("" if len(cpu) == len(parts) else
                                            f" ({len(parts) - len(cpu)} part(s) not logged)")) if cpu else \
        "CPU time not logged"
    commits = sorted({(p.get("commit") or "unknown")[:7] for p in parts})
    days = sorted({time.strftime("%Y-%m-%d", time.gmtime(p["started"])) for p in parts})
    stages = (f"{run['stages_built']} of {run['stages']} stages (whole slices: {', '.join(run['slices']) or 'none'})"
              if "stages_built" in run else f"{run['stages']} stages")
    return (f"{run['study']} ({run['scale']}): {stages}, {duration(wall)} wall and {cpu_text} "
            f"in {len(parts)} part{'s' if len(parts) > 1 else ''} ({', '.join(days)}), `--jobs "
            f"{'/'.join(sorted({str(p['jobs']) for p in parts}))}`, precision "
            f"{'/'.join(sorted({p['precision'] for p in parts}))}, on {machines(parts)}, commit "
            f"{', '.join(commits)}; spec version {run['spec_version']}." +
            "".join(f" Part{'s' if len(ids) > 1 else ''} {', '.join(ids)} {'were' if len(ids) > 1 else 'was'} logged "
                    f"by hand ({note})." for note, ids in _by_note(parts).items()))


def machines(parts: list[dict]) -> str:
    """The machines the parts ran on: times differ by CPU (liu2020's fp32 lab pretraining ran 2.2x faster on an AVX-512
    EPYC than on an AVX2 one)."""
    return "; ".join(sorted({(f"{p['gpu']} with " if p.get("gpu") else "") + f"{p['processor']} ({p['cores']} cores, "
                             "bf16 " + {True: "yes", False: "no"}.get(p.get("cpu_bf16"), "not logged") + ")"
                             for p in parts}))


def _by_note(parts: list[dict]) -> dict[str, list[str]]:
    """The parts logged by hand, by their note (one sentence for several parts of one note)."""
    notes: dict[str, list[str]] = {}
    for i, part in enumerate(parts, 1):
        if part.get("note"):
            notes.setdefault(part["note"], []).append(str(i))
    return notes


def duration(seconds: float) -> str:
    h, rest = divmod(round(seconds), 3600)
    m, s = divmod(rest, 60)
    return f"{h} h {m:02d} min {s:02d} s" if h else f"{m} min {s:02d} s"


def readme_section(spec: StudySpec, folder: Path) -> str:
    """What goes between a paper README's markers: the run line, the verdict counts, every table."""
    from mbertlab.studies.scorecard import verdict_counts

    report, verdicts = recorded_report(spec, folder)
    counts = verdict_counts(verdicts)
    lines = [report.ran_on, ""] + ([f"Verdicts on the paper's {sum(counts.values())} claims: " +
                                    ", ".join(f"{n} {state}" for state, n in counts.items()) + ".", ""]
                                   if verdicts else [])
    _, _, run = read_record(folder)
    return "\n".join(lines + _slice_lines(run) + [markdown_table(t) for t in report.tables]).rstrip() + "\n"


def _slice_lines(run: dict) -> list[str]:
    """A record run in slices: one row per part (slice, stages it built, wall time, where), then a blank line."""
    parts = [p for p in run["parts"] if p.get("slice")]
    if not parts:
        return []
    rows = [f"| {p['slice']} | {p['stages_built']} | {p['wall_s']:.1f} | {p.get('gpu') or p['processor']} | "
            f"{p['precision']} | {time.strftime('%Y-%m-%d', time.gmtime(p['started']))} |" for p in parts]
    return ["| slice | stages built | `study run` wall (s) | on | precision | day |", "|---|---|---|---|---|---|",
            *rows, ""]


def marker(name: str, scale: str) -> tuple[str, str]:
    rel = runs_folder(name, scale).relative_to(PAPERS.parents[1])
    return (f"<!-- rendered by `mbertlab study report {name} --scale {scale} --results src/{rel} --readme` "
            "from the committed run; edit the run, not this -->", f"<!-- end of the rendered {name} {scale} run -->")


def replace_between(text: str, start: str, end: str, body: str, where: Path) -> str:
    """`text` with what lies between the markers replaced by `body`; one line of error when they are absent."""
    if text.count(start) != 1 or text.count(end) != 1 or text.index(start) > text.index(end):
        raise ConfigError(f"{where}: expected one pair of markers `{start}` ... `{end}` for the rendered section")
    head, rest = text.split(start)
    _, tail = rest.split(end)
    return f"{head}{start}\n{body}{end}{tail}"


def between(text: str, start: str, end: str) -> str | None:
    if start not in text or end not in text:
        return None
    return text.split(start, 1)[1].split(end, 1)[0].removeprefix("\n")



def studies_table(scale: str = "lab") -> str:
    """studies/README.md's table of the five papers: each committed run's time and verdict counts."""
    from mbertlab.studies.scorecard import STATES, verdict_counts
    from mbertlab.studies.spec import load_spec

    head = ["study", "README", f"{scale} run", "claims", *STATES]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for key in PAPER_KEYS:
        folder, link = runs_folder(key, scale), f"[{key}](../src/mbertlab/papers/{key}/README.md)"
        if not (folder / "run.json").is_file():
            lines.append(f"| `{key}` | {link} | not yet re-run on the generated world |" + " — |" * (len(head) - 3))
            continue
        _, verdicts = recorded_report(load_spec(key, scale), folder)
        _, _, run = read_record(folder)
        counts = verdict_counts(verdicts)
        wall = duration(sum(p["wall_s"] for p in run["parts"]))
        cells = [f"`{key}`", link, f"{wall}, {run['stages']} stages, {len(run['parts'])} part(s), {run['recorded']}, "
                 f"{machines(run['parts'])}",
                 str(sum(counts.values())), *(str(counts[s]) for s in STATES)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


STUDIES_MARKERS = ("<!-- rendered from src/mbertlab/papers/*/runs/lab by `mbertlab study report KEY --results "
                   "src/mbertlab/papers/KEY/runs/lab --readme`; edit the runs, not this -->",
                   "<!-- end of the rendered table of the papers' runs -->")


def write_readmes(spec: StudySpec, folder: Path) -> list[Path]:
    """Render the paper's README section from its record, and studies/README.md's table; the files written."""
    readme = readme_of(spec.name)
    if runs_folder(spec.name, spec.scale) != folder.resolve():
        raise ConfigError(f"{folder}: --readme renders a built-in study's committed run from where it is committed "
                          f"({runs_folder(spec.name, spec.scale)}), not {spec.name!r} from here")
    start, end = marker(spec.name, spec.scale)
    readme.write_text(replace_between(readme.read_text(encoding="utf-8"), start, end, readme_section(spec, folder),
                                      readme), encoding="utf-8")
    return [readme, write_studies_readme()] if readme != STUDIES_README else [write_studies_readme()]


def write_studies_readme() -> Path:
    start, end = STUDIES_MARKERS
    text = STUDIES_README.read_text(encoding="utf-8")
    STUDIES_README.write_text(replace_between(text, start, end, studies_table(), STUDIES_README), encoding="utf-8")
    return STUDIES_README
