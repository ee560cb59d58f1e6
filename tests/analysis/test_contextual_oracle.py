"""Contextual word vectors against a direct Hugging Face forward pass: one unpadded sentence at a time, the
word's pieces found by tokenizing it alone, hidden_states[layer] averaged over them and then over the word's
occurrences, all computed here in float64. Nothing of `analysis.contextual` (batching, padding, word_ids) is
shared with the oracle."""
from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch

from mbertlab.analysis.contextual import contextual_vectors

SENTENCES = ["the dog runs home", "a cat sleeps", "the cat runs after the dog", "dogs sleep"]


def hf_word_vectors(model_dir: Path, lines: list[str], layer: int) -> dict[str, np.ndarray]:
    """{word: vector} from AutoModel's hidden_states[layer], sentence by sentence, without padding."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(model_dir))
    model = AutoModel.from_pretrained(str(model_dir)).eval()
    sums: dict[str, np.ndarray] = {}
    counts: Counter = Counter()
    for line in lines:
        words = line.split()
        pieces = [tokenizer(w, add_special_tokens=False)["input_ids"] for w in words]
        ids = [tokenizer.cls_token_id] + [i for p in pieces for i in p] + [tokenizer.sep_token_id]
        with torch.no_grad():
            states = model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states[layer][0]
        start = 1  # after [CLS]
        for word, p in zip(words, pieces):
            vec = states[start:start + len(p)].double().mean(0).numpy()
            sums[word] = sums.get(word, 0) + vec
            counts[word] += 1
            start += len(p)
    return {w: v / counts[w] for w, v in sums.items()}


@pytest.fixture(scope="module")
def char_model(tmp_path_factory) -> Path:
    """A random 2-layer BERT over a character tokenizer, so that every word has several pieces."""
    from transformers import BertConfig, BertModel

    from mbertlab.tokenizers.train import TokenizerConfig, load_tokenizer, train_tokenizer_into

    root = tmp_path_factory.mktemp("char")
    text = root / "text.txt"
    text.write_text("\n".join(SENTENCES) + "\n", encoding="utf-8")
    model_dir = root / "model"
    train_tokenizer_into(TokenizerConfig(kind="char", vocab_size=100, languages=["x"]), {"x": text}, model_dir)
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(load_tokenizer(model_dir)), hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=2, intermediate_size=64)
    BertModel(config).save_pretrained(str(model_dir))
    return model_dir


@pytest.mark.numbers
def test_contextual_vectors_equal_a_direct_forward_pass_at_every_layer(char_model):
    from mbertlab.transfer.encoder import load_encoder

    tokenizer, model = load_encoder(char_model, False, 0)
    assert len(tokenizer("sleeps", add_special_tokens=False)["input_ids"]) == 6  # one piece per character
    got = contextual_vectors(model, tokenizer, [s.split() for s in SENTENCES], None, [0, 1, 2], batch_size=3)
    for layer in (0, 1, 2):
        want = hf_word_vectors(char_model, SENTENCES, layer)
        assert got[layer].keys() == want.keys() == {w for s in SENTENCES for w in s.split()}
        for word, vec in want.items():
            np.testing.assert_allclose(got[layer][word], vec, atol=1e-5, err_msg=f"{word} at layer {layer}")
    # and a word restriction keeps exactly those words, with the same vectors
    some = contextual_vectors(model, tokenizer, [s.split() for s in SENTENCES], {"dog", "cat"}, [2], batch_size=2)
    assert some[2].keys() == {"dog", "cat"}
    np.testing.assert_allclose(some[2]["dog"], got[2]["dog"], atol=1e-5)


@pytest.mark.numbers
def test_sentences_batched_by_length_across_several_sorted_runs_keep_every_occurrence(char_model):
    """Batches are sorted by length within runs of `batch_size * SORTED_BATCHES` sentences: over 12 such runs and a
    sentence only in the last, partial one, every word's vector still equals the oracle's over all occurrences."""
    from mbertlab.analysis.contextual import SORTED_BATCHES
    from mbertlab.transfer.encoder import load_encoder

    lines = SENTENCES * (3 * SORTED_BATCHES) + ["cats run far"]
    tokenizer, model = load_encoder(char_model, False, 0)
    got = contextual_vectors(model, tokenizer, [s.split() for s in lines], None, [2], batch_size=1)
    want = hf_word_vectors(char_model, lines, 2)
    assert got[2].keys() == want.keys() and {"cats", "run", "far"} <= want.keys()
    for word, vec in want.items():
        np.testing.assert_allclose(got[2][word], vec, atol=1e-5, err_msg=word)
