"""The lms2023 study: plan (teachers as student inputs, workdir-free hashes, equal epochs at paper scale), budgets,
Eq. 3 rows checked against independent computations, published.yaml against the paper's text, and the test scale
end to end with its report (the paper's numbers beside ours) and a scorecard whose verdicts follow from the rows."""
from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from mbertlab.errors import ConfigError, DataError
from mbertlab.pretrain.config import PretrainConfig
from mbertlab.pretrain.balance import final_mrr, teacher_dev_mrr
from mbertlab.store.artifacts import Artifact, ArtifactStore
from mbertlab.studies.jobs import topological
from mbertlab.studies.kinds import job_hash
from mbertlab.studies.published import load_published
from mbertlab.studies.report import study_rows, write_report
from mbertlab.studies.runner import spec_section, study_jobs, study_status
from mbertlab.studies.scorecard import evaluate_findings, parse_findings
from mbertlab.studies.spec import load_spec
from tests.conftest import SHARED_DATA
from tests.studies.test_liu2020 import expected_verdict, scorecard_rows
from tests.studies.checked import plateau_gaps

LANGS = {"shared script": ["a100", "b100", "c50", "d30", "e20", "f10", "g10"],
         "diverse script": ["a100", "xb100", "xc50", "xd30", "xe20", "xf10", "xg10"]}
SHARES = [100, 100, 50, 30, 20, 10, 10]
PAPER = SHARED_DATA.parent / "papers" / "lms2023-you-can-have-your-data-and-balance-it-too.txt"


def _jobs(scale: str = "test"):
    return topological(study_jobs(load_spec("lms2023", scale)))


def test_spec_validates_and_plans_the_grid_at_every_scale():
    for scale in ("test", "lab", "paper"):
        spec = load_spec("lms2023", scale)
        jobs = _jobs(scale)
        kinds = Counter(j.kind for j in jobs)
        seeds = len(spec.settings.seeds)
        # per seed: a student and a balance stage per set; Appendix C's 10 students and its balance stage
        assert kinds["student"] == (2 + 10) * seeds and kinds["balance"] == (2 + 1) * seeds
        # teachers + HL + HL balanced per set and seed; Appendix C's hard-label models but the share-100 teacher
        assert kinds["pretrain"] == 2 * seeds * (7 + 2) + 4 * seeds
        assert kinds["budget"] == 4 + 4  # full and balanced per set; Appendix C's sizes but the share-100 one
        assert kinds["tokenizer"] == 2 and kinds["generate"] == 1


def test_paper_scale_trains_every_model_ten_epochs_of_its_own_data():
    """Steps = ceil(10 epochs × the model's training sentences / batch 8), from Table 1's shares (× unit)."""
    spec = load_spec("lms2023", "paper")
    unit, steps = spec.settings.unit, {}
    for job in study_jobs(spec):
        if job.kind in ("pretrain", "student") and job.tag("set") == "shared script" and job.tag("seed") == "0":
            steps[job.tag("lang") or job.tag("variant")] = job.config.steps
    assert steps["HL"] == math.ceil(10 * sum(SHARES) * unit / 8)
    assert steps["HL balanced"] == steps["distilled"] == math.ceil(10 * 7 * min(SHARES) * unit / 8)
    assert [steps[l] for l in LANGS["shared script"]] == [math.ceil(10 * s * unit / 8) for s in SHARES]


