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


def builtin_config_classes() -> dict[str, type[Config]]:
    """Every config class of the package (every module imported), by its key in hashed_fields.json."""
    import importlib
    import pkgutil

    import mbertlab
    from mbertlab.config import config_key

    for module in pkgutil.walk_packages(mbertlab.__path__, "mbertlab."):
        if not module.name.endswith("__main__"):  # running it would start the CLI
            importlib.import_module(module.name)
    found, todo = {}, [Config]
    while todo:
        for sub in todo.pop().__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("mbertlab.") and "<locals>" not in sub.__qualname__:
                found[config_key(sub)] = sub
    return found


def test_every_builtin_config_class_has_its_fixed_fields_listed():
    """hashed_fields.json lists each class with the fields its hashes were fixed with. A new class is added
    (with all its fields) by `MBERTLAB_UPDATE_GOLDEN=1`, which never adds a field to a listed class: a field
    added later stays out of the dump at its default, so no existing hash moves."""
    import json
    import os

    from mbertlab.config import HASHED_FIELDS, hashed_fields

    classes = builtin_config_classes()
    listed = hashed_fields()
    missing = sorted(set(classes) - set(listed))
    if missing and os.environ.get("MBERTLAB_UPDATE_GOLDEN") == "1":
        table = {**{k: sorted(v) for k, v in listed.items()}, **{k: sorted(classes[k].model_fields) for k in missing}}
        HASHED_FIELDS.write_text("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
                                                    for k, v in sorted(table.items())) + "\n}\n", encoding="utf-8")
        pytest.fail(f"{HASHED_FIELDS.name}: listed {', '.join(missing)}; rerun without the variable")
    assert not missing, f"config classes not in {HASHED_FIELDS.name}; run this test with MBERTLAB_UPDATE_GOLDEN=1"
    stale = sorted(k for k in listed if k not in classes)
    assert not stale, f"listed classes that are gone (moved or renamed: their hashes move): {stale}"
    gone = {k: sorted(names - set(classes[k].model_fields)) for k, names in listed.items()
            if names - set(classes[k].model_fields)}
    assert not gone, f"listed fields a class no longer has (removed or renamed: its hashes move): {gone}"


def test_a_field_added_with_its_default_leaves_the_hash_alone(monkeypatch):
    """Two versions of one class: the later one adds `dropout`. At its default the dump and hash are the earlier
    version's; set, it enters both. A class not listed dumps every field."""
    import mbertlab.config as config

    class Stage(Config):
        lr: float = 1e-3

    before = Stage(lr=0.5)

    class Stage(Config):  # noqa: F811 (the same class, a field later)
        lr: float = 1e-3
        dropout: float = 0.1

    assert Stage(lr=0.5).model_dump() == {"lr": 0.5, "dropout": 0.1}  # not listed: every field
    monkeypatch.setattr(config, "hashed_fields", lambda: {config.config_key(Stage): frozenset({"lr"})})
    assert Stage(lr=0.5).model_dump() == before.model_dump() == {"lr": 0.5}
    assert Stage(lr=0.5).content_hash() == before.content_hash()
    assert Stage(lr=0.5, dropout=0.2).model_dump() == {"lr": 0.5, "dropout": 0.2}
    assert Stage(lr=0.5, dropout=0.2).content_hash() != before.content_hash()
