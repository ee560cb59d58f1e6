"""CoNLL-U: strict streaming reader and writer.

Comments are kept; multiword-token ranges (`1-2`) are kept aside for writing back; empty nodes
(`8.1`) are skipped. Every sentence must be a tree over 1..n with exactly one root.
"""
from __future__ import annotations

from pathlib import Path
from typing import IO, Iterable, Iterator

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, blocks, guarded, nfc
from mbertlab.formats.records import UPOS_TAGS, DepSentence, MultiwordToken

V1_DEPRELS = {"dobj": "obj", "nsubjpass": "nsubj:pass", "csubjpass": "csubj:pass", "auxpass": "aux:pass",
              "name": "flat", "mwe": "fixed", "neg": "advmod", "remnant": "orphan"}
V1_UPOS = {"CONJ": "CCONJ"}


def strip_subtype(deprel: str) -> str:
    """Universal relation only: `nmod:poss` → `nmod`."""
    return deprel.split(":", 1)[0]


def read_conllu(path: str | Path, *, skip_invalid: bool = False, v1_to_v2: bool = False,
                stats: ReadStats | None = None) -> Iterator[DepSentence]:
    """Sentences of a CoNLL-U file; a malformed one raises DataError naming file and line."""
    return guarded(blocks(path), stats, skip_invalid, lambda b: _sentence(path, b, v1_to_v2))


def _sentence(path, block: list[tuple[int, str]], v1_to_v2: bool) -> DepSentence:
    sent = DepSentence([], [], [], [], line=block[0][0])
    head_lines = []
    for number, line in block:
        if line.startswith("#"):
            sent.comments.append(line[1:].strip())
            continue
        cols = line.split("\t")
        if len(cols) != 10:
            raise DataError(path, number, f"expected 10 tab-separated columns, found {len(cols)}")
        if "." in cols[0]:
            continue  # empty node of the enhanced graph
        if "-" in cols[0]:
            sent.multiword.append(_range(path, number, cols))
            continue
        _token(path, number, cols, sent, v1_to_v2)
        head_lines.append(number)
    if not sent.forms:
        raise DataError(path, block[0][0], "expected at least one word line in the sentence")
    _check_tree(path, sent, head_lines)
    return sent


def _range(path, number: int, cols: list[str]) -> MultiwordToken:
    try:
        first, last = (int(x) for x in cols[0].split("-"))
    except ValueError:
        raise DataError(path, number, f"expected a range ID like 1-2, got {cols[0]!r}") from None
    return MultiwordToken(first, last, nfc(cols[1]), cols[9])


def _token(path, number: int, cols: list[str], sent: DepSentence, v1_to_v2: bool) -> None:
    if cols[0] != str(len(sent.forms) + 1):
        raise DataError(path, number, f"expected word ID {len(sent.forms) + 1}, got {cols[0]!r}")
    if not cols[1].strip():
        raise DataError(path, number, "expected a non-empty FORM")
    upos = V1_UPOS.get(cols[3], cols[3]) if v1_to_v2 else cols[3]
    if upos not in UPOS_TAGS:
        hint = " (a UD v1 tag: read with the v1-to-v2 mapping)" if cols[3] in V1_UPOS else ""
        raise DataError(path, number, f"expected a UPOS tag, got {cols[3]!r}{hint}")
    try:
        head = int(cols[6])
    except ValueError:
        raise DataError(path, number, f"expected an integer HEAD, got {cols[6]!r}") from None
    deprel = cols[7]
    if v1_to_v2:
        base, _, sub = deprel.partition(":")
        deprel = V1_DEPRELS.get(base, base) + (f":{sub}" if sub else "")
    sent.forms.append(nfc(cols[1]))
    sent.lemmas.append(cols[2])
    sent.upos.append(upos)
    sent.xpos.append(cols[4])
    sent.feats.append(cols[5])
    sent.heads.append(head)
    sent.deprels.append(deprel)
    sent.deps.append(cols[8])
    sent.misc.append(cols[9])


def _check_tree(path, sent: DepSentence, lines: list[int]) -> None:
    n = len(sent.forms)
    for i, head in enumerate(sent.heads):
        if not 0 <= head <= n or head == i + 1:
            raise DataError(path, lines[i], f"expected HEAD in 0..{n} other than the word itself, got {head}")
    roots = [i for i, h in enumerate(sent.heads) if h == 0]
    if len(roots) != 1:
        raise DataError(path, sent.line, f"expected exactly one root (HEAD 0), found {len(roots)}")
    for i in range(n):
        seen, node = set(), i + 1
        while node != 0:
            if node in seen:
                raise DataError(path, lines[i], "expected a tree, found a cycle through this word")
            seen.add(node)
            node = sent.heads[node - 1]


def write_conllu(sentences: Iterable[DepSentence], out: str | Path | IO[str]) -> None:
    if isinstance(out, (str, Path)):
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            return write_conllu(sentences, f)
    for sent in sentences:
        for comment in sent.comments:
            out.write(f"# {comment}\n" if comment else "#\n")
        ranges = {m.first: m for m in sent.multiword}
        for i in range(len(sent.forms)):
            if i + 1 in ranges:
                m = ranges[i + 1]
                out.write(f"{m.first}-{m.last}\t{m.form}\t_\t_\t_\t_\t_\t_\t_\t{m.misc}\n")
            cols = [str(i + 1), sent.forms[i], _col(sent.lemmas, i), sent.upos[i], _col(sent.xpos, i),
                    _col(sent.feats, i), str(sent.heads[i]), sent.deprels[i], _col(sent.deps, i), _col(sent.misc, i)]
            out.write("\t".join(cols) + "\n")
        out.write("\n")


def _col(values: list[str], i: int) -> str:
    return values[i] if i < len(values) and values[i] else "_"
