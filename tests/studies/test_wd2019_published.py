"""Wu & Dredze 2019's numbers in papers/wd2019/published.yaml against the paper's own text lines, and the paper's
stated settings that live in code or in the planned jobs (not only in the spec) against that code."""
from __future__ import annotations

import re
import statistics

import pytest
import torch

from mbertlab.papers.wd2019.tables import paper_cell
from mbertlab.studies.published import load_published
from mbertlab.studies.runner import study_jobs
from mbertlab.studies.spec import load_spec

PAPER = load_published("wd2019")


@pytest.fixture(scope="module")
def lines(papers_dir) -> list[str]:
    return (papers_dir / PAPER.source).read_text(encoding="utf-8").splitlines()


def _values(table: str, row: str) -> list[float | None]:
    return [n.value for n in PAPER.numbers if n.table == table and n.row == row]


def _floats(line: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+\.\d+", re.sub(r"</?u>", "", line))]


def _line(lines: list[str], label: str, after: int = 0) -> str:
    """The line holding `label`, or the `after`-th line below it (the text puts a table row's numbers there)."""
    i = next(i for i, line in enumerate(lines) if label in line)
    return lines[i + after]


def test_whole_rows_match_the_papers_lines(lines):
    """mBERT's zero-shot row of Tables 3 and 5, and every language row of Table 6, equal their lines of the text."""
    xnli = _line(lines, "Lample and Conneau (2019) (MLM) ", after=1)  # the mBERT row is the line below MLM's
    assert _values("Table 3", "Zero-shot cross-lingual transfer: mBERT") == _floats(xnli)
    assert _floats(xnli)[0] == 82.1 and _floats(xnli)[-1] == 66.3
    pos = [line for line in lines if line.startswith("mBERT\t")][-1]  # Table 5's last row: zero-shot
    assert _values("Table 5", "Zero-shot cross-lingual transfer: mBERT") == _floats(pos) == \
        pytest.approx([87.4, 88.3, 89.8, 97.1, 85.2, 72.8, 83.2, 84.7, 75.9, 86.9, 82.1, 84.7, 83.6, 84.2, 91.3, 84.3])
    # Table 6: a row's last six tab-separated fields (a scrambled copy of the table precedes them on the line)
    rows = [[re.sub(r"</?u>|\s", "", f) for f in line.split("\t")[-6:]] for line in lines if line.count("\t") >= 5]
    rows = [r for r in rows if re.fullmatch(r"[a-z]{2}\*?|AVER", r[0]) and re.fullmatch(r"\d\.\d\d", r[1])]
    assert len(rows) == 32 and rows[0][0] == "en" and rows[-1][0] == "AVER"
    for cells in rows:
        assert _values("Table 6", cells[0]) == _floats(" ".join(cells[1:])), cells[0]


def test_interleaved_cells_are_split_by_row(lines):
    """Tables 2 and 4 print a cell's rows side by side ('92.2 89.9 94.2'): each value went to its own row."""
    mldoc = _line(lines, "Artetxe and Schwenk (2018) ♠ † mBERT").split("\t")[1:]
    assert [_floats(c)[2] for c in mldoc] == _values("Table 2", "Zero-shot cross-lingual transfer: mBERT")
    assert [_floats(c)[1] for c in mldoc] == _values("Table 2", "Zero-shot cross-lingual transfer: Artetxe and "
                                                                 "Schwenk (2018)")
    ner = _line(lines, "Xie et al. (2018) \\diamondsuit mBERT")
    assert "77.57" in ner and "69.56" in ner and "74.03" in ner
    assert [PAPER.number("Table 4", "Zero-shot cross-lingual transfer: mBERT", c).value
            for c in ("nl", "de", "Average (-en,-zh)")] == [77.57, 69.56, 74.03]
    lost = PAPER.number("Table 4", "Zero-shot cross-lingual transfer: mBERT", "es")
    assert lost.value is None and "74.96" in lost.note  # empty in the text; implied by the average
    assert 3 * 74.03 - 77.57 - 69.56 == pytest.approx(74.96, abs=0.01)


def test_each_printed_average_follows_from_its_cells():
    """An independent check of the transcription: every row's Average is the mean of its cells within 0.1
    (the cells are rounded too)."""
    averages = {"Table 2": ("Average", ()), "Table 3": ("Average", ()), "Table 5": ("Average (-en)", ("en",))}
    checked = 0
    for table, (column, left_out) in averages.items():
        for row in PAPER.rows(table):
            cells = {n.column: n.value for n in PAPER.numbers if n.table == table and n.row == row}
            values = [v for c, v in cells.items() if c != column and c not in left_out]
            assert statistics.mean(values) == pytest.approx(cells[column], abs=0.1), (table, row)
            checked += 1
    for column in ("mBERT(S) UAS", "Baseline(Z) LAS", "mBERT(Z) UAS", "mBERT(Z) LAS", "mBERT(Z+POS) LAS"):
        values = [PAPER.number("Table 6", r, column).value for r in PAPER.rows("Table 6") if r != "AVER"]
        assert len(values) == 31
        assert statistics.mean(values) == pytest.approx(PAPER.number("Table 6", "AVER", column).value, abs=0.1)
        checked += 1
    assert checked == 5 + 7 + 4 + 5
    # the paper's own sentence (§5.1): mBERT(Z) beats the baseline by 7.3 UAS / 0.4 LAS; gold POS adds 1.6 / 4.7
    gap = {c: PAPER.number("Table 6", "AVER", c).value for c in
           ("mBERT(Z) UAS", "Baseline(Z) UAS", "mBERT(Z) LAS", "Baseline(Z) LAS", "mBERT(Z+POS) LAS")}
    assert gap["mBERT(Z) UAS"] - gap["Baseline(Z) UAS"] == pytest.approx(7.3)
    assert gap["mBERT(Z) LAS"] - gap["Baseline(Z) LAS"] == pytest.approx(0.4)
    assert gap["mBERT(Z+POS) LAS"] - gap["mBERT(Z) LAS"] == pytest.approx(4.7)


def test_report_cells_are_the_published_numbers():
    assert [paper_cell(t, "src", "src") for t in ("xnli", "mldoc", "ner", "upos", "parse")] == \
        ["82.1", "94.2", "91.97", "97.1", "81.3"]
    assert [paper_cell(t, "avg", "src") for t in ("xnli", "mldoc", "ner", "upos", "parse")] == \
        ["66.3", "74.5", "74.03", "84.3", "54.2"]
    assert paper_cell("parse", "avg", "src", "mBERT(Z+POS) LAS") == "58.9"
    assert paper_cell("upos", "s75", "src") == "—"  # a generated language has no counterpart
    assert paper_cell("upos", "de", "en") == "89.8" and paper_cell("parse", "ja", "en") == "15.7"  # real ones do


def test_paper_scale_jobs_carry_the_papers_fine_tuning_settings():
    """What published.yaml says the spec holds reaches the planned transfer jobs (grid, feature-based, freeze)."""
    jobs = [j for j in study_jobs(load_spec("wd2019", "paper")) if j.kind == "transfer" and j.config.seed == 0]
    finetune = next(j.config for j in jobs if j.config.mode == "finetune" and j.config.task == "xnli")
    assert (finetune.lr, finetune.batch_size, finetune.epochs) == ([2e-5, 3e-5, 5e-5], [16, 32], [3, 4])
    assert (finetune.warmup, finetune.max_length) == (0.1, 128)
    feature = next(j.config for j in jobs if j.config.mode == "feature" and j.config.task == "ner")
    assert (feature.lstm_hidden, feature.batch_size, feature.feature_lr, feature.min_lr) == (768, [32], 1e-3, 1e-5)
    assert len(feature.lr) == 1  # one grid point: frozen modes train at feature_lr
    freeze = {(j.config.task, j.tag("paper_n"), j.config.freeze_layers) for j in jobs if j.config.mode == "freeze"}
    assert {(n, k) for t, n, k in freeze if t == "mldoc"} == {("0", 1), ("3", 4), ("6", 7), ("9", 10)}
    lab = [j for j in study_jobs(load_spec("wd2019", "lab", ["freeze=null"])) if j.kind == "transfer"
           and j.config.mode == "freeze"]  # every level (the lab itself builds the paper's best n only)
    assert sorted({(j.tag("paper_n"), j.config.freeze_layers) for j in lab}) == \
        [("0", 1), ("3", 2), ("6", 3), ("9", 4)]  # 0..k of 4 layers stands for the paper's n = 3k


def test_settings_fixed_in_code_are_the_papers():
    """Settings published.yaml marks as code, not spec: the fine-tuning optimiser and schedule, the window."""
    from mbertlab.tasks.tagging import windows_for
    from mbertlab.transfer.config import TransferConfig
    from mbertlab.transfer.train import _optimizer

    stated = {s.name: s for s in PAPER.settings}
    config = TransferConfig(task="upos", train=[{"lang": "en", "path": "x"}], evaluate=[{"lang": "en", "path": "x"}])
    opt, sched = _optimizer(config, [torch.nn.Parameter(torch.zeros(1))], 1.0, total=100, device=torch.device("cpu"))
    adam = stated["fine-tuning optimiser"].value
    assert isinstance(opt, torch.optim.AdamW)
    assert opt.defaults["betas"] == (adam["beta1"], adam["beta2"])
    assert opt.defaults["weight_decay"] == adam["weight_decay"]
    lrs = []
    for _ in range(100):
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    warm = int(stated["fine-tuning warmup share"].value * 100)
    assert lrs[warm - 1] == pytest.approx(1.0) and max(lrs) == pytest.approx(1.0)
    assert all(a < b for a, b in zip(lrs[:warm - 1], lrs[1:warm])) and lrs[-1] < 0.02  # up 10%, then down to 0

    class OnePiece:  # every word is one subword id
        cls_token_id, sep_token_id, unk_token_id = 1, 2, 0

        def __call__(self, words, add_special_tokens=False):
            return {"input_ids": [[10 + i] for i, _ in enumerate(words)]}

    words = [f"w{i}" for i in range(400)]
    windows = windows_for(OnePiece(), words, list(range(400)), 0, max_length=128)
    context = [sum(1 for w in win.words[1:-1] if w < 0) for win in windows[1:]]
    assert set(context) == {63}  # the deviation published.yaml states: 63, not the paper's 64
    assert "63" in stated["sliding-window context (NER, POS)"].deviation