def test_lab_scale_trains_equal_epochs_with_floors_and_probes_every_pair():
    """Lab follows the paper's protocol too: equal epochs over each model's text (HL's estimate above HL
    balanced's), floored where 10 passes leave the lab's models on the plateau, and a probe on every language of
    the set, tested on every one (Table 3's zero-shot averages all source-target pairs)."""
    spec = load_spec("lms2023", "lab")
    s, jobs = spec.settings, study_jobs(spec)
    batch, floor, teacher_floor, hl_floor = (s.pretrain["batch_size"], s.pretrain["min_steps"],
                                             s.teacher["min_steps"], s.hl["min_steps"])
    models = {j.tag("lang") or j.tag("variant"): j.config for j in jobs
              if j.kind in ("pretrain", "student") and j.tag("set") == "shared script" and j.tag("seed") == "0"}
    assert {c.epochs for c in models.values()} == {s.epochs}  # passes over windows, resolved when a run opens
    steps = {name: c.steps for name, c in models.items()}  # the plan's estimate, floored as the engine floors
    assert steps["HL"] == max(hl_floor, math.ceil(s.epochs * sum(SHARES) * s.unit / batch))
    assert steps["HL balanced"] == steps["distilled"] == max(floor, math.ceil(s.epochs * 7 * min(SHARES) * s.unit
                                                                               / batch))
    assert [models[l].min_steps for l in LANGS["shared script"]] == [teacher_floor] * 7
    assert models["HL balanced"].min_steps == models["distilled"].min_steps == floor > teacher_floor
    assert models["HL"].min_steps == hl_floor > floor  # HL keeps more steps than the balanced models
    assert {j.config.min_steps for j in jobs if j.tag("appendix") and j.kind in ("pretrain", "student")} == {
        teacher_floor}  # monolingual models
    assert teacher_floor > s.pretrain["warmup"]  # the smallest teacher still reaches its full learning rate
    probes = Counter((j.tag("set"), j.tag("variant"), j.config.task, j.tag("seed")) for j in jobs
                     if j.kind == "transfer" and j.config.mode == "probe")
    assert set(probes.values()) == {7} and len(probes) == 2 * 3 * 2 * len(s.seeds)
    for job in (j for j in jobs if j.kind == "transfer" and j.config.mode == "probe"):
        assert [f.lang for f in job.config.evaluate] == LANGS[job.tag("set")]
    # each task's majority label per language, trained and tested on that language (the probes' floor; one job
    # for a language both sets have)
    majority = [j for j in jobs if j.kind == "transfer" and j.config.mode == "majority"]
    assert sorted((j.config.task, j.config.train[0].lang, tuple(f.lang for f in j.config.evaluate))
                  for j in majority) == sorted((t, l, (l,)) for t in s.tasks for l in set().union(*LANGS.values()))
    # the probes' random-init control: per set, seed, task and language, trained and tested on the language, on
    # the shape of that set's and seed's HL with fresh weights
    controls = [j for j in jobs if j.kind == "transfer" and j.config.mode == "probe_random_init"]
    assert sorted((j.tag("set"), j.tag("seed"), j.config.task, j.config.train[0].lang) for j in controls) == sorted(
        (name, str(seed), t, l) for name, langs in LANGS.items() for seed in s.seeds for t in s.tasks for l in langs)
    for job in controls:
        assert [f.lang for f in job.config.evaluate] == [job.config.train[0].lang] and job.config.seed == int(
            job.tag("seed"))
        (shape,) = [i for i in job.inputs if i.kind == "pretrain"]
        assert shape.tag("variant") == "HL" and (shape.tag("set"), shape.tag("seed")) == (job.tag("set"),
                                                                                           job.tag("seed"))
    with pytest.raises(ConfigError, match="in_language 'low' would be ignored"):
        load_spec("lms2023", "lab", overrides=["in_language=low"])


def test_a_floor_counted_in_sentences_is_applied_by_the_design():
    """With `epoch_unit: sentence` the design counts the steps itself: the floor raises them and leaves the
    stage config (the engine's `min_steps` needs `epochs`, which a sentence count does not set)."""
    spec = load_spec("lms2023", "lab", overrides=["epoch_unit=sentence"])
    s, jobs = spec.settings, study_jobs(spec)
    models = {j.tag("lang") or j.tag("variant"): j.config for j in jobs
              if j.kind in ("pretrain", "student") and j.tag("set") == "shared script" and j.tag("seed") == "0"}
    batch = s.pretrain["batch_size"]
    assert {(c.epochs, c.min_steps) for c in models.values()} == {(None, None)}
    assert models["HL"].steps == max(s.hl["min_steps"], math.ceil(s.epochs * sum(SHARES) * s.unit / batch))
    assert models["HL balanced"].steps == models["distilled"].steps == s.pretrain["min_steps"]
    assert [models[l].steps for l in LANGS["shared script"]] == [
        max(s.teacher["min_steps"], math.ceil(s.epochs * share * s.unit / batch)) for share in SHARES]


