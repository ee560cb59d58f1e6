from __future__ import annotations

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import stats

from mbertlab.cli.main import run
from mbertlab.store.results import ResultRow, open_results


def _add(work, rows):
    open_results(work).add(rows)


def test_regress_writes_coefficients_equal_to_statsmodels(tmp_path, capsys):
    rng = np.random.default_rng(0)
    langs = [f"l{i}" for i in range(30)]
    size = rng.integers(100, 10_000, size=30)
    wiki = rng.normal(size=30)
    f1 = 0.1 + 0.05 * np.log2(size) + 0.02 * wiki + rng.normal(scale=0.01, size=30)
    _add(tmp_path, [ResultRow("f1", float(v), task="ner", test_lang=l, extra={"train_size": int(s)})
                    for l, v, s in zip(langs, f1, size)])
    _add(tmp_path, [ResultRow("wiki_size", float(w), test_lang=l) for l, w in zip(langs, wiki)])
    assert run(["-w", str(tmp_path), "analyze", "regress", "--score", "f1", "--factors",
                "log2:train_size,wiki_size", "--task", "ner"]) == 0
    x = sm.add_constant(np.column_stack([np.log2(size), wiki]))
    ref = sm.OLS(f1, x).fit()
    rows = open_results(tmp_path).query(task="regress", mode="multivariate")
    coef = {r.metric: r.value for r in rows}
    assert coef["coef:log2:train_size"] == pytest.approx(ref.params[1])
    assert coef["coef:wiki_size"] == pytest.approx(ref.params[2]) and coef["r2"] == pytest.approx(ref.rsquared)
    lr = open_results(tmp_path).query(metric="lr_test")
    assert len(lr) == 2 and "LR test" in capsys.readouterr().out


def test_correlate_equals_scipy_and_plots(tmp_path):
    pairs = [("en", t) for t in ("de", "fr", "es", "ru", "zh")]
    overlap = [0.6, 0.5, 0.55, 0.2, 0.05]
    acc = [0.8, 0.7, 0.78, 0.5, 0.3]
    _add(tmp_path, [ResultRow("p_type", o, train_lang=s, test_lang=t) for (s, t), o in zip(pairs, overlap)])
    _add(tmp_path, [ResultRow("accuracy", a, task="xnli", train_lang=s, test_lang=t) for (s, t), a in zip(pairs, acc)])
    _add(tmp_path, [ResultRow("accuracy", 0.9, task="xnli", train_lang="en", test_lang="en")])  # not zero-shot
    assert run(["-w", str(tmp_path), "analyze", "correlate", "--score", "accuracy"]) == 0
    [row] = open_results(tmp_path).query(metric="pearson_r")
    ref = stats.pearsonr(overlap, acc)
    assert row.value == pytest.approx(ref.statistic) and row.extra["p_value"] == pytest.approx(ref.pvalue)
    assert (tmp_path / "analysis" / "correlate-accuracy-p_type.png").stat().st_size > 1000


def test_layers_plot(tmp_path, capsys):
    _add(tmp_path, [ResultRow("accuracy", 0.5 + 0.1 * l, task="langid", extra={"layer": l}) for l in range(3)])
    assert run(["-w", str(tmp_path), "analyze", "layers", "--plot", str(tmp_path / "l.png")]) == 0
    assert "0:0.5000  1:0.6000  2:0.7000" in capsys.readouterr().out and (tmp_path / "l.png").exists()


def _vectors(path, vecs):
    path.write_text(f"{len(vecs)} 2\n" + "".join(f"{w} {v[0]} {v[1]}\n" for w, v in vecs.items()), encoding="utf-8")


