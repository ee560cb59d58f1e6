"""Typed, strict configs with a stable content hash.

Every stage has a config class derived from `Config`. Unknown keys are errors; the hash is over
the canonical JSON of the config plus the hashes of input artifacts, so any upstream change
changes everything downstream.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Iterable, Literal, TypeVar, get_args

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from mbertlab.errors import ConfigError
from mbertlab.runtime import DEVICE_SETTING

C = TypeVar("C", bound="Config")


class Config(BaseModel):
    """Base of every stage and spec config: frozen, strict about keys."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())

    def canonical_json(self) -> str:
        return canonical_json(self.model_dump(mode="json"))

    def content_hash(self, inputs: Iterable[str] = ()) -> str:
        return content_hash(self.model_dump(mode="json"), inputs)


def device_field() -> Any:
    """The `device` key of every stage that runs a model: auto | cpu | cuda | cuda:N. Left out of the dump, so
    out of config.json and of every content hash: the same config gives the same artifact on any device."""
    return Field("auto", pattern=DEVICE_SETTING, exclude=True, description="Where models run: "
                 "auto (this rank's GPU when CUDA is there, else the CPU), cpu, cuda (LOCAL_RANK's GPU) or cuda:N.")


Precision = Literal["auto", "bf16", "fp32"]  # auto: bf16 where the device runs it natively, else fp32
PRECISIONS: tuple[str, ...] = get_args(Precision)


def precision_field() -> Any:
    """The `precision` key of a stage that runs a model. It changes the numbers (bf16 vs fp32), so it is part of
    the hash; a study's `precision:` fills it wherever it is left at auto."""
    return Field("auto", description="auto: bf16 where the device runs it natively (an AVX512-BF16/AMX CPU, a "
                 "bf16 GPU), else fp32; pin bf16 or fp32 wherever numbers are compared.")


def omit_defaults(data: dict, model: Config, names: tuple[str, ...]) -> dict:
    """Drop fields added after artifacts were built while they keep their defaults, so old hashes hold."""
    for name in names:
        if getattr(model, name) == type(model).model_fields[name].get_default(call_default_factory=True):
            data.pop(name, None)
    return data


def fill_auto(config: C, key: str, value: str) -> C:
    """`config` with every `key` left at auto (its own and its sub-configs') set to `value`."""
    update: dict[str, Any] = {name: fill_auto(sub, key, value) for name in type(config).model_fields
                              if isinstance(sub := getattr(config, name), Config)}
    if getattr(config, key, None) == "auto":
        update[key] = value
    return config.model_copy(update=update) if update else config


def on_device(config: C, device: str) -> C:
    """`config` with every `device` key left at auto (its own and its sub-configs') set to `device`."""
    return fill_auto(config, "device", device)


def canonical_json(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def content_hash(data: Any, inputs: Iterable[str] = ()) -> str:
    """Hash of a JSON-able value plus the (ordered) hashes of the inputs it was built from."""
    h = hashlib.sha256(canonical_json(data).encode("utf-8"))
    for item in inputs:
        h.update(b"\0")
        h.update(item.encode("utf-8"))
    return h.hexdigest()[:16]


def format_validation_error(err: ValidationError, source: str) -> str:
    """One line per problem: `source: key 'a.b': message`."""
    lines = []
    for problem in err.errors():
        key = ".".join(str(p) for p in problem["loc"]) or "<root>"
        msg = problem["msg"]
        if problem["type"] == "extra_forbidden":
            msg = "unknown key"
        lines.append(f"{source}: key '{key}': {msg}")
    return "\n".join(lines)


def parse_config(cls: type[C], data: dict[str, Any], source: str = "<config>") -> C:
    """Validate `data` into `cls`, turning pydantic's report into a `ConfigError`."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of keys to values, got {type(data).__name__}")
    try:
        return cls.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, source)) from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """`a.b=value` → (['a', 'b'], value parsed as YAML, so numbers and lists keep their type)."""
    if "=" not in text:
        raise ConfigError(f"--set {text!r}: expected KEY=VALUE")
    key, raw = text.split("=", 1)
    try:
        value = yaml.safe_load(raw) if raw else ""
    except yaml.YAMLError:
        value = raw
    return key.strip().split("."), value


def apply_overrides(data: dict[str, Any], overrides: Iterable[str]) -> dict[str, Any]:
    out = json.loads(json.dumps(data))
    for text in overrides:
        path, value = parse_override(text)
        node = out
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise ConfigError(f"--set {text!r}: '{part}' is not a mapping")
        node[path[-1]] = value
    return out


def deep_merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` wins key by key, recursively; a mapping whose `kind` changes is replaced whole (switching
    `data.kind` from generated to files must not keep the generator's keys)."""
    out = dict(base)
    for key, value in over.items():
        old = out.get(key)
        if isinstance(value, dict) and isinstance(old, dict) and value.get("kind", old.get("kind")) == old.get("kind"):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = value
    return out


def read_yaml(path: str | Path, loader: type = yaml.SafeLoader) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: no such file")
    try:
        data = yaml.load(path.read_text(encoding="utf-8"), Loader=loader)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: invalid YAML ({getattr(err, 'problem', err)})") from None
    return data if data is not None else {}


def load_config(cls: type[C], path: str | Path | None = None, overrides: Iterable[str] = ()) -> C:
    """Read YAML (optional), apply `--set` overrides, validate."""
    data = read_yaml(path) if path is not None else {}
    data = apply_overrides(data, overrides)
    return parse_config(cls, data, str(path) if path is not None else "<config>")
