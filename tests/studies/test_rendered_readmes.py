"""README numbers of the committed lab runs are rendered, never typed (issue 51): each paper's rendered section
equals what `mbertlab study report KEY --results src/mbertlab/papers/KEY/runs/lab --readme` renders from its
committed record and spec, and studies/README.md's table equals its rendering from all the records."""
from __future__ import annotations

import pytest

from mbertlab.errors import ConfigError
from mbertlab.papers.records import (
    PAPER_KEYS,
    STUDIES_MARKERS,
    STUDIES_README,
    between,
    marker,
    readme_of,
    readme_section,
    replace_between,
    run_line,
    runs_folder,
    studies_table,
)
from mbertlab.studies.spec import load_spec


@pytest.mark.parametrize("scale", ["lab", "gpu"])
@pytest.mark.parametrize("key", [*PAPER_KEYS, "quick"])
def test_a_studys_rendered_section_is_what_its_committed_run_renders(key, scale):
    text = readme_of(key).read_text(encoding="utf-8")
    start, end = marker(key, scale)
    if not (runs_folder(key, scale) / "run.json").is_file():
        assert start not in text, f"{key}: a rendered section with no committed run behind it"
        return
    assert between(text, start, end) == readme_section(load_spec(key, scale), runs_folder(key, scale)), (
        f"{readme_of(key)} differs from {key}'s committed run: {start}")


def test_the_run_line_says_what_a_partial_record_holds_and_what_was_not_logged():
    part = {"wall_s": 200.0, "cpu_s": None, "jobs": 16, "precision": "bf16", "processor": "Xeon", "cores": 16,
            "cpu_bf16": None, "gpu": "NVIDIA H200", "commit": "290e952bf5", "started": 1795844665.8, "note": "by hand"}
    run = {"study": "k2020", "scale": "gpu", "stages": 342, "stages_built": 58, "slices": ["a-seed0", "b-seed0"],
           "spec_version": "v", "parts": [{**part, "slice": "a-seed0"}, {**part, "slice": "b-seed0", "cpu_s": 5.0}]}
    line = run_line(run)
    assert line.startswith("k2020 (gpu): 58 of 342 stages (whole slices: a-seed0, b-seed0), 6 min 40 s wall and 5 s "
                           "CPU (1 part(s) not logged) in 2 parts (2026-11-28)")
    assert "on NVIDIA H200 with Xeon (16 cores, bf16 not logged)" in line
    assert line.endswith("Parts 1, 2 were logged by hand (by hand).")
    whole = {**run, "parts": [{**part, "cpu_s": 7.0, "cpu_bf16": False, "note": None}]}
    del whole["stages_built"], whole["slices"]
    assert run_line(whole).startswith("k2020 (gpu): 342 stages, 3 min 20 s wall and 7 s CPU in 1 part (")
    assert "bf16 no)" in run_line(whole) and "by hand" not in run_line(whole)


def test_the_studies_table_is_what_the_committed_runs_render():
    found = between(STUDIES_README.read_text(encoding="utf-8"), *STUDIES_MARKERS)
    assert found is not None and found == studies_table()
    assert sum((runs_folder(k) / "run.json").is_file() for k in PAPER_KEYS) == \
        sum("not yet re-run" not in line for line in found.splitlines()[2:])


def test_a_section_without_its_markers_is_a_one_line_error(tmp_path):
    start, end = marker("liu2020", "lab")
    assert replace_between(f"a\n{start}\nold\n{end}\nb", start, end, "new\n", tmp_path) == f"a\n{start}\nnew\n{end}\nb"
    for broken in (f"a {start}", f"{end} {start}", f"{start}{end}{start}{end}"):
        with pytest.raises(ConfigError, match="expected one pair of markers"):
            replace_between(broken, start, end, "new\n", tmp_path)


@pytest.mark.parametrize("key", [*PAPER_KEYS, "quick"])
def test_a_committed_record_is_small_and_its_rows_are_gzipped_json_lines(key):
    """Each record file stays under the 1 MB a repository file may weigh; the rows read back with the standard
    library's gzip alone, one JSON object a line, as many as run.json counts."""
    import gzip
    import json

    for scale in ("lab", "gpu"):
        folder = runs_folder(key, scale)
        if not (folder / "run.json").is_file():
            continue
        assert all(f.stat().st_size < 1_000_000 for f in folder.iterdir()), folder
        lines = gzip.decompress((folder / "rows.jsonl.gz").read_bytes()).decode("utf-8").splitlines()
        assert len([json.loads(line) for line in lines]) == json.loads((folder / "run.json").read_text())["rows"]


def test_a_record_whose_rows_are_not_gzip_is_a_one_line_error(tmp_path):
    from mbertlab.papers.records import read_record

    for name, text in (("rows.jsonl.gz", "{}\n"), ("facts.json", "{}"), ("run.json", "{}")):
        (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError, match=r"rows.jsonl.gz: not a gzipped JSON-lines file"):
        read_record(tmp_path)
