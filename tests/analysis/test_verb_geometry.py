"""`mbertlab analyze verb-geometry`: the verbs' forms recomputed from a generate artifact are the ones its NLI
edits (every generated pair's label is the relation of its edited verbs), the measures agree with a count by hand,
vectors that are the world's points score near the top and random ones near chance, and the command reads a
saved encoder's word embeddings."""
from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file
from typer.testing import CliRunner

from mbertlab.analysis.verb_geometry import verb_geometry, world_verbs
from mbertlab.cli.main import app
from mbertlab.data.generate import generate_into, preset_config
from mbertlab.data.generate.nli import relation
from mbertlab.errors import ConfigError
from mbertlab.formats.xnli import read_xnli

SIZES = {"sentences": {"train": 200, "dev": 10, "test": 10},
         "tasks": {"nli": {"train": 300, "dev": 3, "test": 3}, "mldoc": {"train": 4, "dev": 4, "test": 4}}}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    out, config = tmp_path_factory.mktemp("world"), preset_config("quick", 0, SIZES)
    generate_into(config, out)
    (out / "config.json").write_text(json.dumps(config.model_dump(mode="json")))  # as the artifact store does
    return out


def test_the_recomputed_verbs_are_the_ones_the_nli_edits(world):
    words, points = world_verbs(world, "src")
    assert len(words) == len(set(words)) == len(points) and len(words) % 4 == 0
    concept = {form: i for i, form in enumerate(words)}
    checked = 0
    for pair in read_xnli(world / "xnli" / "src.train.tsv"):
        old, new = [(a, b) for a, b in zip(pair.premise.split(), pair.hypothesis.split()) if a != b][0]
        assert relation(concept[old], concept[new]) == pair.label, (old, new, pair.label)
        checked += 1
    assert checked == 300
    fake, _ = world_verbs(world, "fake")
    assert fake != words  # another script, the same concepts
    with pytest.raises(ConfigError, match="not a language"):
        world_verbs(world, "nope")


def _by_hand(vectors, points):
    """Spearman as Pearson of ranks (ties averaged), nearest and MRR by loops: no scipy, no vectorised ranks."""
    n = len(vectors)
    v = vectors - vectors.mean(axis=0)
    v = v / np.linalg.norm(v, axis=1, keepdims=True)
    w = points / np.linalg.norm(points, axis=1, keepdims=True)
    a, b = [], []
    for i in range(n):
        for j in range(i + 1, n):
            a.append(float(v[i] @ v[j]))
            b.append(float(w[i] @ w[j]))

    def ranks(xs):
        order = sorted(range(len(xs)), key=lambda k: xs[k])
        out = [0.0] * len(xs)
        k = 0
        while k < len(order):
            end = k
            while end + 1 < len(order) and xs[order[end + 1]] == xs[order[k]]:
                end += 1
            for m in range(k, end + 1):
                out[order[m]] = (k + end) / 2 + 1
            k = end + 1
        return np.array(out)

    rho = float(np.corrcoef(ranks(a), ranks(b))[0, 1])
    nearest, mrr = 0, 0.0
    for i in range(n):
        syn = i + 1 if i % 2 == 0 else i - 1
        better = sum(1 for j in range(n) if j not in (i, syn) and v[i] @ v[j] > v[i] @ v[syn])
        nearest += better == 0
        mrr += 1 / (1 + better)
    return rho, nearest / n, mrr / n


def test_the_measures_agree_with_a_count_by_hand():
    rng = np.random.default_rng(0)
    vectors, points = rng.standard_normal((12, 5)), rng.standard_normal((12, 3))
    got = verb_geometry(vectors, points)
    rho, nearest, mrr = _by_hand(vectors, points)
    assert got.verbs == 12 and got.spearman == pytest.approx(rho) and got.nearest_is_synonym == pytest.approx(nearest)
    assert got.synonym_mrr == pytest.approx(mrr) and got.chance_nearest == pytest.approx(1 / 11)
    with pytest.raises(ConfigError, match="groups of 4"):
        verb_geometry(vectors[:10], points[:10])


def test_the_worlds_own_points_score_high_and_random_vectors_at_chance(world):
    _, points = world_verbs(world, "src")
    rng = np.random.default_rng(1)
    rotated = points @ np.linalg.qr(rng.standard_normal((points.shape[1], points.shape[1])))[0]
    good = verb_geometry(rotated + 0.01 * rng.standard_normal(rotated.shape), points)
    assert good.spearman > 0.8 and good.nearest_is_synonym > 0.8
    noise = [verb_geometry(rng.standard_normal((len(points), 64)), points) for _ in range(20)]
    assert abs(np.mean([r.spearman for r in noise])) < 0.05
    assert np.mean([r.nearest_is_synonym for r in noise]) < 3 * noise[0].chance_nearest


def test_the_command_reads_a_saved_encoders_word_embeddings(world, tmp_path):
    words, points = world_verbs(world, "src")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]
    encoder = tmp_path / "encoder"
    encoder.mkdir()
    (encoder / "vocab.txt").write_text("".join(f"{w}\n" for w in vocab), encoding="utf-8")
    (encoder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer",
                                                               "do_lower_case": False}), encoding="utf-8")
    table = np.random.default_rng(2).standard_normal((len(vocab), points.shape[1])).astype(np.float32)
    table[5:] = points  # each verb's row is its world point
    save_file({"bert.embeddings.word_embeddings.weight": table}, str(encoder / "model.safetensors"))
    result = CliRunner().invoke(app, ["analyze", "verb-geometry", "--generate", str(world), "--encoder",
                                      str(encoder), "--json"])
    assert result.exit_code == 0, result.output
    row = json.loads(result.output)[str(encoder)]
    expected = verb_geometry(points, points)
    assert row["spearman"] == pytest.approx(expected.spearman, abs=1e-6) and row["spearman"] > 0.8
    result = CliRunner().invoke(app, ["analyze", "verb-geometry", "--generate", str(tmp_path), "--encoder",
                                      str(encoder)])
    assert result.exit_code != 0 and "config.json: missing" in str(result.exception or result.output)
    # the fake script's verbs are unknown to this encoder's vocabulary: refused, not scored as one [UNK] vector
    result = CliRunner().invoke(app, ["analyze", "verb-geometry", "--generate", str(world), "--encoder", str(encoder),
                                      "--lang", "fake"])
    assert result.exit_code != 0 and "does not know" in str(result.exception or result.output)