def test_retrieve_static_with_pos(tmp_path, capsys):
    _vectors(tmp_path / "src.txt", {"dog": (1, 0), "cat": (0.9, 0.2), "the": (0.1, 1)})
    _vectors(tmp_path / "tgt.txt", {"hund": (1, 0), "katze": (0, 1), "der": (0.2, 1)})
    (tmp_path / "d.txt").write_text("dog hund\ncat katze\nthe der\n", encoding="utf-8")
    (tmp_path / "t.conllu").write_text("1\tthe\t_\tDET\t_\t_\t2\tdet\t_\t_\n2\tdog\t_\tNOUN\t_\t_\t0\troot\t_\t_\n"
                                       "3\tcat\t_\tNOUN\t_\t_\t2\tobj\t_\t_\n\n", encoding="utf-8")
    assert run(["-w", str(tmp_path), "retrieve", "--src-emb", str(tmp_path / "src.txt"), "--tgt-emb",
                str(tmp_path / "tgt.txt"), "--dict", str(tmp_path / "d.txt"), "--treebank-src",
                str(tmp_path / "t.conllu")]) == 0
    # hand ranks: dog->hund 1; cat: cos to hund .976 > der .39 > katze .217 -> 3; the->der 1
    got = {r.metric: r.value for r in open_results(tmp_path).query(task="retrieval")}
    assert got == pytest.approx({"mrr": (1 + 1 / 3 + 1) / 3, "p@1": 2 / 3, "p@5": 1.0, "mrr_NOUN": (1 + 1 / 3) / 2,
                                 "mrr_open": (1 + 1 / 3) / 2, "mrr_closed": 1.0})
    assert "mrr_NOUN" in capsys.readouterr().out


def test_retrieve_needs_one_kind_of_vectors(tmp_path):
    (tmp_path / "d.txt").write_text("a b\n", encoding="utf-8")
    assert run(["-w", str(tmp_path), "retrieve", "--dict", str(tmp_path / "d.txt")]) == 1


def test_embed(tmp_path):
    from gensim.models import KeyedVectors

    from mbertlab.tokenizers.train import TokenizerConfig, train_tokenizer_into

    text = tmp_path / "x.txt"
    text.write_text("a b c d\nb c d e\n" * 30, encoding="utf-8")
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=50, languages=["x"]), {"x": text}, tmp_path / "tok")
    assert run(["-w", str(tmp_path), "embed", "--tokenizer", str(tmp_path / "tok"), "--out", str(tmp_path / "v"),
                "--method", "glove", "--dim", "4", str(text)]) == 0
    kv = KeyedVectors.load_word2vec_format(str(tmp_path / "v" / "vectors.txt"))
    assert sorted(kv.index_to_key) == ["a", "b", "c", "d", "e"] and kv.vector_size == 4


