"""Each invalid class from the reader issues is a one-line DataError naming file, line and what was expected;
format guessing goes by whole words of the name; the tree check is linear; writers leave no partial file."""
from __future__ import annotations

import subprocess
import sys
import time

import pytest

from mbertlab.errors import DataError
from mbertlab.formats.classification import read_mldoc
from mbertlab.formats.common import ReadStats
from mbertlab.formats.conllu import read_conllu, write_conllu
from mbertlab.formats.guess import guess_format
from mbertlab.formats.muse import read_dictionary
from mbertlab.formats.ner_columns import read_ner
from mbertlab.formats.records import DepSentence
from mbertlab.formats.text import read_lines
from mbertlab.formats.udpos import read_udpos_tsv
from mbertlab.formats.xnli import read_xnli

SENTENCE = (
    "# text = Del mar.\n"
    "1-2\tDel\t_\t_\t_\t_\t_\t_\t_\t_\n"
    "1\tDe\tde\tADP\t_\t_\t3\tcase\t3:case\t_\n"
    "2\tel\tel\tDET\t_\t_\t3\tdet\t3:det\t_\n"
    "3\tmar\tmar\tNOUN\t_\t_\t0\troot\t0:root\t_\n"
    "3.1\tvi\tver\tVERB\t_\t_\t_\t_\t3:conj\t_\n"
    "4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t3:punct\t_\n"
    "\n"
)
WORD3 = "3\tmar\tmar\tNOUN\t_\t_\t0\troot\t0:root\t_\n"
WORD2 = "2\tel\tel\tDET\t_\t_\t3\tdet\t3:det\t_\n"
RANGE = "1-2\tDel\t_\t_\t_\t_\t_\t_\t_\t_\n"


def edit(old: str, new: str) -> str:
    assert old in SENTENCE
    return SENTENCE.replace(old, new, 1)


CONLLU_INVALID = {  # name: (file text, line of the error, words of the message)
    "word ID 2.x": (edit("2\tel", "2.x\tel"), 4, "ID '2.x'"),
    "word ID 2.0": (edit("2\tel", "2.0\tel"), 4, "ID '2.0'"),
    "empty node 3.2 first": (edit("3.1\t", "3.2\t"), 6, "expected 3.1"),
    "empty node 4.1 early": (edit("3.1\t", "4.1\t"), 6, "expected 3.1"),
    "cut without final empty line": (SENTENCE[:-1], 7, "end of the file inside a sentence"),
    "cut mid-sentence": (SENTENCE[:SENTENCE.index("3.1")], 5, "end of the file inside a sentence"),
    "DEPREL empty": (edit("\tdet\t", "\t\t"), 4, "empty DEPREL"),
    "DEPREL _": (edit("\tdet\t", "\t_\t"), 4, "DEPREL '_'"),
    "DEPREL NSUBJ": (edit("\tdet\t", "\tNSUBJ\t"), 4, "DEPREL 'NSUBJ'"),
    "DEPREL nsubj:": (edit("\tdet\t", "\tnsubj:\t"), 4, "DEPREL 'nsubj:'"),
    "DEPREL not UD": (edit("\tdet\t", "\tsubject\t"), 4, "DEPREL 'subject'"),
    "HEAD +3": (edit("\t3\tdet", "\t+3\tdet"), 4, "HEAD '+3'"),
    "HEAD space 3": (edit("\t3\tdet", "\t 3\tdet"), 4, "whitespace around HEAD"),
    "HEAD Arabic-Indic 3": (edit("\t3\tdet", "\t\u0663\tdet"), 4, "HEAD '\u0663'"),
    "HEAD full-width 3": (edit("\t3\tdet", "\t\uff13\tdet"), 4, "HEAD '\uff13'"),
    "HEAD 03": (edit("\t3\tdet", "\t03\tdet"), 4, "HEAD '03'"),
    "range reversed": (edit("1-2\t", "2-1\t"), 2, "range 2-1"),
    "range of one word": (edit("1-2\t", "1-1\t"), 2, "first < last"),
    "range past the end": (edit(WORD3, "3-5\tmarx\t_\t_\t_\t_\t_\t_\t_\t_\n" + WORD3), 5, "past the last word 4"),
    "range after its words": (edit(RANGE, "").replace(WORD2, WORD2 + RANGE), 4, "range 1-2 where word 3"),
    "range with a LEMMA": (edit("Del\t_", "Del\tdel"), 2, "LEMMA 'del' on a range line"),
    "empty LEMMA column": (edit("el\tel\t", "el\t\t"), 4, "empty LEMMA"),
    "empty MISC column": (edit("3:det\t_", "3:det\t"), 4, "empty MISC"),
    "9 columns": (edit("3:det\t_", "3:det"), 4, "found 9 columns"),
    "FEATS not Feature=Value": (edit("el\tDET\t_\t_", "el\tDET\t_\tdefinite"), 4, "FEATS 'definite'"),
    "DEPS head not in sentence": (edit("3:det", "7:det"), 4, "DEPS head 7"),
    "DEPS head empty node not there": (edit("3:det", "3.2:det"), 4, "DEPS head 3.2"),
    "empty node with HEAD": (edit("\t_\t_\t3:conj", "\t3\tconj\t3:conj"), 6, "on an empty node"),
    "comment after words": (edit(WORD3, WORD3 + "# note\n"), 6, "comment after word lines"),
    "two roots": (edit("\t3\tdet", "\t0\tdet"), 1, "exactly one root"),
    "cycle": (edit("\t3\tcase", "\t2\tcase").replace("\t3\tdet", "\t1\tdet"), 3, "cycle"),
    "CRLF": (SENTENCE.replace("\n", "\r\n"), 1, "carriage return"),
    "whitespace-only line": (SENTENCE + " \n" + SENTENCE, 9, "only whitespace"),
    "extra empty line": (SENTENCE + "\n" + SENTENCE, 9, "extra empty line"),
    "NUL byte": (edit("mar\tmar", "m\0ar\tmar"), 5, "NUL"),
}


