"""CoNLL-U: strict streaming reader and a writer that round-trips.

Comments, multiword-token ranges (`1-2`) and empty nodes (`8.1`) are kept so that a sentence is written
back whole; words are 1..n. A sentence is accepted only if it is valid UD as far as a tagger or parser
relies on it: IDs in sequence, ASCII-digit HEADs forming a tree with one root, UD relations, ranges over
existing words, enhanced heads that exist. Anything else is a one-line DataError naming file and line.
Labels are kept as written: the UD v1 -> v2 map is applied only when asked (`v1_to_v2`), and a system output
to be scored may be read with `any_labels`, so a label outside UD v2 is scored wrong, as the official
CoNLL 2018 scorer scores it, instead of being rejected or silently mapped.
"""
from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Iterator

from mbertlab.errors import DataError
from mbertlab.formats.common import ReadStats, blocks, guarded, nfc, write_text_file
from mbertlab.formats.records import UPOS_TAGS, DepSentence, EmptyNode, MultiwordToken

V1_DEPRELS = {"dobj": "obj", "nsubjpass": "nsubj:pass", "csubjpass": "csubj:pass", "auxpass": "aux:pass",
              "name": "flat", "mwe": "fixed", "neg": "advmod", "remnant": "orphan", "foreign": "flat:foreign"}
V1_UPOS = {"CONJ": "CCONJ"}
UD_RELATIONS = frozenset(
    "acl advcl advmod amod appos aux case cc ccomp clf compound conj cop csubj dep det discourse dislocated expl "
    "fixed flat goeswith iobj list mark nmod nsubj nummod obj obl orphan parataxis punct reparandum root "
    "vocative xcomp".split())
COLUMNS = ("ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC")
NO_WHITESPACE = frozenset({0, 3, 4, 5, 6, 7, 8})  # FORM, LEMMA and MISC may contain single spaces
WORD_ID = re.compile(r"[1-9][0-9]*")  # [0-9], not \d: int() would take Arabic-Indic and full-width digits
RANGE_ID = re.compile(r"([1-9][0-9]*)-([1-9][0-9]*)")
EMPTY_ID = re.compile(r"(0|[1-9][0-9]*)\.([1-9][0-9]*)")
HEAD = re.compile(r"0|[1-9][0-9]*")
DEPREL = re.compile(r"[a-z]+(:[a-z]+)?")
FEATURE = r"[A-Z][A-Za-z0-9]*(?:\[[a-z0-9]+\])?=[A-Z0-9][A-Za-z0-9]*(?:,[A-Z0-9][A-Za-z0-9]*)*"
FEATS = re.compile(rf"_|{FEATURE}(?:\|{FEATURE})*")  # Feature=Value|..., as the UD validator (level 2) has it
WHITESPACE = re.compile(r"\s")
ENHANCED = re.compile(r"(0|[1-9][0-9]*(?:\.[1-9][0-9]*)?):[a-z]+(?::[^\s:|]+)*")


def strip_subtype(deprel: str) -> str:
    """Universal relation only: `nmod:poss` → `nmod`."""
    return deprel.split(":", 1)[0]


def read_conllu(path: str | Path, *, skip_invalid: bool = False, v1_to_v2: bool = False, any_labels: bool = False,
                stats: ReadStats | None = None) -> Iterator[DepSentence]:
    """Sentences of a CoNLL-U file; a malformed one raises DataError naming file and line. `v1_to_v2` maps UD v1
    labels (CONJ, dobj, ...) to v2; `any_labels` accepts any UPOS and DEPREL (structure is still checked)."""
    return guarded(blocks(path, strict=True), stats, skip_invalid,
                   lambda b: _sentence(path, b, _Reading(DepSentence([], [], [], [], line=b[0][0]), v1_to_v2,
                                                         any_labels)))


@dataclass
class _Reading:
    """One sentence being read, with the line of each word, range and empty node for error messages."""

    sent: DepSentence
    v1_to_v2: bool = False
    any_labels: bool = False
    word_lines: list[int] = field(default_factory=list)
    range_lines: list[int] = field(default_factory=list)
    empty_lines: list[int] = field(default_factory=list)


def _sentence(path, block: list[tuple[int, str]], reading: _Reading) -> DepSentence:
    for number, line in block:
        if line.startswith("#"):
            if reading.word_lines or reading.range_lines or reading.empty_lines:
                raise DataError(path, number, "found a comment after word lines; expected comments only before "
                                              "the first word line of a sentence")
            reading.sent.comments.append(line[1:].strip())
        else:
            _node(path, number, _columns(path, number, line), reading)
    if not reading.word_lines:
        raise DataError(path, block[0][0], "found a sentence without word lines; expected at least one word")
    _check_ranges_end(path, reading)
    _check_tree(path, reading.sent, reading.word_lines)
    _check_enhanced(path, reading)
    return reading.sent