def test_paper_scale_runs_five_probes_per_model_each_from_its_own_initialisation():
    """Table 3: "Each entry is a mean of 5 runs with different probe initialization." Every probe of the lab's
    one-run plan is run 0 of the paper's, with the same seed; runs 1-4 differ only in the probe's seed."""
    paper = load_spec("lms2023", "paper")
    assert paper.settings.probe_runs == 5
    # Appendix E's early stopping on a balanced dev set: every model of the paper scale has a patience
    assert {j.config.patience for j in study_jobs(paper) if j.kind in ("pretrain", "student")} == {3}
    jobs = [j for j in study_jobs(paper) if j.kind == "transfer" and j.config.mode == "probe"]
    runs = Counter((j.tag("set"), j.tag("variant"), j.tag("seed"), j.config.task, j.config.train[0].lang)
                   for j in jobs)
    assert set(runs.values()) == {5}
    same = {}
    for job in jobs:
        assert job.config.seed == int(job.tag("seed")) + 1000 * int(job.tag("probe_run"))
        probe = (job.tag("set"), job.tag("variant"), job.tag("seed"), job.config.task, job.config.train[0].lang)
        same.setdefault(probe, set()).add((job.inputs[0].key, str(job.config.model_dump(exclude={"seed"}))))
    assert {len(v) for v in same.values()} == {1}  # the five runs differ in the probe's seed alone
    one = {j.key for j in study_jobs(load_spec("lms2023", "paper", ["probe_runs=1"]))
           if j.kind == "transfer" and j.config.mode == "probe"}
    assert one == {j.key for j in jobs if j.tag("probe_run") == "0"}


def test_appendix_c_sweeps_sizes_and_distils_from_larger_teachers():
    """Appendix C: a100 alone at shares 10-100, the 10/50/100 models teaching students on their own size and every
    smaller one (prefixes of the teacher's data), students at the spec's learning-rate factor (the paper's 5x at paper
    scale; 1x at lab scale, where 5x keeps them on the MLM plateau), 10 epochs each with the teachers' floor."""
    spec = load_spec("lms2023", "lab")
    s, jobs = spec.settings, topological(study_jobs(spec))
    batch, lr = s.pretrain["batch_size"], s.pretrain["lr"]
    teacher = next(j for j in jobs if j.tag("variant") == "teacher" and j.tag("lang") == "a100"
                   and j.tag("set") == "shared script" and j.tag("seed") == "0")
    sweep = next(j for j in jobs if j.kind == "balance" and j.tag("appendix") == "C" and j.tag("seed") == "0")
    models = dict(zip(sweep.config.models, sweep.inputs[1:]))
    assert sweep.inputs[0] == teacher.inputs[0] and sweep.inputs[-1] == teacher and models["HL 100"] == teacher
    assert set(models) == {f"HL {n}" for n in (10, 20, 30, 50, 100)} | {
        f"distilled {n} from {t}" for t in (10, 50, 100) for n in (10, 20, 30, 50, 100) if n <= t}
    for label, job in models.items():
        size = int(label.split()[1])
        text = job.inputs[0].inputs[1]  # shards <- (tokenizer, text)
        assert text.kind == "budget" and (text.config.languages["a100"] == size * s.unit or size == 100)
        assert job.config.epochs == 10 and job.config.min_steps == s.teacher["min_steps"]  # monolingual: a floor
        assert job.config.steps == max(s.teacher["min_steps"], math.ceil(10 * size * s.unit / batch))
        if job.kind == "student":
            assert job.inputs[1] == models[f"HL {label.split()[-1]}"] and job.config.lr == pytest.approx(lr)
            assert job.config.hard_weight == 0.0
        else:
            assert job.config.lr == lr
    paper = load_spec("lms2023", "paper")
    student = next(j for j in topological(study_jobs(paper)) if j.kind == "student" and j.tag("appendix") == "C")
    assert student.config.lr == pytest.approx(5 * paper.settings.pretrain["lr"])


