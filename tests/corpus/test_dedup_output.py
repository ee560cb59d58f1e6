"""De-duplication's output, line by line: a corpus keeps the first occurrence of every sentence across all
of a language's sources, in source order (after stripping, NFC and dropping blank lines), and nothing else."""
from __future__ import annotations

import unicodedata

from mbertlab.corpus.build import CorpusConfig, build_corpus_into

FIRST = ["a b", "  c", "a b", "", "d e f", "c  ", "cafe\u0301", "g"]  # "c  " strips to a repeat of "c"
SECOND = ["g", "h", "caf\u00e9", "a b", "i"]  # "café" precomposed: after NFC a repeat of line 7 of FIRST


def build(tmp_path, dedup: bool) -> list[str]:
    for name, lines in (("one", FIRST), ("two", SECOND)):
        (tmp_path / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / f"out-{dedup}"
    out.mkdir()
    config = CorpusConfig.model_validate({"languages": [{"name": "x", "sources": [
        {"path": str(tmp_path / "one.txt")}, {"path": str(tmp_path / "two.txt")}]}], "dedup": dedup,
        "dev_fraction": 0.3})
    build_corpus_into(config, out)
    train, dev = ((out / "x" / f"{s}.txt").read_text(encoding="utf-8").splitlines() for s in ("train", "dev"))
    merged, t, d = [], iter(train), iter(dev)  # each split keeps source order: merge them back by it
    order = [unicodedata.normalize("NFC", l.strip()) for l in FIRST + SECOND if l.strip()]
    pending = {"train": next(t, None), "dev": next(d, None)}
    for line in order:
        for split, it in (("train", t), ("dev", d)):
            if pending[split] == line:
                merged.append(line)
                pending[split] = next(it, None)
                break
    assert pending == {"train": None, "dev": None}, pending  # every written line was placed
    return merged


def test_dedup_keeps_exactly_the_first_occurrences_in_source_order(tmp_path):
    assert build(tmp_path, True) == ["a b", "c", "d e f", "caf\u00e9", "g", "h", "i"]


def test_without_dedup_every_non_blank_line_is_kept(tmp_path):
    assert build(tmp_path, False) == ["a b", "c", "a b", "d e f", "c", "caf\u00e9", "g", "g", "h", "caf\u00e9",
                                      "a b", "i"]
