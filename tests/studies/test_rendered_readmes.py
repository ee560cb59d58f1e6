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
    runs_folder,
    studies_table,
)
from mbertlab.studies.spec import load_spec


@pytest.mark.parametrize("key", [*PAPER_KEYS, "quick"])
def test_a_studys_rendered_section_is_what_its_committed_run_renders(key):
    text = readme_of(key).read_text(encoding="utf-8")
    start, end = marker(key, "lab")
    if not (runs_folder(key) / "run.json").is_file():
        assert start not in text, f"{key}: a rendered section with no committed run behind it"
        return
    assert between(text, start, end) == readme_section(load_spec(key, "lab"), runs_folder(key)), (
        f"{readme_of(key)} differs from {key}'s committed run: {start}")


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