def write(tmp_path, content: str | bytes, name: str):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return path


def assert_rejected(reader, path, line: int | None, words: str) -> None:
    with pytest.raises(DataError) as err:
        list(reader(path))
    message = str(err.value)
    assert (err.value.path, err.value.line) == (str(path), line), message
    assert words in message and "expected" in message and "\n" not in message, message


def test_valid_sentence_round_trips(tmp_path):
    path = write(tmp_path, SENTENCE * 2, "ok.conllu")
    sentences = list(read_conllu(path))
    assert [len(s) for s in sentences] == [4, 4] and sentences[0].empty[0].id == "3.1"
    write_conllu(sentences, tmp_path / "out.conllu")
    assert (tmp_path / "out.conllu").read_text(encoding="utf-8") == SENTENCE * 2


@pytest.mark.parametrize("name", CONLLU_INVALID)
def test_conllu_invalid(tmp_path, name):
    text, line, words = CONLLU_INVALID[name]
    assert_rejected(read_conllu, write(tmp_path, text, "bad.conllu"), line, words)


NER_INVALID = {
    "CoNLL-2003 line without its NER column": (
        "EU NNP I-NP I-ORG\nrejects VBZ I-VP\nGerman JJ I-NP I-MISC\n\n", 2, "found 3 columns; expected 4"),
    "tag B-O": ("EU\tB-O\n\n", 1, "tag 'B-O'"),
    "tag I-O": ("EU\tI-O\n\n", 1, "tag 'I-O'"),
    "tag B-PER-": ("EU\tB-PER-\n\n", 1, "tag 'B-PER-'"),
    "CR-only line ends": ("EU\tB-ORG\rrejects\tO\r\r", 1, "carriage return"),
    "empty middle column": ("EU\t\tB-ORG\n\n", 1, "empty column"),
}


@pytest.mark.parametrize("name", NER_INVALID)
def test_ner_invalid(tmp_path, name):
    text, line, words = NER_INVALID[name]
    assert_rejected(read_ner, write(tmp_path, text, "ner.txt"), line, words)


@pytest.mark.parametrize("line, found", [("A\tB\tneutral\tx\n", 4), ("A\tB\tneutral\tx\ty\n", 5), ("A\tneutral\n", 2)])
def test_xnli_needs_exactly_three_columns(tmp_path, line, found):
    path = write(tmp_path, "P\tH\tentailment\n" + line, "dev-en.tsv")
    assert_rejected(read_xnli, path, 2, f"found {found} tab-separated columns; expected 3")


def test_xnli_header_width(tmp_path):
    path = write(tmp_path, "language\tgold_label\tsentence1\tsentence2\nde\tneutral\tA\tB\textra\n", "xnli.tsv")
    assert_rejected(read_xnli, path, 2, "found 5 tab-separated columns; expected 4")


@pytest.mark.parametrize("encoding, words", [("utf-16-le", "NUL byte"), ("utf-16-be", "NUL byte"),
                                             ("utf-16", "invalid UTF-8")])
def test_text_in_utf16_is_rejected(tmp_path, encoding, words):
    path = write(tmp_path, "Hello world.\nSecond line.\n".encode(encoding), "en.txt")
    assert_rejected(read_lines, path, 1, words)