def test_probe_table_averages_every_source_target_pair():
    """Table 3's cells from all-pairs probes, against a direct computation: in-language = the diagonal; a
    target's zero-shot score = its mean over the six other sources; a group cell = the mean over its targets,
    per seed, then over seeds."""
    from mbertlab.papers.lms2023.tables import _probe_table
    from mbertlab.store.results import ResultRow

    spec = load_spec("lms2023", "lab")
    lset = spec.settings.sets[0]
    langs, groups = LANGS[lset.name], {**lset.groups(), "all": LANGS[lset.name]}
    rng = np.random.default_rng(0)
    score, probes = {}, {}
    for job in study_jobs(spec):
        if job.kind != "transfer" or job.tag("set") != lset.name or job.config.task != "upos" \
                or job.config.mode != "probe":
            continue
        seed, variant, source = int(job.tag("seed")), job.tag("variant"), job.config.train[0].lang
        rows = []
        for target in langs:
            score[variant, seed, source, target] = value = float(rng.uniform())
            rows.append(ResultRow(metric="accuracy", value=value, task="upos", split="test", seed=seed,
                                  train_lang=source, test_lang=target))
            rows.append(ResultRow(metric="accuracy", value=9.0, task="upos", split="dev", seed=seed,
                                  train_lang=source, test_lang=target))  # dev rows stay out
        probes[job] = rows
    table = _probe_table(lset, groups, "upos", probes, ("HL", "HL balanced", "distilled"), True)
    seeds = spec.settings.seeds
    for variant in ("HL", "HL balanced", "distilled"):
        row = next(r for r in table.rows if r[0] == variant)
        for i, g in enumerate(("low", "high", "all")):
            inlang = [np.mean([score[variant, seed, t, t] for t in groups[g]]) for seed in seeds]
            zero = [np.mean([np.mean([score[variant, seed, src, t] for src in langs if src != t])
                             for t in groups[g]]) for seed in seeds]
            assert row[1 + i].values == pytest.approx(inlang) and row[4 + i].values == pytest.approx(zero)
    assert "zero-shot from every language" in table.title


def test_groups_follow_the_papers_thresholds():
    """High-resource = 50 or 100 million characters, low = 10, 20, 30 (§4.1); a100 stands for German in both."""
    for lset in load_spec("lms2023", "paper").settings.sets:
        assert [l.share for l in lset.languages] == SHARES
        assert all((l.group == "high") == (l.share >= 50) for l in lset.languages)
        assert lset.languages[0].paper == "de" and lset.source == "a100"
    assert len(load_spec("lms2023", "lab").settings.seeds) >= 3  # claims on differences need 3 seeds


def _numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", line)]


def _line(text: str, after: str, label: str) -> str:
    """The first line after `after` whose label cell (first or second tab column) is `label`."""
    lines = text[text.index(after):].splitlines()
    return next(l for l in lines if label in l.split("\t")[:2])


def test_published_numbers_are_the_papers():
    """Spot checks: each published row's numbers are those of that row's line in the paper, in order."""
    text = PAPER.read_text(encoding="utf-8")
    published = load_published("lms2023")
    table2 = "Script\tLang. Set\tHL\tHL Balanced\tOurs"
    assert _numbers(_line(text, table2, "Low-Res.")) == \
        [published.number("Table 2", "Shared, Low-Res.", c).value for c in ("HL", "HL Balanced", "Ours")]
    assert _numbers(_line(text, "Diverse\tLow-Res.", "High-Res.")) == \
        [published.number("Table 2", "Diverse, High-Res.", c).value for c in ("HL", "HL Balanced", "Ours")]
    assert published.number("Table 2", "Shared, All", "Ours").value == -3.7  # the headline: best on All
    assert _numbers(_line(text, "(a) Accuracy of POS probing.", "{de}")) == \
        [published.number("Table 3b", "Shared, {de}", c).value for c in
         ("HL I-L", "HL Z-S", "HL balanced I-L", "HL balanced Z-S", "Ours I-L", "Ours Z-S")]
    cells = [published.number("Table 6", "Diverse, ur", f"{m} {k}") for m in ("HL", "HL balanced", "Ours")
             for k in ("In-Lang", "Zero-Shot")]
    assert _numbers(_line(text, "Script\tLang.\tHL\t\tHL balanced\t\tOurs", "ur")) == \
        [x for n in cells for x in (n.value, n.pm)]
    assert published.number("Table 5", "HL Balanced", "Diverse script").value == -12
    assert [n.value for n in published.numbers if n.table == "Table 1"] == SHARES * 2
    assert all(n.value is None for n in published.numbers if n.table.startswith("Figure"))


