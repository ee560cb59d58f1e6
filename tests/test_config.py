"""Configs: strict keys, typed overrides, stable hashes, errors that name the key or line."""
from __future__ import annotations

import pytest

from mbertlab.config import Config, load_config
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
