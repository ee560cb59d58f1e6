"""Writers for generated sentences, in the same formats as real data (text, CoNLL-U, NER columns, MUSE)."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mbertlab.data.generate.realise import Spelling, Token


def _open(path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    return path.open("w", encoding="utf-8", newline="\n")


def write_text_tokens(path: Path, sentences: list[list["Token"]]) -> None:
    with _open(path) as f:
        for s in sentences:
            f.write(" ".join(t.form for t in s) + "\n")


def write_conllu_tokens(path: Path, sentences: list[list["Token"]], prefix: str) -> None:
    with _open(path) as f:
        for i, s in enumerate(sentences, 1):
            f.write(f"# sent_id = {prefix}-{i}\n# text = {' '.join(t.form for t in s)}\n")
            for j, t in enumerate(s, 1):
                f.write(f"{j}\t{t.form}\t{t.form}\t{t.upos}\t_\t_\t{t.head}\t{t.deprel}\t_\t_\n")
            f.write("\n")


def write_ner_tokens(path: Path, sentences: list[list["Token"]]) -> None:
    with _open(path) as f:
        for s in sentences:
            for t in s:
                f.write(f"{t.form}\t{t.ner}\n")
            f.write("\n")


def write_lexicon(path: Path, source: "Spelling", target: "Spelling") -> None:
    """The gold bilingual lexicon: one line per concept, `source_form target_form` (MUSE format)."""
    with _open(path) as f:
        for key, form in source.lexicon.items():
            if key[0] != "PUNCT":
                f.write(f"{form} {target.lexicon[key]}\n")