def test_student_reads_its_teachers_from_inputs_and_its_hash_ignores_the_workdir(tmp_path):
    jobs = _jobs()
    for student in (j for j in jobs if j.kind == "student" and not j.tag("appendix")):  # Appendix C's: above
        config = student.config
        assert config.objective == "distill"
        teachers = student.inputs[1:]
        assert [t.tag("lang") for t in teachers] == LANGS[student.tag("set")]
        assert config.teachers == {t.tag("lang"): f"inputs[{i + 1}]" for i, t in enumerate(teachers)}
        # each teacher trains on its language alone, with the set's one tokenizer; the student on balanced text
        tok = {t.inputs[0].inputs[0] for t in teachers} | {student.inputs[0].inputs[0]}
        assert len(tok) == 1 and all(t.inputs[0].config.languages == [t.tag("lang")] for t in teachers)
        assert student.inputs[0].inputs[1].config.balanced
    a, b = ArtifactStore(tmp_path / "one"), ArtifactStore(tmp_path / "two")
    assert [job_hash(j, a) for j in jobs] == [job_hash(j, b) for j in jobs]


def test_resolved_teachers_and_bad_references(tmp_path):
    from mbertlab.studies.builders import resolved_teachers

    inputs = [Artifact("shards", "s", tmp_path / "s"), Artifact("pretrain", "t1", tmp_path / "t1"),
              Artifact("pretrain", "t2", tmp_path / "t2")]
    config = PretrainConfig(objective="distill", teachers={"x": "inputs[2]", "y": "inputs[1]"})
    assert resolved_teachers(config, inputs).teachers == {"x": str(tmp_path / "t2"), "y": str(tmp_path / "t1")}
    for bad in ("inputs[0]", "inputs[3]", "/some/path"):
        with pytest.raises(ConfigError, match="teachers.x"):
            resolved_teachers(PretrainConfig(objective="distill", teachers={"x": bad}), inputs)


def test_budget_refuses_more_sentences_than_the_data_has(tmp_path):
    from mbertlab.corpus.budget import BudgetConfig, budget_into

    data = tmp_path / "data"
    (data / "a" / "text").mkdir(parents=True)
    (data / "a" / "text" / "train.txt").write_text("x y\n" * 5)
    (data / "a" / "text" / "dev.txt").write_text("x\n")
    (tmp_path / "out").mkdir()
    with pytest.raises(DataError, match="5 training sentences"):
        budget_into(BudgetConfig(languages={"a": 6}), Artifact("generate", "h", data), tmp_path / "out")


def test_unknown_language_and_too_little_data_are_config_errors():
    with pytest.raises(ConfigError, match="unknown language 'zz'"):
        study_jobs(load_spec("lms2023", "test", ["sets=[{name: s, source: zz, languages: [{name: zz, share: 1, "
                                                  "group: low}, {name: a100, share: 2, group: high}]}]"]))
    with pytest.raises(ConfigError, match="needs 1000"):
        study_jobs(load_spec("lms2023", "test", ["unit=10"]))


@pytest.fixture(scope="module")
def study(run_test_scale):
    return run_test_scale("lms2023")


def _artifact(ctx, job) -> Path:
    from mbertlab.studies.kinds import stage_kind

    return ctx.store.workdir / stage_kind(job.kind).stage / job_hash(job, ctx.store)


