"""What the reader fuzz tests share: small slices of the real shared files, random mutations of them, and a
case runner that tells valid, known-invalid and randomly mutated inputs apart.

A reader passes a case when it returns records or raises a one-line DataError naming the file; any other
exception fails the test, and so does a known-invalid input that is read without error.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import Callable

from hypothesis import event
from hypothesis import strategies as st

from mbertlab.errors import DataError

Lines = list[str]  # lines of a file, each with its "\n"
Inject = Callable[[Lines, st.DataObject], "Lines | bytes"]
TRICKY = ("", "_", " ", "0", "-1", "+1", "\u0663", "\uff13", "1.1", "3-2", "16.0", "NSUBJ", "nsubj:", "B-O", "I-",
          "O", "B-PER-", "entailment", "CCAT", "NOUN", "#", "-DOCSTART-", "a b", "\u00e9", "\u200b", "\t")


def blocks(path: Path, limit: int, keep: Callable[[Lines], bool] = lambda b: True) -> list[Lines]:
    """The first `limit` blank-line-separated blocks of a file that `keep` accepts, each with its blank line."""
    found: list[Lines] = []
    block: Lines = []
    with path.open(encoding="utf-8", newline="") as f:
        for line in f:
            block.append(line)
            if not line.strip():
                if len(block) > 1 and keep(block):
                    found.append(block)
                    if len(found) == limit:
                        break
                block = []
    return found


def lines(path: Path, limit: int) -> Lines:
    with path.open(encoding="utf-8", newline="") as f:
        return [line for line in islice(f, limit) if line.strip()]


@dataclass
class Spec:
    """One format: its reader (records or DataError), its valid pieces, its column separator and the
    injections that make any piece invalid (the invalid classes of the reader issues)."""

    name: str
    read: Callable[[Path], object]
    files: list[list]  # per shared file, its first blocks (Lines) or lines (str); a valid input is 1..`most`
    # consecutive pieces of one file (files may differ in layout: 2 or 4 NER columns)
    sep: str | None  # None: a tab or a space, as the line has it (NER columns)
    invalid: dict[str, Inject] = field(default_factory=dict)
    most: int = 3
    check_valid: Callable[[Path, bytes, object], None] | None = None


def valid_input(spec: Spec, data: st.DataObject) -> Lines:
    pieces = pick(data, spec.files, "file")
    start = data.draw(st.integers(0, len(pieces) - 1), label="piece")
    return joined(pieces[start:start + data.draw(st.integers(1, spec.most), label="pieces")])


def joined(pieces: list) -> Lines:
    return [line for piece in pieces for line in ([piece] if isinstance(piece, str) else piece)]


def run_case(spec: Spec, path: Path, data: st.DataObject) -> str:
    """One case: a valid slice (must be read), a known-invalid one (must be rejected) or a random mutation;
    returns what happened ("valid: accepted", ...)."""
    original = valid_input(spec, data)
    kind = data.draw(st.sampled_from(("valid", "invalid", "invalid", "mutated", "mutated", "mutated")), label="kind")
    name = ""
    if kind == "valid":
        content = "".join(original).encode("utf-8")
    elif kind == "invalid":
        name = data.draw(st.sampled_from(sorted(spec.invalid)), label="invalid class")
        injected = spec.invalid[name](list(original), data)
        content = injected if isinstance(injected, bytes) else "".join(injected).encode("utf-8")
    else:
        content = mutate(original, spec.sep, data)
    path.write_bytes(content)
    records, error = read(spec, path)
    outcome = f"{kind}: {'accepted' if error is None else 'rejected'}"
    event(outcome)
    if kind == "valid":
        if error is not None:
            raise ValidRejected(f"valid input rejected: {error}")
        if spec.check_valid:
            spec.check_valid(path, content, records)
    elif kind == "invalid" and error is None:
        raise InvalidAccepted(f"invalid input ({name}) accepted: {content[:300]!r}")
    return outcome


class ValidRejected(AssertionError):
    """A valid slice of a real file was rejected."""


class InvalidAccepted(AssertionError):
    """An input with a known invalid class injected was read without error."""


class BadMessage(AssertionError):
    """A DataError that does not name the file, spans lines, or does not say what was expected."""


def read(spec: Spec, path: Path) -> tuple[object, DataError | None]:
    try:
        return spec.read(path), None
    except DataError as err:  # anything else propagates and fails the test (a crash)
        message = str(err)
        if err.path != str(path) or "\n" in message or "expected" not in message:
            raise BadMessage(message) from None
        return None, err


def mutate(original: Lines, sep: str | None, data: st.DataObject) -> bytes:
    """One to three random edits: whole lines, columns, or raw bytes."""
    edited = list(original)
    for _ in range(data.draw(st.integers(1, 3), label="edits")):
        op = data.draw(st.sampled_from(sorted(LINE_OPS) + ["bytes"]), label="op")
        if op != "bytes" and edited:
            edited = LINE_OPS[op](edited, sep, data)
    raw = "".join(edited).encode("utf-8")
    if data.draw(st.booleans(), label="byte edit"):
        raw = byte_edit(raw, data)
    return raw


def _index(seq, data: st.DataObject) -> int:
    return data.draw(st.integers(0, len(seq) - 1), label="index")


def separator(line: str, sep: str | None) -> str:
    """The format's separator, or (None: NER columns) a tab where the line has one, else a space."""
    return sep or ("\t" if "\t" in line else " ")


