"""Controlled manipulations of text (K et al. 2020, Liu et al. 2020), each seeded and recorded.

`fake_script` shifts every non-space character into Unicode plane 15 (private use): no real text
uses it, so the fake copy shares no character with any language, and the shift is reversible. K et al.
shift by 200000 (U+30D40 onward, unassigned plane 3); plane 15 is guaranteed never to be assigned.
"""
from __future__ import annotations

import random
import re
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Annotated, Callable, Iterable, Iterator

from pydantic import AfterValidator

from mbertlab.errors import ConfigError
from mbertlab.registry import Registry

PLANE_15 = 0xF0000


class _ShiftTable(dict):
    """A `str.translate` table filled on first sight of each character: whitespace stays, anything else moves
    by `shift` (measured 11x faster than a per-character Python loop on 30 MB of text)."""

    def __init__(self, shift: int):
        super().__init__()
        self.shift = shift

    def __missing__(self, code: int) -> int:
        moved = code if chr(code).isspace() else code + self.shift
        if not 0 <= moved <= 0x10FFFF:
            raise ConfigError(f"fake script: shift {self.shift} moves {chr(code)!r} outside U+0000..U+10FFFF; "
                              "use a smaller shift")
        self[code] = moved
        return moved


@cache
def _table(shift: int) -> _ShiftTable:
    return _ShiftTable(shift)


def fake_script(text: str, shift: int = PLANE_15) -> str:
    return text.translate(_table(shift))


def unfake_script(text: str, shift: int = PLANE_15) -> str:
    return text.translate(_table(-shift))


def window(sentences: Iterable[str], w: int = 20) -> Iterator[str]:
    """Cut sentences into segments of at most w whitespace tokens (Liu et al.: w = 20)."""
    for sentence in sentences:
        words = sentence.split()
        for start in range(0, len(words), w):
            yield " ".join(words[start:start + w])


def permute_words(sentence: str, p: float, rng: random.Random) -> str:
    """Swap p·⌊L/2⌋ disjoint random pairs of whitespace tokens (K et al. §3.2.2 on words)."""
    words = sentence.split()
    n_pairs = int(p * (len(words) // 2))
    positions = rng.sample(range(len(words)), 2 * n_pairs)
    for a, b in zip(positions[0::2], positions[1::2]):
        words[a], words[b] = words[b], words[a]
    return " ".join(words)


def unigram_corpus(sentences: list[str], seed: int) -> list[str]:
    """Same number of sentences and lengths; every word drawn i.i.d. from the unigram distribution."""
    counts = Counter(w for s in sentences for w in s.split())
    words = sorted(counts)
    weights = [counts[w] for w in words]
    rng = random.Random(seed)
    return [" ".join(rng.choices(words, weights, k=len(s.split()))) for s in sentences]


@dataclass(frozen=True)
class ManipulationOptions:
    """Every knob of a whole-file manipulation; each manipulation reads only its own."""
    seed: int = 0  # unigram, permute
    p: float = 1.0  # permute: share of ⌊L/2⌋ word pairs swapped
    w: int = 20  # window: at most w words per segment
    shift: int = PLANE_15  # fake-script: code-point shift


Manipulation = Callable[[list[str], ManipulationOptions], list[str]]


def _fake_script_lines(lines: list[str], opts: ManipulationOptions) -> list[str]:
    return [fake_script(line, opts.shift) for line in lines]


def _unigram_lines(lines: list[str], opts: ManipulationOptions) -> list[str]:
    return unigram_corpus(lines, opts.seed)


def _window_lines(lines: list[str], opts: ManipulationOptions) -> list[str]:
    return list(window(lines, opts.w))


def _permute_lines(lines: list[str], opts: ManipulationOptions) -> list[str]:
    rng = random.Random(opts.seed)  # one stream over the file, so a line's swaps depend on its position
    return [permute_words(line, opts.p, rng) for line in lines]


# The whole-file manipulations by the names `corpus transform` takes; filled here, not by importers.
MANIPULATIONS: Registry[Manipulation] = Registry("manipulation")
for _name, _fn in {
    "unigram": _unigram_lines,
    "window": _window_lines,
    "permute": _permute_lines,
}.items():
    MANIPULATIONS.register(_name)(_fn)

WordMap = Callable[[str], str]
# The manipulations that respell each word alone, keeping a sentence's tokens: they derive a whole language from
# another (`derive: {from, transform}` in a study's data), its text, its task files (tags and sentence pairs stay
# aligned) and its gold lexicon (word -> derived word). Each is also a whole-file manipulation of the same name.
WORD_MAPS: Registry[WordMap] = Registry("word-by-word manipulation")


def map_words(line: str, word_map: WordMap) -> str:
    """The line with every run of non-space characters respelled; the spaces between them stay."""
    return re.sub(r"\S+", lambda m: word_map(m.group()), line)


_LINE_MAPS: dict[str, Callable[[str], str]] = {}


def register_word_map(name: str, word_map: WordMap, lines: Manipulation | None = None,
                      line_map: Callable[[str], str] | None = None) -> None:
    """One entry makes a derived language: the word map, and the whole-file manipulation (`lines`, or the word
    map over every line). `line_map`, where given, does to a whole line what the word map does to each word, only
    faster (a corpus is hundreds of millions of words)."""
    WORD_MAPS.register(name)(word_map)
    MANIPULATIONS.register(name)(lines or (lambda text, opts: [map_words(line, word_map) for line in text]))
    if line_map is not None:
        _LINE_MAPS[name] = line_map


def respell_line(name: str) -> Callable[[str], str]:
    """The derived language's respelling of a whole line: the registered line map, else the word map word by
    word."""
    word_map = WORD_MAPS.get(name)
    return _LINE_MAPS.get(name) or (lambda line: map_words(line, word_map))


# a character shift leaves spaces as they are, so one translate of the line is the word map on every word
register_word_map("fake-script", fake_script, _fake_script_lines, line_map=fake_script)


def _known_word_map(name: str) -> str:
    """The registry's own miss (close names, the known ones) as a validation error of the config key."""
    try:
        WORD_MAPS.get(name)
    except ConfigError as err:
        raise ValueError(str(err)) from None
    return name


WordMapName = Annotated[str, AfterValidator(_known_word_map)]  # a config key naming an entry of WORD_MAPS