def test_test_scale_builds_everything_with_the_papers_proportions(study):
    spec, ctx = study
    assert {s.state for s in study_status(spec, ctx.store)} == {"done"}
    unit = spec.settings.unit
    for job in (j for j in _jobs() if j.kind == "budget"):
        langs = LANGS.get(job.tag("set"), ["a100"])  # Appendix C's sizes: a100 alone
        out = _artifact(ctx, job)
        counts = [len((out / l / "text" / "train.txt").read_text().splitlines()) for l in langs]
        if job.tag("appendix"):
            assert counts == [job.config.languages["a100"]] and counts[0] in {s * unit for s in (10, 20, 30, 50)}
        else:
            assert counts == ([min(SHARES) * unit] * 7 if job.config.balanced else [s * unit for s in SHARES])
        generated = _artifact(ctx, job.inputs[0])
        assert all((out / l / "text" / "dev.txt").read_bytes() == (generated / l / "text" / "dev.txt").read_bytes()
                   for l in langs)
    student = next(j for j in _jobs() if j.kind == "student")
    stored = json.loads((_artifact(ctx, student) / "config.json").read_text())
    assert stored["teachers"]["a100"] == "inputs[1]"  # the artifact records positions, not paths


@pytest.mark.numbers
def test_eq3_rows_equal_independent_computations(study):
    spec, ctx = study
    for balance in (j for j in _jobs() if j.kind == "balance" and not j.tag("appendix")):
        where = str(_artifact(ctx, balance))
        rows = [r for r in ctx.results.query(study="lms2023") if r.artifact == where]
        mrr = {(r.model, r.test_lang): r.value for r in rows if r.metric == "mlm_mrr"}
        langs = LANGS[balance.tag("set")]
        shards, models, teachers = balance.inputs[0], balance.inputs[1:4], balance.inputs[4:]
        # teachers: the distillation module's own scorer on the same shards and eval keys
        config = PretrainConfig(seed=balance.config.seed, seq_len=balance.config.seq_len,
                                eval_batches=balance.config.eval_batches, precision="fp32",  # as the rows
                                teachers={t.tag("lang"): str(_artifact(ctx, t)) for t in teachers})
        assert teacher_dev_mrr(config, _artifact(ctx, shards)) == pytest.approx(
            {l: mrr[("teacher", l)] for l in langs}, abs=1e-6)
        # models: the MRR their own training run logged (same dev text, seed and eval keys)
        for variant, job in zip(balance.config.models, models):
            assert final_mrr(_artifact(ctx, job)) == pytest.approx({l: mrr[(variant, l)] for l in langs}, abs=1e-6)
            eq3 = {r.test_lang: r.value for r in rows if r.metric == "eq3" and r.model == variant}
            diff = {l: mrr[(variant, l)] - mrr[("teacher", l)] for l in langs}
            assert {l: eq3[l] for l in langs} == pytest.approx(diff)
            groups = dict(balance.config.groups, all=langs)
            assert {g: eq3[g] for g in groups} == pytest.approx({g: np.mean([diff[l] for l in ls])
                                                                for g, ls in groups.items()})


def test_appendix_c_rows_are_each_models_own_dev_mrr(study):
    """Appendix C's models train on prefixes of a100's text but share its tokenizer and dev text, so the balance
    stage's MRR of each equals the MRR its own training run logged on the same dev batches."""
    spec, ctx = study
    sweep = next(j for j in _jobs() if j.kind == "balance" and j.tag("appendix") == "C")
    where = str(_artifact(ctx, sweep))
    mrr = {r.model: r.value for r in ctx.results.query(study="lms2023") if r.artifact == where
           and r.metric == "mlm_mrr" and r.test_lang == "a100"}
    models = dict(zip(sweep.config.models, sweep.inputs[1:]))
    assert set(mrr) == set(models) | {"teacher"} and mrr["teacher"] == mrr["HL 100"]
    for label, job in models.items():
        assert final_mrr(_artifact(ctx, job))["a100"] == pytest.approx(mrr[label], abs=1e-6), label


