"""Configs: strict keys, typed overrides, stable hashes, errors that name the key or line."""
from __future__ import annotations

import math
from typing import Any

import pytest

from mbertlab.config import Config, load_config, parse_config, read_yaml
from mbertlab.errors import ConfigError
from mbertlab.registry import Registry


class Inner(Config):
    lr: float = 1e-3
    layers: list[int] = [1, 2]


class Outer(Config):
    name: str = "x"
    inner: Inner = Inner()


def test_unknown_and_ill_typed_keys_name_the_key(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("name: a\ninner: {lr: fast, colour: red}\n")
    with pytest.raises(ConfigError) as err:
        load_config(Outer, path)
    text = str(err.value)
    assert "key 'inner.lr'" in text and "key 'inner.colour': unknown key" in text and str(path) in text


def test_overrides_keep_types_and_hash_is_stable():
    a = load_config(Outer, None, ["inner.lr=0.5", "inner.layers=[3, 4]"])
    assert a.inner.lr == 0.5 and a.inner.layers == [3, 4]
    b = Outer.model_validate({"inner": {"layers": [3, 4], "lr": 0.5}})
    assert a.content_hash() == b.content_hash()
    assert a.content_hash() != a.content_hash(["input"]) != Outer().content_hash()


def test_yaml_syntax_error_names_the_line(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("name: a\ninner: {lr: [1,\n")
    with pytest.raises(ConfigError, match=r"bad.yaml:\d+: invalid YAML"):
        load_config(Outer, path)


def test_registry_suggests_close_names():
    reg = Registry("manipulation")
    reg.register("fake_script")(object())
    with pytest.raises(ConfigError, match="did you mean 'fake_script'"):
        reg.get("fake-script")


def test_a_repeated_key_is_refused_but_a_merged_key_may_be_overridden(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("base: &b {lr: 0.1, layers: [1]}\ninner:\n  <<: *b\n  lr: 0.5\n")
    assert read_yaml(path)["inner"] == {"lr": 0.5, "layers": [1]}  # YAML's merge: the mapping's own key wins
    path.write_text("name: a\ninner:\n  lr: 0.1\n  layers: [1]\n  lr: 0.2\n")
    with pytest.raises(ConfigError, match=r"c.yaml:5: invalid YAML \(key 'lr' appears twice \(lines 3 and 5\)\)"):
        read_yaml(path)


class Kinds(Config):
    count: int = 0
    share: float = 0.0
    counts: list[int] = []
    flag: bool = False
    either: int | bool = 0
    anything: dict[str, Any] = {}
    inner: Inner = Inner()


@pytest.mark.parametrize("key", ["count", "share", "counts", "inner"])
def test_a_boolean_is_refused_where_a_number_is_meant(key):
    value = {"counts": [1, True], "inner": {"lr": False}}.get(key, True)
    with pytest.raises(ConfigError, match=rf"key '{key}(.lr)?': expected a number, got a boolean"):
        parse_config(Kinds, {key: value})


def test_a_boolean_is_kept_where_the_field_takes_one():
    kept = parse_config(Kinds, {"flag": True, "either": True, "anything": {"x": True}})
    assert kept.flag is True and kept.either is True and kept.anything == {"x": True}


def test_integers_beyond_64_bits_and_non_finite_floats_are_refused():
    assert parse_config(Kinds, {"count": 2**63 - 1}).count == 2**63 - 1
    for data in ({"count": 2**63}, {"counts": [-(2**64)]}):
        with pytest.raises(ConfigError, match="beyond a 64-bit integer"):
            parse_config(Kinds, data)
    for value in (math.inf, -math.inf, math.nan):
        with pytest.raises(ConfigError, match="key 'share': Input should be a finite number"):
            parse_config(Kinds, {"share": value})
