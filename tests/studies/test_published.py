"""Each paper's published.yaml against the paper's own text (../shared/papers): every number is printed there,
every quoted setting and every quoted claim of the scorecard is the paper's sentence, and the paper-scale spec
holds the settings the paper states (or says why not)."""
from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

from mbertlab.config import read_yaml
from mbertlab.studies.designs import BUILTIN_DESIGNS
from mbertlab.studies.published import load_published, published_path
from mbertlab.studies.runner import spec_section
from mbertlab.studies.spec import builtin_specs, load_spec

PAPERS = [key for key in BUILTIN_DESIGNS if published_path(key).is_file()]


def test_every_paper_has_its_published_numbers():
    assert sorted(PAPERS) == ["k2020", "liu2020", "lms2023", "wd2019", "wd2020"]


def squeeze(text: str) -> str:
    """Letters and digits only, lower case: PDF line breaks, hyphenation and ligatures do not count."""
    return re.sub(r"[\W_]+", "", unicodedata.normalize("NFKC", text).lower())


def printed(value: float, text: str) -> bool:
    """Is the number printed in the text (trailing zeros, a Unicode minus and a leading dot allowed)?"""
    whole, _, frac = f"{abs(value):.6f}".rstrip("0").rstrip(".").partition(".")
    sign = r"[-−–]\s?" if value < 0 else ""
    lead = "(?:0|)" if whole == "0" else re.escape(whole)
    number = sign + lead + (r"\." + re.escape(frac) + "0*" if frac else r"(?:\.0+)?")
    return re.search(rf"(?<![\d.]){number}(?![\d])", text) is not None


def test_the_number_finder_is_strict():
    assert printed(69.7, "B-BERT 69.70 (0.4)") and printed(-2.5, "HL −2.5 low") and printed(0.25, "MRR .25")
    assert not printed(69.7, "169.7") and not printed(69.7, "69.71") and not printed(2.5, "12.5")
    assert printed(100, "100 languages") and not printed(100, "1000")


@pytest.mark.parametrize("key", PAPERS)
def test_every_number_is_printed_in_the_paper(key, papers_dir):
    published = load_published(key)
    text = (papers_dir / published.source).read_text(encoding="utf-8")
    missing = [f"{n.table} / {n.row} / {n.column}: {n.value}" for n in published.numbers
               if n.value is not None and not printed(n.value, text)]
    assert not missing, f"{key}: numbers not in the paper's text: {missing[:10]}"
    assert any(n.value is not None for n in published.numbers)


@pytest.mark.parametrize("key", PAPERS)
def test_every_quote_is_the_papers_sentence(key, papers_dir):
    published = load_published(key)
    text = squeeze((papers_dir / published.source).read_text(encoding="utf-8"))
    quotes = [s.quote for s in published.settings]
    for spec_path in _specs_of(key):
        quotes += [f["quote"] for f in read_yaml(spec_path).get("findings") or [] if not f.get("own")]
    wrong = [q for q in quotes if squeeze(q) not in text]
    assert not wrong, f"{key}: not the paper's words: {wrong[:5]}"


def _specs_of(key: str) -> list[Path]:
    return [p for p in builtin_specs().values() if p.parent.name == key]


def _at(data, dotted: str):
    """Follow `a.0.b` or `a.<name>.b`; `<name>` picks the list entry with that `name` (a name may hold dots)."""
    for part in re.findall(r"<[^>]*>|[^.]+", dotted):
        if isinstance(data, list) and part.startswith("<"):
            named = [d for d in data if isinstance(d, dict) and d.get("name") == part[1:-1]]
            if len(named) != 1:
                raise KeyError(dotted)
            data = named[0]
        elif isinstance(data, list):
            data = data[int(part)]
        elif isinstance(data, dict) and part in data:
            data = data[part]
        else:
            raise KeyError(dotted)
    return data


@pytest.mark.parametrize("key", PAPERS)
def test_the_paper_scale_spec_holds_the_papers_settings(key):
    published = load_published(key)
    spec = load_spec(key, "paper")
    data = {**spec.settings.model_dump(mode="json"), "findings": spec_section(spec, "findings")}
    wrong = []
    for s in published.settings:
        if s.spec is None or s.deviation:
            assert s.spec is None or s.deviation.strip(), s.name
            continue
        ours = _at(data, s.spec)
        if ours != s.value:
            wrong.append(f"{s.name} ({s.spec}): spec {ours!r}, paper {s.value!r}")
    assert not wrong, f"{key}: paper-scale spec differs from the paper without a stated deviation: {wrong}"


def test_a_report_cell_keeps_the_digits_the_paper_printed(tmp_path):
    from mbertlab.studies.published import read_published

    path = tmp_path / "published.yaml"
    path.write_text("paper: x\nsource: x.txt\nnumbers:\n"
                    "  - {table: T1, row: a, column: b, value: 45.0, pm: 0.40}\n"
                    "  - {table: T1, row: a, column: c, value: 45}\n"
                    "  - {table: T1, row: a, column: d, value: .310}\n", encoding="utf-8")
    published = read_published(path)
    assert [published.cell("T1", "a", c) for c in "bcd"] == ["45.0 ± 0.40", "45", ".310"]
    assert published.number("T1", "a", "b").value == 45.0
