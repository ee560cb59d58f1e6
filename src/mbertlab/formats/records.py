"""Plain records shared by readers, generators and tasks. Downstream code sees only these."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable


@dataclass
class TaggedSentence:
    """A sentence with one tag per token: NER (BIO) or UPOS."""

    tokens: list[str]
    tags: list[str]
    lang: str | None = None  # from WikiANN's `lang:token` prefix, when present
    line: int = 0  # 1-based line of the first token in the source file

    def respelled(self, spell: Callable[[str], str]) -> TaggedSentence:
        """Each token respelled (a derived language, corpus/manipulations.py); the tags stay."""
        return replace(self, tokens=[spell(t) for t in self.tokens])


@dataclass
class MultiwordToken:
    """A CoNLL-U range line such as `1-2  del`: kept only so predictions can be written back."""

    first: int
    last: int
    form: str
    misc: str = "_"
    feats: str = "_"  # `_`, or `Typo=Yes`: the only other value UD allows on a range line


@dataclass
class EmptyNode:
    """A CoNLL-U empty node (`8.1`) of the enhanced graph: not a word, but kept so that a file is written
    back whole (its DEPS, and other words' DEPS, point to it)."""

    after: int  # the word it follows (0: before the first word)
    index: int  # 1, 2, ... among the empty nodes after that word
    form: str
    lemma: str = "_"
    upos: str = "_"
    xpos: str = "_"
    feats: str = "_"
    deps: str = "_"
    misc: str = "_"

    @property
    def id(self) -> str:
        return f"{self.after}.{self.index}"


@dataclass
class DepSentence:
    """A CoNLL-U sentence over syntactic words (ids 1..n); heads are 0 for the root."""

    forms: list[str]
    upos: list[str]
    heads: list[int]
    deprels: list[str]
    lemmas: list[str] = field(default_factory=list)
    xpos: list[str] = field(default_factory=list)
    feats: list[str] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)
    misc: list[str] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)  # raw lines without the leading '# '
    multiword: list[MultiwordToken] = field(default_factory=list)
    line: int = 0
    empty: list[EmptyNode] = field(default_factory=list)  # empty nodes, in file order

    def __len__(self) -> int:
        return len(self.forms)

    @property
    def text(self) -> str:
        for c in self.comments:
            if c.startswith("text ="):
                return c.split("=", 1)[1].strip()
        return " ".join(self.forms)


@dataclass
class PairExample:
    """A sentence pair with a label: XNLI/MultiNLI, or MLDoc's first two sentences."""

    premise: str
    hypothesis: str
    label: str
    lang: str = ""
    hypothesis_lang: str = ""  # set when premise and hypothesis are in different languages
    line: int = 0

    def respelled(self, spell: Callable[[str], str]) -> PairExample:
        """Both texts respelled (a derived language); the label stays."""
        return replace(self, premise=spell(self.premise), hypothesis=spell(self.hypothesis))


@dataclass
class TextExample:
    """A text with a label: MLDoc documents, language-ID sentences."""

    text: str
    label: str
    line: int = 0


UPOS_TAGS = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART", "PRON",
    "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)
OPEN_CLASS_UPOS = ("ADJ", "ADV", "INTJ", "NOUN", "PROPN", "VERB")
XNLI_LABELS = ("entailment", "neutral", "contradiction")