def _columns(path, number: int, line: str) -> list[str]:
    cols = line.split("\t")
    if len(cols) != 10:
        raise DataError(path, number, f"found {len(cols)} columns; expected 10 tab-separated columns")
    for i, value in enumerate(cols):
        if not value:
            raise DataError(path, number, f"found an empty {COLUMNS[i]} column; expected a value or _")
        if value != value.strip():
            raise DataError(path, number, f"found whitespace around {COLUMNS[i]} {value!r}; expected none")
        if i in NO_WHITESPACE and WHITESPACE.search(value):
            raise DataError(path, number, f"found whitespace in {COLUMNS[i]} {value!r}; expected none")
    if not FEATS.fullmatch(cols[5]):
        raise DataError(path, number, f"found FEATS {cols[5]!r}; expected _ or Feature=Value pairs joined by |")
    return cols


def _node(path, number: int, cols: list[str], reading: _Reading) -> None:
    if WORD_ID.fullmatch(cols[0]):
        _word(path, number, cols, reading)
    elif match := RANGE_ID.fullmatch(cols[0]):
        _range(path, number, cols, int(match[1]), int(match[2]), reading)
    elif match := EMPTY_ID.fullmatch(cols[0]):
        _empty(path, number, cols, int(match[1]), int(match[2]), reading)
    else:
        raise DataError(path, number, f"found ID {cols[0]!r}; expected a word ID (1, 2, ...), a range (1-2) "
                                      "or an empty node ID (1.1) in ASCII digits")


def _word(path, number: int, cols: list[str], reading: _Reading) -> None:
    sent = reading.sent
    if cols[0] != str(len(sent.forms) + 1):
        raise DataError(path, number, f"found word ID {cols[0]}; expected {len(sent.forms) + 1}")
    if not HEAD.fullmatch(cols[6]):
        raise DataError(path, number, f"found HEAD {cols[6]!r}; expected an integer HEAD: 0 or a word ID "
                                      "in ASCII digits")
    sent.forms.append(nfc(cols[1]))
    sent.lemmas.append(cols[2])
    sent.upos.append(_upos(path, number, cols[3], reading))
    sent.xpos.append(cols[4])
    sent.feats.append(cols[5])
    sent.heads.append(int(cols[6]))
    sent.deprels.append(_deprel(path, number, cols[7], reading))
    sent.deps.append(cols[8])
    sent.misc.append(cols[9])
    reading.word_lines.append(number)


def _upos(path, number: int, value: str, reading: _Reading, blank_ok: bool = False) -> str:
    upos = V1_UPOS.get(value, value) if reading.v1_to_v2 else value
    if upos not in UPOS_TAGS and not (blank_ok and upos == "_") and not reading.any_labels:
        hint = " (a UD v1 tag: read with the v1-to-v2 mapping)" if value in V1_UPOS else ""
        raise DataError(path, number, f"found UPOS {value!r}; expected a UPOS tag ({', '.join(UPOS_TAGS)}){hint}")
    return upos


def _deprel(path, number: int, value: str, reading: _Reading) -> str:
    base, _, sub = value.partition(":")
    deprel = V1_DEPRELS.get(base, base) + (f":{sub}" if sub else "") if reading.v1_to_v2 else value
    if reading.any_labels:
        return deprel
    if not DEPREL.fullmatch(deprel) or strip_subtype(deprel) not in UD_RELATIONS:
        v1 = base in V1_DEPRELS and not reading.v1_to_v2
        hint = " (a UD v1 relation: read with the v1-to-v2 mapping)" if v1 else ""
        raise DataError(path, number, f"found DEPREL {value!r}; expected a UD relation with an optional "
                                      f"lowercase subtype, like nsubj or nmod:poss{hint}")
    return deprel


def _range(path, number: int, cols: list[str], first: int, last: int, reading: _Reading) -> None:
    sent, following = reading.sent, len(reading.sent.forms) + 1
    if first != following:
        raise DataError(path, number, f"found range {cols[0]} where word {following} comes next; expected a range "
                                      "line right before its first word")
    if last <= first:
        raise DataError(path, number, f"found range {cols[0]}; expected a range first-last with first < last")
    if sent.multiword and first <= sent.multiword[-1].last:
        previous = sent.multiword[-1]
        raise DataError(path, number, f"found range {cols[0]} overlapping {previous.first}-{previous.last}; "
                                      "expected ranges that do not overlap")
    for i in range(2, 9):
        if cols[i] != "_" and not (i == 5 and cols[i] == "Typo=Yes"):
            raise DataError(path, number, f"found {COLUMNS[i]} {cols[i]!r} on a range line; expected _")
    sent.multiword.append(MultiwordToken(first, last, nfc(cols[1]), cols[9], cols[5]))
    reading.range_lines.append(number)