def test_report_has_the_papers_rows_and_group_columns(study):
    spec, ctx = study
    rows = study_rows(spec, ctx)  # job tags merged into extra
    probes = {(r.extra["set"], r.extra["variant"], r.task, r.test_lang) for r in rows
              if r.metric in ("accuracy", "f1") and r.split == "test" and r.test_lang != "avg"}
    assert {p for p in probes if p[1] not in ("majority", "random init")} == {(s, v, t, l) for s, langs in LANGS.items()
                                                         for v in ("HL", "HL balanced", "distilled")
                                                         for t in ("upos", "ner") for l in langs}
    # each language's majority label (the probes' `learned` check; one job for a language both sets have)
    assert {(t, l) for _, v, t, l in probes if v == "majority"} == {(t, l) for t in ("upos", "ner")
                                                                    for l in set().union(*LANGS.values())}
    # the probes' random-init control: every language of each set, in-language
    assert {(r.extra["set"], r.task, r.train_lang, r.test_lang, r.mode) for r in rows
            if r.extra["variant"] == "random init" and r.split == "test"} == {
        (s, t, l, l, "probe_random_init") for s, langs in LANGS.items() for t in ("upos", "ner") for l in langs}
    md, html = write_report(spec, ctx)
    text = md.read_text()
    assert text.count("| model | MRR low | MRR high | MRR all | Eq. 3 low | Eq. 3 high | Eq. 3 all |") == 2
    assert text.count("| model | in-language low | in-language high | in-language all | zero-shot low | "
                      "zero-shot high | zero-shot all |") == 4
    for name in ("shared script", "diverse script"):
        section = text.split(f"### MLM MRR and Eq. 3 balance, {name}")[1].split("###")[0]
        for variant in ("HL", "HL balanced", "distilled"):
            line = next(l for l in section.splitlines() if l.startswith(f"| {variant} |"))
            assert "—" not in line
    # the paper's Table 2 and Table 3 numbers stand under ours, by set and group
    published = load_published("lms2023")
    for name, label in (("shared script", "Shared"), ("diverse script", "Diverse")):
        section = text.split(f"### MLM MRR and Eq. 3 balance, {name}")[1].split("###")[0]
        line = next(l for l in section.splitlines() if l.startswith("| distilled (paper) |"))
        assert [float(c) for c in line.strip("| ").split(" | ")[4:]] == \
            [published.number("Table 2", f"{label}, {g}", "Ours").value for g in ("Low-Res.", "High-Res.", "All")]
        section = text.split(f"### POS probe accuracy, {name}")[1].split("###")[0]
        line = next(l for l in section.splitlines() if l.startswith("| HL (paper) |"))
        assert [float(c) for c in line.strip("| ").split(" | ")[1:]] == \
            [published.number("Table 3a", f"{label}, {g}", f"HL {k}").value for k in ("I-L", "Z-S")
             for g in ("Low-Res", "High-Res", "All")]
    assert "| HL balanced: Eq. 3 (paper) | -9.2 | — |" in text  # Table 5: German, shared script
    # NER probes in the paper's metric (Table 3b, footnote 6: macro-F1 over tags per token), not entity F1
    for name, langs in LANGS.items():
        section = text.split(f"### NER probe token macro-F1, {name}")[1].split("###")[0]
        cell = next(l for l in section.splitlines() if l.startswith("| HL |")).strip("| ").split(" | ")[-1]
        zero = [r.value for r in rows if r.extra.get("set") == name and r.extra["variant"] == "HL" and r.task == "ner"
                and r.metric == "token_macro_f1" and r.split == "test" and r.test_lang in langs[1:]]
        assert len(zero) == len(langs) - 1 and cell == f"{100 * np.mean(zero):.1f}"
    # Appendix C (one seed at test scale): each cell is its model's MRR on a100's dev batches
    section = text.split("### Monolingual distillation by corpus size, a100 (Appendix C)")[1].split("###")[0]
    mrr = {r.model: r.value for r in rows if r.extra.get("appendix") == "C" and r.metric == "mlm_mrr"
           and r.test_lang == "a100" and r.model != "teacher"}
    assert len(mrr) == 5 + 10
    assert f"| 30 | {mrr['HL 30']:.3f} | — | {mrr['distilled 30 from 50']:.3f} | " \
           f"{mrr['distilled 30 from 100']:.3f} |" in section
    assert html.read_text().count("data:image/png;base64,") == 3