@pytest.mark.parametrize("reader, content", [(read_udpos_tsv, "a\tNOUN\rb\tX\r"), (read_mldoc, "CCAT\ta\rGCAT\tb"),
                                             (read_dictionary, "a b\rc d\r"), (read_lines, "one\rtwo\r")])
def test_cr_only_line_ends_are_rejected_everywhere(tmp_path, reader, content):
    assert_rejected(reader, write(tmp_path, content, "f.txt"), 1, "carriage return")


@pytest.mark.parametrize("path, fmt", [
    ("partner/en.txt", "text"), ("online_news.txt", "text"), ("pos_tagger_notes/readme.md", "udpos"),
    ("en_ewt-ud-test.conllu", "conllu"), ("ner/conll2003/eng.testa", "ner"), ("ner/masakhaner/yor/train.txt", "ner"),
    ("xnli/xtreme/dev-en.tsv", "xnli"), ("udpos_xtreme/dev-en.tsv", "udpos"), ("muse/en-de.txt", "muse"),
    ("wikiann-en.txt", "ner"), ("en-de.dict.txt", "muse"), ("mldoc/train.1000.en", "mldoc"),
])
def test_guess_format_by_whole_words(tmp_path, path, fmt):
    file = tmp_path / "data" / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text("x\n", encoding="utf-8")
    assert guess_format(file) == fmt


def test_a_directory_is_named_as_one(tmp_path):
    with pytest.raises(DataError, match="found a directory; expected a data file"):
        guess_format(tmp_path)
    with pytest.raises(DataError, match="directory"):
        list(read_conllu(tmp_path))
    out = subprocess.run([sys.executable, "-m", "mbertlab", "data", "check", str(tmp_path)], capture_output=True,
                         text=True)
    assert out.returncode == 1 and out.stderr.strip() == f"error: {tmp_path}: found a directory; expected a data file"


def test_tree_check_is_linear(tmp_path):
    n = 8000
    words = "".join(f"{i}\tw\t_\tNOUN\t_\t_\t{i - 1}\t{'root' if i == 1 else 'dep'}\t_\t_\n" for i in range(1, n + 1))
    path = write(tmp_path, words + "\n", "chain.conllu")
    start = time.perf_counter()
    [sentence] = read_conllu(path)
    assert len(sentence) == n and time.perf_counter() - start < 2  # quadratic: 6.2 s on the machine
    cycle = (words.replace("1\tw\t_\tNOUN\t_\t_\t0\troot", f"1\tw\t_\tNOUN\t_\t_\t{n}\tdep")
             + f"{n + 1}\tr\t_\tX\t_\t_\t0\troot\t_\t_\n")  # one cycle through all 8,000 words
    assert_rejected(read_conllu, write(tmp_path, cycle + "\n", "cycle.conllu"), 1, "cycle")


def test_a_failed_write_leaves_no_file(tmp_path):
    good = list(read_conllu(write(tmp_path, SENTENCE, "ok.conllu")))[0]
    broken = DepSentence(["a", "b"], ["NOUN"], [0], ["root"])  # fewer tags than words
    out = tmp_path / "pred.conllu"
    with pytest.raises(IndexError):
        write_conllu([good, broken], out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.conllu"]


def test_skip_invalid_skips_structural_errors_in_order(tmp_path):
    """An extra empty line or a cut last sentence is skipped and counted like a malformed sentence."""
    text = SENTENCE + "\n" + SENTENCE + SENTENCE[:SENTENCE.index("3.1")]
    stats = ReadStats()
    assert len(list(read_conllu(write(tmp_path, text, "f.conllu"), skip_invalid=True, stats=stats))) == 2
    assert (stats.read, stats.skipped) == (2, 2)
    assert ":9: found an extra empty line" in stats.reasons[0] and "end of the file" in stats.reasons[1]


def test_ner_layout_comes_from_the_first_sentence_read(tmp_path):
    """A bad first sentence, skipped, does not set the column count the rest of the file is held to."""
    path = write(tmp_path, "EU NNP I-ORG\nrejects VBZ I-VP O\n\nPeter NNP I-NP I-PER\nBlack NNP I-NP I-PER\n\n"
                           "Bonn NNP I-LOC\n\n", "eng.txt")
    stats = ReadStats()
    assert [s.tokens for s in read_ner(path, skip_invalid=True, stats=stats)] == [["Peter", "Black"]]
    assert stats.skipped == 2 and ":2: found 4 columns; expected 3, as on line 1" in stats.reasons[0]
    assert ":7: found 3 columns; expected 4, as on line 4" in stats.reasons[1]