def _empty(path, number: int, cols: list[str], after: int, index: int, reading: _Reading) -> None:
    sent, words = reading.sent, len(reading.sent.forms)
    expected = 1 + sum(1 for node in sent.empty if node.after == words)
    if (after, index) != (words, expected):
        raise DataError(path, number, f"found empty node {cols[0]} after word {words}; expected {words}.{expected}")
    if sent.multiword and sent.multiword[-1].first == words + 1:
        raise DataError(path, number, f"found empty node {cols[0]} between range {sent.multiword[-1].first}-"
                                      f"{sent.multiword[-1].last} and its first word; expected it before the range")
    if (cols[6], cols[7]) != ("_", "_"):
        raise DataError(path, number, f"found HEAD {cols[6]!r} and DEPREL {cols[7]!r} on an empty node; expected _ _")
    if cols[8] == "_":
        raise DataError(path, number, "found DEPS _ on an empty node; expected its enhanced heads (head:relation)")
    upos = _upos(path, number, cols[3], reading, blank_ok=True)
    sent.empty.append(EmptyNode(after, index, nfc(cols[1]), cols[2], upos, cols[4], cols[5], cols[8], cols[9]))
    reading.empty_lines.append(number)


def _check_ranges_end(path, reading: _Reading) -> None:
    n = len(reading.sent.forms)
    for token, number in zip(reading.sent.multiword, reading.range_lines):
        if token.last > n:
            raise DataError(path, number, f"found range {token.first}-{token.last} past the last word {n}; "
                                          "expected ranges over words of the sentence")


def _check_tree(path, sent: DepSentence, lines: list[int]) -> None:
    """Heads in range, one root, no cycle: each word is walked up once (linear, not quadratic)."""
    n = len(sent.heads)
    for i, head in enumerate(sent.heads):
        if head > n or head == i + 1:
            raise DataError(path, lines[i], f"found HEAD {head}; expected a HEAD in 0..{n} other than the word itself")
    roots = sum(1 for head in sent.heads if head == 0)
    if roots != 1:
        raise DataError(path, sent.line, f"found {roots} roots (HEAD 0); expected exactly one root")
    state = [2] + [0] * n  # 0: not seen, 1: on the current walk, 2: known to reach the root
    for start in range(1, n + 1):
        walk, node = [], start
        while state[node] == 0:
            state[node] = 1
            walk.append(node)
            node = sent.heads[node - 1]
        if state[node] == 1:
            raise DataError(path, lines[node - 1], "found a cycle through this word; expected a tree")
        for node in walk:
            state[node] = 2


def _check_enhanced(path, reading: _Reading) -> None:
    """Every DEPS item is head:relation with a head that exists: 0, a word or an empty node of the sentence."""
    sent = reading.sent
    ids = {str(i) for i in range(len(sent.forms) + 1)} | {node.id for node in sent.empty}
    columns = [*zip(sent.deps, reading.word_lines), *((node.deps, n) for node, n in zip(sent.empty,
                                                                                          reading.empty_lines))]
    for deps, number in columns:
        if deps == "_":
            continue
        for item in deps.split("|"):
            match = ENHANCED.fullmatch(item)
            if not match:
                raise DataError(path, number, f"found DEPS item {item!r}; expected head:relation, like 4:nsubj")
            if match[1] not in ids:
                raise DataError(path, number, f"found DEPS head {match[1]}, which is not in the sentence; expected "
                                              "0, a word ID or an empty node ID of the sentence")


def write_conllu(sentences: Iterable[DepSentence], out: str | Path | IO[str]) -> None:
    """Sentences as CoNLL-U with their comments, ranges and empty nodes, so that a file read strictly is
    written back byte for byte. A path is written through a temporary file: a failure leaves no partial file."""
    if isinstance(out, (str, Path)):
        write_text_file(out, lambda f: write_conllu(sentences, f))
        return
    for sent in sentences:
        out.write("".join(_sentence_lines(sent)))


def _sentence_lines(sent: DepSentence) -> Iterator[str]:
    yield from (f"# {c}\n" if c else "#\n" for c in sent.comments)
    ranges = {token.first: token for token in sent.multiword}
    empty: dict[int, list[EmptyNode]] = defaultdict(list)
    for node in sent.empty:
        empty[node.after].append(node)
    yield from map(_empty_line, empty[0])
    for i in range(len(sent.forms)):
        if token := ranges.get(i + 1):
            yield f"{token.first}-{token.last}\t{token.form}\t_\t_\t_\t{token.feats or '_'}\t_\t_\t_\t{token.misc}\n"
        cols = [str(i + 1), sent.forms[i], _col(sent.lemmas, i), sent.upos[i], _col(sent.xpos, i),
                _col(sent.feats, i), str(sent.heads[i]), sent.deprels[i], _col(sent.deps, i), _col(sent.misc, i)]
        yield "\t".join(cols) + "\n"
        yield from map(_empty_line, empty[i + 1])
    yield "\n"


def _empty_line(node: EmptyNode) -> str:
    cols = (node.id, node.form, node.lemma, node.upos, node.xpos, node.feats, "_", "_", node.deps, node.misc)
    return "\t".join(cols) + "\n"


def _col(values: list[str], i: int) -> str:
    return values[i] if i < len(values) and values[i] else "_"
