"""wd2020's published.yaml read against the paper's table lines: each transcribed row holds, in order, the
numbers printed on that row's line of the text (../shared/papers), and the paper-scale spec states the
paper's Table 4 variants."""
from __future__ import annotations

import re
import pytest

from mbertlab.config import read_yaml
from mbertlab.studies.published import published_path
from mbertlab.studies.spec import load_spec

TABLE4_COLUMNS = ["lv NER", "lv POS", "lv LAS", "lv UAS", "af NER", "af POS", "af LAS", "af UAS", "mn NER",
                  "yo NER"]


@pytest.fixture(scope="module")
def published() -> dict:
    return read_yaml(published_path("wd2020"))


@pytest.fixture(scope="module")
def lines(published, papers_dir) -> list[str]:
    text = (papers_dir / published["source"]).read_text(encoding="utf-8")
    return [re.sub(r"</?[a-z]+>", "", line) for line in text.splitlines()]


def _numbers(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"-?\d+\.\d+", line)]


def _ours(published: dict, table: str, row: str, columns: list[str]) -> list[float]:
    cells = {n["column"]: n["value"] for n in published["numbers"] if (n["table"], n["row"]) == (table, row)}
    assert set(cells) == set(columns), (table, row, sorted(cells))
    return [cells[c] for c in columns if cells[c] is not None]


def _line(lines: list[str], pattern: str, nth: int = 0) -> str:
    found = [line for line in lines if re.match(pattern, line)]
    assert len(found) > nth, f"no line {nth} matching {pattern!r}"
    return found[nth]


@pytest.mark.parametrize("row, pattern, nth", [
    ("Baseline", r"\tBaseline\t", 0),
    ("mBERT", r"\tmBERT\t", 0),
    ("Monolingual BERT base", r"base\t30k\t256\t", 0),
    ("Monolingual BERT small", r"small\t-\t-\t", 0),
    ("Monolingual BERT vocab 10k", r"-\t10k\t-\t", 0),
    ("Monolingual BERT seq 128", r"-\t-\t128\t", 0),
    ("Bilingual BERT base", r"base\t30k\t256\t", 1),  # the second base line, under "Bilingual BERT (§5.3)"
])
def test_table4_rows_are_the_printed_lines(published, lines, row, pattern, nth):
    assert _ours(published, "Table 4", row, TABLE4_COLUMNS) == _numbers(_line(lines, pattern, nth))


def test_table4_bilingual_has_no_mn_yo(published, lines):
    assert _line(lines, r"base\t30k\t256\t", 1).endswith("n/a\tn/a")
    bilingual = {n["column"]: n for n in published["numbers"] if n["row"] == "Bilingual BERT base"}
    assert bilingual["mn NER"]["value"] is None and bilingual["yo NER"]["value"] is None


@pytest.mark.parametrize("row, nth", [("Univariate: Training Size", 0), ("Multivariate: Training Size", 1),
                                      ("Univariate: WikiSize", 0), ("Multivariate: WikiSize", 1),
                                      ("Univariate: Training Vocab", 0)])
def test_table2_rows_are_the_printed_lines(published, lines, row, nth):
    factor = row.split(": ")[1]
    line = _line(lines, rf"{factor}\t-?0\.", nth)
    coef, p, lo, hi = _ours(published, "Table 2", row, ["Coefficient", "p-value", "CI low", "CI high"])
    assert [coef, lo, hi] == _numbers(line.replace("<0.001", ""))
    assert "<0.001" in line and p == 0.001


@pytest.mark.parametrize("row", ["WikiSize", "# Sentences (M)", "# Tokens (M)", "mBERT vocab (K)", "mBERT vocab (%)"])
def test_table3_rows_are_the_printed_lines(published, lines, row):
    printed = [float(x) for x in _line(lines, re.escape(row) + r"(\t[\d.]+){4}$").split("\t")[1:]]
    assert _ours(published, "Table 3", row, ["lv", "af", "mn", "yo"]) == printed


def test_table1_rows_are_the_printed_lines(published, lines):
    rows = [n["row"] for n in published["numbers"] if n["table"] == "Table 1"]
    for row in dict.fromkeys(rows):
        size = row.split()[1]
        count, size_range = _line(lines, rf"{size}\t[a-z]").split("\t")[2:]
        assert _ours(published, "Table 1", row, ["# Languages", "Size Range (GB) low", "Size Range (GB) high"]) \
            == [float(count), *_numbers(size_range)]
    assert sum(n["value"] for n in published["numbers"] if n["column"] == "# Languages") == 99  # Table 1's caption


def test_paper_scale_variants_are_the_papers():
    s = load_spec("wd2020", "paper").settings
    variants = {v.name: v for v in s.variants}
    assert variants["small"].pretrain == {"model": {"layers": 6}}  # only the depth changes (§3.3)
    assert variants["seq 128"].pretrain == {"seq_len": 128, "batch_size": 220}  # §5.2
    assert variants["vocab 10k"].tokenizer == {"vocab_size": 10000}
    assert (s.pretrain["batch_size"], s.pretrain["seq_len"], s.tokenizer["vocab_size"]) == (88, 256, 30000)


def test_lab_variants_keep_the_papers_ratios():
    s = load_spec("wd2020", "lab").settings
    variants = {v.name: v for v in s.variants}
    base_layers, base_batch, base_seq = s.pretrain["model"]["layers"], s.pretrain["batch_size"], s.pretrain["seq_len"]
    assert variants["small"].pretrain["model"] == {"layers": base_layers // 2}  # 12 -> 6
    seq = variants["seq 128"].pretrain
    assert seq["seq_len"] * 2 == base_seq and seq["batch_size"] == pytest.approx(base_batch * 220 / 88)
    assert len(s.seeds) >= 3