def test_scorecard_verdicts_follow_from_the_rows(study):
    spec, ctx = study
    md, _ = write_report(spec, ctx)
    text = md.read_text()
    findings = spec_section(spec, "findings")
    paper = [f for f in findings if not f.get("own")]
    card = scorecard_rows(text)
    assert set(card) == {f["id"] for f in paper} and "Our own observations" not in text
    # Figure 1's caption: HL excels on high-resource languages; balancing helps low at high's cost
    assert {"hl-favours-high", "balanced-helps-low", "balanced-costs-high"} <= set(card)
    rows = study_rows(spec, ctx)
    # no test-scale model leaves the MLM plateau (by scipy): every claim with rows is uninformative
    assert max(plateau_gaps(ctx.store.workdir).values()) < 0.1
    for f in paper:
        expected = expected_verdict(f, rows)
        assert card[f["id"]][2] == ("uninformative" if expected != "not run" and f.get("checks") else expected), f["id"]
    # the headline of Table 2 and the abstract's claims are there
    assert {"all-best-shared-vs-hl", "all-best-diverse-vs-balanced", "abstract-low-resource",
            "abstract-high-resource", "conclusion-beats-subsampling"} <= set(card)
    # the probe claims test each seed's mean over its targets and sets (`unit: seed`): one seed is one value a
    # side, which no test decides; the same rows taken one by one (6 targets x 2 sets) would be "tested" as if
    # independent (checks left out)
    unchecked = parse_findings([{k: v for k, v in f.items() if k != "checks"} for f in paper], "lms2023")
    verdicts = {v.id: v for v in evaluate_findings(unchecked, rows, correct=False)}
    assert "needs ≥ 3 seeds a side (n = 1, 1)" in verdicts["pos-zero-shot-on-par"].test
    as_rows = parse_findings([{k: v for k, v in f.items() if k not in ("checks", "unit")} for f in paper], "lms2023")
    assert "Welch one-sided" in {v.id: v for v in evaluate_findings(as_rows, rows, correct=False)}[
        "pos-zero-shot-on-par"].test
    # in_language: none at test scale: the only in-language rows are the source's own, one per set (< 3 a side)
    assert verdicts["pos-in-language-on-par"].state == "inconclusive"
    assert "left_plateau failed" in card["pos-in-language-on-par"][4]
    assert {(r.train_lang == r.test_lang, r.extra["transfer"]) for r in rows if r.task == "upos"} == \
        {(True, "in-language"), (False, "zero-shot"), (False, "zero-shot mean")}
    counts = Counter(card[f["id"]][2] for f in paper)
    assert (f"{counts['holds']} holds, {counts['does not hold']} does not hold, {counts['inconclusive']} inconclusive, "
            f"{counts['uninformative']} uninformative, {counts['not run']} not run (of the paper's claims)") in text


def test_eq3_claims_need_hl_below_its_teachers_and_appendix_c_rising_teachers():
    """The lab's step floors left HL above its teachers (Eq. 3 +6.7 on low-resource languages) where the
    paper's HL is below them in every cell: the Eq. 3 claims are then uninformative (hl_below_teachers); the
    Appendix C claims need the teachers' MRR to rise with their corpus (teachers_rise_with_data)."""
    from mbertlab.store.results import ResultRow
    from mbertlab.studies.scorecard import evaluate_findings, parse_findings

    spec = load_spec("lms2023", "lab")
    findings = {f.id: f for f in parse_findings(spec_section(spec, "findings"), spec.source)}
    claim = findings["abstract-low-resource"]
    claim = claim.model_copy(update={"checks": [c for c in claim.checks if c.name == "hl_below_teachers"]})

    def eq3(hl: float) -> list[ResultRow]:
        return [ResultRow("eq3", v + s / 1000, test_lang="low", seed=s,
                          extra={"level": "group", "variant": variant, "set": "shared script"})
                for variant, v in (("distilled", 0.08), ("HL", hl)) for s in range(3)]

    v = evaluate_findings([claim], eq3(0.067), correct=False)[0]
    assert v.state == "uninformative" and "0.068 ≤ 0 fails" in v.checks[0].text
    assert evaluate_findings([claim], eq3(-0.025), correct=False)[0].state == "holds"
    appendix = [f for i, f in findings.items() if i.startswith("appendix-c-")]
    assert len(appendix) == 7 and all("teachers_rise_with_data" in [c.name for c in f.checks] for f in appendix)
