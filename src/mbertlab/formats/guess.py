"""Guess a file's format from its name (and first line), and summarise any supported file."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

from mbertlab.errors import DataError

FORMATS = ("conllu", "ner", "udpos", "xnli", "mldoc", "langid", "muse", "text")


def guess_format(path: str | Path) -> str:
    path = Path(path)
    name = path.name.lower()
    if name.endswith(".conllu"):
        return "conllu"
    if "xnli" in str(path).lower() or "nli" in name:
        return "xnli"
    if "udpos" in str(path).lower() or "pos" in name:
        return "udpos"
    if "muse" in str(path).lower() or "dict" in name:
        return "muse"
    if "mldoc" in name:
        return "mldoc"
    if "ner" in str(path).lower() or "conll200" in str(path).lower() or name.startswith(("eng.", "esp.", "ned.")):
        return "ner"
    return "text"


def summarize(path: str | Path, fmt: str | None = None, skip_invalid: bool = False,
              v1_to_v2: bool = False) -> dict:
    """Counts of a file: sentences/examples, tokens, label inventory; a DataError if it is malformed."""
    from mbertlab.formats.classification import read_langid, read_mldoc
    from mbertlab.formats.common import ReadStats
    from mbertlab.formats.conllu import read_conllu
    from mbertlab.formats.muse import read_dictionary
    from mbertlab.formats.ner_columns import read_ner
    from mbertlab.formats.text import read_lines
    from mbertlab.formats.udpos import read_udpos_tsv
    from mbertlab.formats.xnli import read_xnli

    fmt = fmt or guess_format(path)
    if fmt not in FORMATS:
        raise DataError(path, None, f"unknown format {fmt!r} (expected one of {', '.join(FORMATS)})")
    stats, labels, items, tokens = ReadStats(), Counter(), 0, 0
    opts = {"skip_invalid": skip_invalid, "stats": stats}
    if fmt in ("conllu", "ner", "udpos"):
        reader = {"conllu": read_conllu, "ner": read_ner, "udpos": read_udpos_tsv}[fmt]
        if fmt == "conllu":
            opts["v1_to_v2"] = v1_to_v2
        for s in reader(path, **opts):
            items += 1
            tokens += len(s.forms if fmt == "conllu" else s.tokens)
            labels.update(s.upos if fmt == "conllu" else s.tags)
    elif fmt in ("xnli", "mldoc", "langid"):
        reader = {"xnli": read_xnli, "mldoc": read_mldoc, "langid": read_langid}[fmt]
        for ex in reader(path, **opts):
            items += 1
            labels[ex.label] += 1
    elif fmt == "muse":
        pairs = read_dictionary(path)
        items, tokens = len(pairs), sum(len(v) for v in pairs.values())
    else:
        for line in read_lines(path):
            items += 1
            tokens += len(line.split())
    return {"path": str(path), "format": fmt, "items": items, "tokens": tokens,
            "labels": dict(labels.most_common()), "skipped": stats.skipped}