def with_column(line: str, col: int, value: str, sep: str | None = "\t") -> str:
    """The line with column `col` (negative: from the end) set to `value`."""
    sep = separator(line, sep)
    cols = line.rstrip("\n").split(sep)
    cols[col] = value
    return sep.join(cols) + "\n"


def pick(data: st.DataObject, choices, label: str = "choice"):
    return data.draw(st.sampled_from(list(choices)), label=label)


def _set_column(edited: Lines, sep: str | None, data: st.DataObject) -> Lines:
    i = _index(edited, data)
    col = _index(edited[i].split(separator(edited[i], sep)), data)
    edited[i] = with_column(edited[i], col, data.draw(st.sampled_from(TRICKY) | st.text(max_size=6)), sep)
    return edited


def _drop_column(edited: Lines, sep: str | None, data: st.DataObject) -> Lines:
    i = _index(edited, data)
    sep = separator(edited[i], sep)
    cols = edited[i].rstrip("\n").split(sep)
    del cols[_index(cols, data)]
    edited[i] = sep.join(cols) + "\n"
    return edited


LINE_OPS = {
    "drop line": lambda e, s, d: e[:(i := _index(e, d))] + e[i + 1:],
    "duplicate line": lambda e, s, d: e[:(i := _index(e, d))] + [e[i]] + e[i:],
    "swap lines": lambda e, s, d: _swap(e, _index(e, d), _index(e, d)),
    "set column": _set_column,
    "drop column": _drop_column,
    "add column": lambda e, s, d: e[:(i := _index(e, d))] + [e[i].rstrip("\n") + separator(e[i], s) + "x\n"]
    + e[i + 1:],
    "insert blank line": lambda e, s, d: e[:(i := _index(e, d))] + ["\n"] + e[i:],
}


def _swap(edited: Lines, i: int, j: int) -> Lines:
    edited[i], edited[j] = edited[j], edited[i]
    return edited


def byte_edit(raw: bytes, data: st.DataObject) -> bytes:
    if not raw:
        return raw
    op = data.draw(st.sampled_from(("flip", "insert", "truncate", "cr only", "crlf")), label="byte op")
    i = data.draw(st.integers(0, len(raw) - 1), label="byte")
    if op == "flip":
        return raw[:i] + bytes([data.draw(st.integers(0, 255), label="value")]) + raw[i + 1:]
    if op == "insert":
        return raw[:i] + data.draw(st.binary(min_size=1, max_size=4), label="bytes") + raw[i:]
    if op == "truncate":
        return raw[:i]
    return raw.replace(b"\n", b"\r" if op == "cr only" else b"\r\n")


def token_lines(edited: Lines, skip: tuple[str, ...] = ("#", "-DOCSTART-")) -> list[int]:
    """Indexes of the data lines (not blank, not comments or DOCSTART)."""
    return [i for i, line in enumerate(edited) if line.strip() and not line.startswith(skip)]


def common_invalid() -> dict[str, Inject]:
    """Invalid in every format: a NUL byte, CR-only line ends, a byte that is not UTF-8."""
    return {
        "NUL byte": lambda e, d: _insert_in_line(e, d, "\0"),
        "CR-only line ends": lambda e, d: "".join(e).replace("\n", "\r").encode("utf-8"),
        "not UTF-8": lambda e, d: _insert_in_line(e, d, "\udcff"),
    }


def _insert_in_line(edited: Lines, data: st.DataObject, text: str) -> bytes:
    i = _index(edited, data)
    j = data.draw(st.integers(0, len(edited[i]) - 1), label="at")
    edited[i] = edited[i][:j] + text + edited[i][j:]
    return "".join(edited).encode("utf-8", "surrogateescape")
