"""Report tables checked number by number against result rows made by hand: every transfer job of a study's
plan gets rows with random values (no stage runs), the report is rendered from results.db, and each cell must
equal the mean ± sample std of the rows it stands for, computed here from what was written."""
from __future__ import annotations

import random
import statistics
from collections import defaultdict


from mbertlab.store.artifacts import ArtifactStore
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.studies.kinds import job_hash, stage_kind
from mbertlab.studies.spec import load_spec
from mbertlab.transfer.task_table import get_task


SEEDS = ["seeds=[0, 1, 2]"]  # so that cells show mean ± std


def fill(name: str, tmp_path, langs_of) -> tuple:
    """(spec, store, results, written): rows for every transfer job of the study's test-scale plan, one value
    per (job, test language); `written[(tags, lang)]` lists the values each plan entry's cell should average."""
    from mbertlab.studies.runner import placed_plan

    spec = load_spec(name, "test", SEEDS)
    store, results = ArtifactStore(tmp_path), ResultsDB(tmp_path / "results.db")
    rng = random.Random(name)
    jobs = [j for j in placed_plan(spec) if j.kind == "transfer"]
    by_hash, rows, written = {}, [], defaultdict(list)
    for job in jobs:
        hash_ = job_hash(job, store)
        if hash_ not in by_hash:
            metric = get_task(job.config.task).reported(repair=name in ("wd2019", "wd2020"))  # NER as the paper
            tested = {f.lang for f in job.config.evaluate if f.split == "test"}  # as the run writes them:
            averaged = len(tested - {f.lang for f in job.config.train}) > 1  # 'avg' over two or more targets
            by_hash[hash_] = {lang: rng.random() for lang in langs_of(spec)
                              if lang in tested or (lang == "avg" and averaged)}
            artifact = str(tmp_path / stage_kind(job.kind).stage / hash_)
            rows += [ResultRow(metric=metric, value=v, study=name, task=job.config.task, test_lang=lang,
                               split="test", artifact=artifact, seed=job.config.seed)
                     for lang, v in by_hash[hash_].items()]
        for lang, v in by_hash[hash_].items():
            written[(tuple(sorted(dict(job.tags).items())), lang)].append(v)
    results.add(rows)
    return spec, store, results, written


def cell_values(written: dict, lang: str, **wanted: str) -> list[float]:
    """The values written for `lang` under every plan entry carrying the wanted tags, in plan order."""
    return [v for (tags, l), vs in written.items() if l == lang and wanted.items() <= dict(tags).items() for v in vs]


def expected(values: list[float]) -> str:
    """The cell text: mean ± sample std in %, one decimal (the mean alone for one seed, a dash for none)."""
    if not values:
        return "—"
    mean = f"{100 * statistics.fmean(values):.1f}"
    return mean if len(values) == 1 else f"{mean} ± {100 * statistics.stdev(values):.1f}"


def wd2019_langs(spec) -> list[str]:
    from mbertlab.papers.wd2019.design import study_languages
    from mbertlab.studies.runner import placed_plan

    data = next(j for j in placed_plan(spec) if j.kind == "transfer").inputs[-1]
    return [*study_languages(spec, data)[0], "avg"]


def test_wd2019_zero_shot_table_cells_are_the_means_of_their_rows(tmp_path):
    from mbertlab.papers.wd2019.design import FINETUNE_ALL, IN_LANGUAGE, MAJORITY
    from mbertlab.papers.wd2019.tables import wd2019_report

    spec, store, results, written = fill("wd2019", tmp_path, wd2019_langs)
    report = wd2019_report(spec, store, results)
    table = report.tables[0]
    s = spec.settings
    checked = 0
    for row in table.rows:
        if str(row[0]).endswith("(paper)"):  # the paper's own numbers, from published.yaml
            continue
        task = next(t for t in s.tasks if get_task(t).title == row[0])
        strategy = {"majority": MAJORITY, "encoder, in-language": IN_LANGUAGE}.get(row[2], FINETUNE_ALL)
        pos = {"upos_input": "none"} if task == "parse" else {}
        wanted = {"task": task, "strategy": strategy, **pos}
        for lang, shown in zip(wd2019_langs(spec), row[3:]):
            if strategy == IN_LANGUAGE and lang == s.source:  # the source's own score is the zero-shot run's
                values = cell_values(written, lang, task=task, strategy=FINETUNE_ALL, **pos)
            elif strategy == IN_LANGUAGE and lang == "avg":  # per seed, the mean over the targets
                targets = wd2019_langs(spec)[1:-1]
                values = [statistics.fmean(cell_values(written, t, **wanted, seed=seed)[0] for t in targets)
                          for seed in ("0", "1", "2")]
            else:
                values = cell_values(written, lang, **wanted)
            assert len(values) == (1 if strategy == MAJORITY else 3), (task, strategy, lang)  # majority: no seed
            assert str(shown) == expected(values), (task, strategy, lang)
            checked += 1
    assert table.columns[3:] == [f"{s.source} (source)", *wd2019_langs(spec)[1:]]
    ours = [r for r in table.rows if not str(r[0]).endswith("(paper)")]
    assert checked == len(ours) * len(wd2019_langs(spec)) and len(ours) >= len(s.tasks)
    assert sum(r[2] == "encoder, in-language" for r in ours) == len(s.in_language) > 0


def k2020_langs(spec) -> list[str]:
    return list(dict.fromkeys([spec.settings.source, *(c.test_on or c.target for c in spec.settings.conditions)]))


def test_k2020_task_tables_cells_and_deltas_are_computed_from_their_rows(tmp_path):
    from mbertlab.papers.k2020.tables import all_tasks, conditions_report, headline

    spec, store, results, written = fill("k2020", tmp_path, k2020_langs)
    s = spec.settings
    tables = {t.title: t for t in conditions_report(spec, store, results).tables}
    checked = with_controls = with_spread = 0
    for task in all_tasks(s):
        table = tables[f"{headline(task)} (%): fine-tuned on {s.source}, tested zero-shot"]
        for row in table.rows:
            cond = next(c for c in s.conditions if c.name == row[0])
            target = cond.test_on or cond.target  # where its target scores are read (Table 3: not the corpus)
            assert row[1] == target
            tags = {"condition": cond.name, "task": task}
            src = cell_values(written, s.source, control="pretrained", **tags)
            tgt = cell_values(written, target, control="pretrained", **tags)
            assert len(src) == len(tgt) == len(cond.seeds or s.seeds)
            with_spread += len(src) >= 2
            controls = [cell_values(written, target, control=c, **tags) for c in ("random_init", "majority")]
            assert [str(c) for c in row[2:]] == [
                expected(src), expected(tgt), expected([a - b for a, b in zip(src, tgt)]),
                *(expected(v) for v in controls)], (task, cond.name)
            checked += 1
            with_controls += sum(map(bool, controls))
    assert checked >= len(s.conditions) and with_controls >= 1 and with_spread >= 1