def _tiny_pair_model(tmp_path):
    """A random 2-layer BERT with a word tokenizer over a two-sentence 'parallel' pair, and its dictionary."""
    from transformers import BertConfig, BertModel

    from mbertlab.tokenizers.train import TokenizerConfig, load_tokenizer, train_tokenizer_into

    src, tgt = tmp_path / "src.txt", tmp_path / "tgt.txt"
    src.write_text("dog runs\ncat sleeps\n" * 3, encoding="utf-8")
    tgt.write_text("hund rennt\nkatze schlaeft\n" * 3, encoding="utf-8")
    model_dir = tmp_path / "model"
    train_tokenizer_into(TokenizerConfig(kind="word", vocab_size=50, languages=["s", "t"]), {"s": src, "t": tgt},
                         model_dir)
    config = BertConfig(vocab_size=len(load_tokenizer(model_dir)), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(str(model_dir))
    (tmp_path / "d.txt").write_text("dog hund\ncat katze\nruns rennt\n", encoding="utf-8")
    return model_dir, src, tgt


def test_retrieve_contextual_from_a_model_dir(tmp_path, capsys):
    model_dir, src, tgt = _tiny_pair_model(tmp_path)
    assert run(["-w", str(tmp_path), "retrieve", "--model", str(model_dir), "--layer", "1", "--corpus-src", str(src),
                "--corpus-tgt", str(tgt), "--dict", str(tmp_path / "d.txt")]) == 0
    rows = open_results(tmp_path).query(task="retrieval", metric="mrr")
    assert len(rows) == 1 and rows[0].extra == {"pairs": 3, "dictionary": str(tmp_path / "d.txt"), "layer": 1}
    assert rows[0].mode == "contextual"
    assert rows[0].value == pytest.approx(_oracle_mrr(model_dir, src, tgt, tmp_path / "d.txt", 1), abs=1e-12)


def _oracle_mrr(model_dir, src, tgt, dictionary, layer: int) -> float:
    """MRR from a direct Hugging Face forward pass: cosine of each source word with every target of the
    dictionary, rank = 1 + targets scoring strictly higher than the gold one."""
    from tests.analysis.test_contextual_oracle import hf_word_vectors

    pairs = [line.split() for line in dictionary.read_text(encoding="utf-8").splitlines()]
    s, t = (hf_word_vectors(model_dir, path.read_text(encoding="utf-8").splitlines(), layer) for path in (src, tgt))
    targets = [b for _, b in pairs]
    ranks = []
    for a, b in pairs:
        cos = {x: float(s[a] @ t[x] / np.linalg.norm(s[a]) / np.linalg.norm(t[x])) for x in targets}
        assert min(abs(cos[b] - v) for x, v in cos.items() if x != b) > 1e-6  # no near tie decides a rank
        ranks.append(1 + sum(v > cos[b] for v in cos.values()))
    return sum(1 / r for r in ranks) / len(ranks)


def test_retrieve_csls_equals_a_hand_computation_and_can_change_the_rank(tmp_path):
    import math

    src = {"a": (-0.8, -0.8), "b": (0.1, -0.7), "c": (0.6, -1.0)}
    tgt = {"x": (-0.3, -0.1), "y": (-0.6, -0.3), "z": (-0.6, -0.4)}  # found by search: CSLS changes ranks
    gold = {"a": "x", "b": "y", "c": "z"}
    _vectors(tmp_path / "s.txt", src)
    _vectors(tmp_path / "t.txt", tgt)
    (tmp_path / "d.txt").write_text("".join(f"{s} {t}\n" for s, t in gold.items()), encoding="utf-8")

    def cos(u, v):
        return (u[0] * v[0] + u[1] * v[1]) / math.hypot(*u) / math.hypot(*v)

    # CSLS with k >= 3 neighbours: every word's mean similarity to all words of the other side
    r_s = {s: sum(cos(src[s], tgt[t]) for t in tgt) / 3 for s in src}
    r_t = {t: sum(cos(src[s], tgt[t]) for s in src) / 3 for t in tgt}
    ranks = []
    for s, t in gold.items():
        score = {u: 2 * cos(src[s], tgt[u]) - r_s[s] - r_t[u] for u in tgt}
        ranks.append(1 + sum(v > score[t] for v in score.values()))
    for flag in ([], ["--csls"]):
        assert run(["-w", str(tmp_path / str(bool(flag))), "retrieve", "--src-emb", str(tmp_path / "s.txt"),
                    "--tgt-emb", str(tmp_path / "t.txt"), "--dict", str(tmp_path / "d.txt"), *flag]) == 0
    cosine = open_results(tmp_path / "False").query(task="retrieval", metric="mrr")[0]
    csls = open_results(tmp_path / "True").query(task="retrieval", metric="mrr")[0]
    assert csls.value == pytest.approx(sum(1 / r for r in ranks) / 3) and csls.extra["csls"] is True
    assert "csls" not in cosine.extra and cosine.value < csls.value - 0.2


def test_retrieve_all_layers_in_one_pass_equals_one_layer_at_a_time(tmp_path, capsys):
    model_dir, src, tgt = _tiny_pair_model(tmp_path)
    common = ["--model", str(model_dir), "--corpus-src", str(src), "--corpus-tgt", str(tgt), "--dict",
              str(tmp_path / "d.txt")]
    assert run(["-w", str(tmp_path / "all"), "retrieve", *common, "--all-layers"]) == 0
    by_layer = {r.extra["layer"]: r.value for r in open_results(tmp_path / "all").query(task="retrieval", metric="mrr")}
    assert sorted(by_layer) == [0, 1, 2]
    for layer in (0, 2):
        assert run(["-w", str(tmp_path / str(layer)), "retrieve", *common, "--layer", str(layer)]) == 0
        alone = open_results(tmp_path / str(layer)).query(task="retrieval", metric="mrr")
        assert alone[0].value == pytest.approx(by_layer[layer])
    assert "layer 2" in capsys.readouterr().out
    assert run(["-w", str(tmp_path), "retrieve", "--src-emb", str(src), "--tgt-emb", str(tgt), "--dict",
                str(tmp_path / "d.txt"), "--all-layers"]) == 1  # layers are for contextual vectors
