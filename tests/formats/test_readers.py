"""Crafted cases: readers are strict and name file and line (fuzzing: test_fuzz.py)."""
from __future__ import annotations

import io

import pytest
from mbertlab.errors import DataError
from mbertlab.formats.classification import read_langid, read_mldoc
from mbertlab.formats.common import ReadStats
from mbertlab.formats.conllu import read_conllu, strip_subtype, write_conllu
from mbertlab.formats.muse import read_dictionary
from mbertlab.formats.ner_columns import iob1_to_bio, read_ner
from mbertlab.formats.text import read_lines
from mbertlab.formats.udpos import read_udpos_tsv
from mbertlab.formats.xnli import read_xnli

GOOD = """# sent_id = 1
# text = Del mar.
1-2\tDel\t_\t_\t_\t_\t_\t_\t_\t_
1\tDe\tde\tADP\t_\t_\t3\tcase\t_\t_
2\tel\tel\tDET\t_\t_\t3\tdet\t_\t_
2.1\tx\tx\tX\t_\t_\t_\t_\t3:dep\t_
3\tmar\tmar\tNOUN\t_\t_\t0\troot\t_\t_
4\t.\t.\tPUNCT\t_\t_\t3\tpunct\t_\t_

"""


def write(tmp_path, text: str, name: str = "f.conllu", encoding: str = "utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return path


def tok(i, form, upos, head, rel):
    return f"{i}\t{form}\t_\t{upos}\t_\t_\t{head}\t{rel}\t_\t_\n"


def test_conllu_multiword_and_empty_nodes(tmp_path):
    [s] = list(read_conllu(write(tmp_path, GOOD)))
    assert s.forms == ["De", "el", "mar", "."] and s.heads == [3, 3, 0, 3]
    assert s.multiword[0].form == "Del" and (s.multiword[0].first, s.multiword[0].last) == (1, 2)
    assert s.text == "Del mar."
    assert [(e.id, e.form, e.deps) for e in s.empty] == [("2.1", "x", "3:dep")]
    out = io.StringIO()
    write_conllu([s], out)
    assert out.getvalue() == GOOD  # ranges and empty nodes are written back where they were


@pytest.mark.parametrize("body, line, message", [
    (tok(1, "a", "NOUN", 0, "root") + tok(2, "b", "VERB", 3, "obj") + tok(3, "c", "NOUN", 2, "obj"), 2, "cycle"),
    (tok(1, "a", "NOUN", 2, "nsubj") + tok(2, "b", "VERB", 1, "root"), 1, "exactly one root"),
    (tok(1, "a", "NOUN", 0, "root") + tok(2, "b", "VERB", 0, "root"), 1, "exactly one root"),
    (tok(1, "a", "NOUN", 5, "root"), 1, "HEAD in 0..1"),
    (tok(1, "a", "NOUN", "x", "root"), 1, "integer HEAD"),
    (tok(1, "a", "NOUN", 0, "root").replace("\t_\t_\n", "\n"), 1, "10 tab-separated columns"),
    (tok(1, "a", "NOUNISH", 0, "root"), 1, "UPOS"),
    (tok(1, " ", "NOUN", 0, "root"), 1, "whitespace around FORM"),
])
def test_conllu_errors_name_file_and_line(tmp_path, body, line, message):
    path = write(tmp_path, "# c\n" * 0 + body + "\n")
    with pytest.raises(DataError, match=message) as err:
        list(read_conllu(path))
    assert err.value.path == str(path) and err.value.line == line


def test_conllu_skip_invalid_counts(tmp_path):
    bad = tok(1, "a", "NOUN", 0, "root") + tok(2, "b", "VERB", 0, "root")
    path = write(tmp_path, GOOD + bad + "\n" + GOOD)
    stats = ReadStats()
    assert len(list(read_conllu(path, skip_invalid=True, stats=stats))) == 2
    assert (stats.read, stats.skipped) == (2, 1) and "one root" in stats.reasons[0]


def test_conllu_v1_labels_mapped_only_on_request(tmp_path):
    body = tok(1, "y", "CONJ", 2, "cc") + tok(2, "b", "VERB", 0, "root") + tok(3, "c", "NOUN", 2, "dobj")
    path = write(tmp_path, body + "\n")
    with pytest.raises(DataError, match="UPOS"):
        list(read_conllu(path))
    [s] = list(read_conllu(path, v1_to_v2=True))
    assert s.upos[0] == "CCONJ" and s.deprels[2] == "obj"
    assert strip_subtype("nmod:poss") == "nmod" and strip_subtype("obj") == "obj"
    [s] = list(read_conllu(path, any_labels=True))  # a system output: labels as written, the tree still checked
    assert s.upos[0] == "CONJ" and s.deprels[2] == "dobj"
    cycle = tok(1, "y", "X", 2, "dobj") + tok(2, "b", "X", 1, "root")
    with pytest.raises(DataError, match="root"):
        list(read_conllu(write(tmp_path, cycle + "\n", "cycle.conllu"), any_labels=True))


def test_invalid_utf8_names_the_line(tmp_path):
    path = write(tmp_path, b"a\tO\n\nb\tO\n\xff\xfe\tO\n", "x.txt")
    with pytest.raises(DataError) as err:
        list(read_ner(path))
    assert err.value.line == 4 and "UTF-8" in str(err.value)


def test_ner_iob1_docstart_and_wikiann(tmp_path):
    path = write(tmp_path, "-DOCSTART- -X- O O\n\nEU NNP I-NP I-ORG\nrejects VBZ I-VP O\n"
                           "Peter NNP I-NP I-PER\nBlack NNP I-NP I-PER\nJohn NNP I-NP B-PER\n\n", "eng.txt")
    [s] = list(read_ner(path))
    assert s.tags == ["B-ORG", "O", "B-PER", "I-PER", "B-PER"]
    wiki = write(tmp_path, "en:New\tB-LOC\nen:York\tI-LOC\n\n", "wikiann.txt")
    [w] = list(read_ner(wiki))
    assert w.lang == "en" and w.tokens == ["New", "York"]
    assert iob1_to_bio(["I-A", "I-B", "O", "I-B"]) == ["B-A", "B-B", "O", "B-B"]


def test_ner_label_set(tmp_path):
    path = write(tmp_path, "a\tB-MISC\n\n", "x.txt")
    with pytest.raises(DataError, match="declared set") as err:
        list(read_ner(path, labels=["O", "B-PER", "I-PER"]))
    assert err.value.line == 1


def test_xnli_header_and_headerless(tmp_path):
    header = write(tmp_path, "language\tgold_label\tsentence1\tsentence2\nde\tcontradictory\tA\tB\nen\tneutral\tC\tD\n",
                   "xnli.tsv")
    pairs = list(read_xnli(header))
    assert [(p.lang, p.label) for p in pairs] == [("de", "contradiction"), ("en", "neutral")]
    assert [p.lang for p in read_xnli(header, languages=["en"])] == ["en"]
    bad = write(tmp_path, "A\tB\tmaybe\n", "dev-xx.tsv")
    with pytest.raises(DataError, match="label") as err:
        list(read_xnli(bad))
    assert err.value.line == 1


def test_small_formats(tmp_path):
    assert read_dictionary(write(tmp_path, "a b\na c\na b\nd e\n", "d.txt")) == {"a": ["b", "c"], "d": ["e"]}
    assert [e.label for e in read_mldoc(write(tmp_path, "CCAT\tone two\nMCAT\tthree\n", "m.txt"))] == ["CCAT", "MCAT"]
    with pytest.raises(DataError):
        list(read_mldoc(write(tmp_path, "XCAT\tone\n", "m2.txt")))
    texts = write(tmp_path, "hello\nworld\n", "t.txt")
    labels = write(tmp_path, "en\nde\n", "l.txt")
    assert [(e.text, e.label) for e in read_langid(texts, labels)] == [("hello", "en"), ("world", "de")]
    with pytest.raises(DataError, match="as many labels"):
        list(read_langid(texts, write(tmp_path, "en\n", "l2.txt")))
    assert list(read_lines(write(tmp_path, "Cafe\u0301\n\n  x  \n", "n.txt"))) == ["Caf\u00e9", "x"]
    udpos = read_udpos_tsv(write(tmp_path, "a\tNOUN\nb\tVERB\n\nc\tX\n", "u.tsv"))
    assert [s.tags for s in udpos] == [["NOUN", "VERB"], ["X"]]
