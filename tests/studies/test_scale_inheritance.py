"""Scale inheritance: a fix kept under `scales.lab` reaches the gpu scale unless the gpu block overrides it in so
many words (issue 52: wd2020's 200 fine-tuning steps, k2020's and wd2019's fine-tuning epochs were lost at gpu).

The listing is computed from the spec files' raw mappings, independently of `load_spec`'s merge: a key the lab
block sets is *kept* when the scale's loaded settings hold the lab's value, *overridden* when the scale's own
block sets that key (or a mapping or list above it), else *dropped*."""
from __future__ import annotations

import pytest

from mbertlab.config import read_yaml
from mbertlab.errors import ConfigError
from mbertlab.studies.spec import builtin_specs, load_spec, read_spec_data

# (spec, scale) -> {dotted lab key it drops: why}. gpu's must stay empty; the paper scale states the paper's own
# settings (tests/studies/test_published.py holds it to them) and inherits nothing, so each key is said here.
DROPPED_WITH_REASON = {
    ("k2020", "paper"): {
        "task_finetune.ner.epochs": "the paper's NER is a BiLSTM-CRF on frozen features (task_modes), 3 epochs",
        "task_finetune.xnli.epochs": "the paper fine-tunes XNLI as BERT does: 3 epochs (finetune.epochs)",
        "run_only": "the lab's share of the grid; the paper scale builds its whole grid",
    },
    ("wd2019", "paper"): {
        "task_finetune.xnli.epochs": "§5's grid states epochs {3, 4} for every task (finetune.epochs)",
        "in_language": "the lab's share of the in-language rows; the paper scale has every one (Tables 2, 4-6)",
    },
    ("liu2020", "paper"): {
        "retrieval_only": "the lab's budget; the paper scores every model on XNLI (Figure 2)",
    },
    ("wd2020", "paper"): {
        "multilingual_pretrain.steps": "the paper trains every encoder 115k steps (§3.2); the lab's 4x for the "
                                       "multilingual encoder made up for its 1,000-step budget",
        "multilingual_pretrain.checkpoint_every": "the paper's five checkpoints (every 23k steps) for every encoder",
    },
}


def _leaves(data, prefix=()):
    if isinstance(data, dict) and data:
        for key, value in data.items():
            yield from _leaves(value, prefix + (key,))
    elif prefix:
        yield prefix, data


def _get(data, path):
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return KeyError
        data = data[key]
    return data


def _sets(block, path) -> bool:
    """The block sets `path` or a non-mapping value above it (a list, a null)."""
    return any(not isinstance(_get(block, path[:i]), dict) for i in range(1, len(path) + 1)
               if _get(block, path[:i]) is not KeyError)


def dropped(name: str, scale: str) -> list[str]:
    path = builtin_specs()[name]
    data = read_spec_data(path)
    scales = data.get("scales") or {}
    if scale not in scales:
        return []
    own = {k: v for k, v in (scales[scale] or {}).items() if k != "inherit"}
    loaded = load_spec(path, scale).settings.model_dump(mode="json")
    out = []
    for key, value in _leaves({k: v for k, v in (scales.get("lab") or {}).items() if k != "inherit"}):
        if key[0] in ("precision", "device", "findings", "resources"):
            continue  # not design settings; precision is stated by every scale that runs on a GPU
        if _get(loaded, key) == value or _sets(own, key):
            continue
        out.append(".".join(key))
    return out


@pytest.mark.parametrize("name", sorted(builtin_specs()))
@pytest.mark.parametrize("scale", ["gpu", "paper"])
def test_every_lab_key_a_scale_drops_is_listed_with_why(name, scale):
    assert sorted(dropped(name, scale)) == sorted(DROPPED_WITH_REASON.get((name, scale), {}))


def test_gpu_keeps_the_lab_fixes_issue_52_names():
    """Read from the loaded settings: each fix is the lab's value at gpu (or the gpu block's own)."""
    wd2020 = load_spec("wd2020", "gpu").settings
    assert (wd2020.finetune["steps"], wd2020.finetune["eval_every"]) == (200, 50)
    assert wd2020.baseline.finetune["feature_lr"] == 0.01 and wd2020.baseline.finetune["lstm_hidden"] == 64
    for name, task in (("k2020", "ner"), ("k2020", "xnli"), ("wd2019", "xnli")):
        assert load_spec(name, "gpu").settings.task_finetune[task]["epochs"] == 10, (name, task)


def test_a_gpu_block_may_opt_out_and_the_listing_sees_it(tmp_path):
    spec = tmp_path / "s.yaml"
    text = (builtin_specs()["wd2019"]).read_text(encoding="utf-8")
    spec.write_text(text.replace("  gpu:\n", "  gpu:\n    inherit: null\n", 1), encoding="utf-8")
    assert load_spec(spec, "gpu").settings.task_finetune == {}
    assert read_yaml(spec)["scales"]["gpu"]["inherit"] is None


def test_an_inheritance_cycle_or_unknown_scale_is_one_line(tmp_path):
    spec = tmp_path / "s.yaml"
    text = (builtin_specs()["wd2019"]).read_text(encoding="utf-8")
    spec.write_text(text.replace("  lab:\n", "  lab:\n    inherit: gpu\n", 1), encoding="utf-8")
    with pytest.raises(ConfigError, match="scales.gpu.inherit': an inheritance cycle"):
        load_spec(spec, "gpu")
    spec.write_text(text.replace("  gpu:\n", "  gpu:\n    inherit: lap\n", 1), encoding="utf-8")
    with pytest.raises(ConfigError, match="scales.gpu.inherit': expected another of"):
        load_spec(spec, "gpu")


def test_gpu_char_condition_keeps_the_word_pieces_tokens_a_step():
    """k2020: characters take 4x the window at a quarter of the batch, at each scale's own base."""
    for scale in ("lab", "gpu"):
        s = load_spec("k2020", scale).settings
        char = next(c for c in s.conditions if c.name == "char tokens").pretrain
        assert char["seq_len"] * char["batch_size"] == s.pretrain["seq_len"] * s.pretrain["batch_size"], scale
        assert char["seq_len"] == 4 * s.pretrain["seq_len"], scale


def test_a_condition_override_naming_no_condition_is_an_error():
    with pytest.raises(ConfigError, match="condition_overrides: unknown condition 'char token'"):
        load_spec("k2020", "gpu", ["condition_overrides={char token: {seeds: [0]}}"])
