"""Typed, strict configs with a stable content hash.

Every stage has a config class derived from `Config`. Unknown keys are errors; the hash is over
the canonical JSON of the config plus the hashes of input artifacts, so any upstream change
changes everything downstream. A field added to a config class after its hashes were fixed (one not in
`hashed_fields.json`) is left out of the JSON while it keeps its default, so adding it changes no hash.
"""
from __future__ import annotations

import functools
import hashlib
import json
import re
from pathlib import Path
from stat import S_ISREG
from typing import Annotated, Any, Callable, Iterable, Literal, TypeVar, get_args

import yaml
from pydantic import (AfterValidator, BaseModel, ConfigDict, Field, SerializationInfo, ValidationError,
                      WrapSerializer, model_serializer, model_validator)
from pydantic.fields import FieldInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

from mbertlab.errors import ConfigError, missing_file
from mbertlab.yaml_loader import UniqueKeyLoader
from mbertlab.runtime import DEVICE_SETTING

C = TypeVar("C", bound="Config")
T = TypeVar("T")


INT64_MAX = 2**63 - 1  # what torch, numpy and SQLite hold; a bigger integer overflows deep inside them


class Config(BaseModel):
    """Base of every stage and spec config: frozen, strict about keys, finite floats (an `.inf` or `.nan`
    would run as NaN probabilities or losses), no booleans where numbers are meant (pydantic reads `true`
    as 1) and no integer beyond 64 bits."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=(), allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _numbers_not_bools(cls, data: Any) -> Any:
        """One check of every field's raw value, before pydantic's own (a field validator on every field would
        clash with discriminated unions)."""
        if not isinstance(data, dict):
            return data
        problems = [InitErrorDetails(type=problem, loc=(name,), input=value) for name, value in data.items()
                    if name in cls.model_fields and (problem := _number_problem(cls.model_fields[name], value))]
        if problems:
            raise ValidationError.from_exception_data(cls.__name__, problems)
        return data

    @model_serializer(mode="wrap")
    def _hash_stable(self, handler):
        """The dump without the fields this class gained after its hashes were fixed, while they keep their
        defaults. A class not listed yet dumps every field (tests/test_config.py lists each built-in class)."""
        data = handler(self)
        fixed = hashed_fields().get(config_key(type(self)))
        if fixed is None or not isinstance(data, dict):
            return data
        for name, field in type(self).model_fields.items():
            if name not in fixed and name in data and getattr(self, name) == field.get_default(
                    call_default_factory=True):
                del data[name]
        return data

    def canonical_json(self) -> str:
        return canonical_json(self.model_dump(mode="json"))

    def hash_view(self) -> dict[str, Any]:
        """What the artifact hash covers: the JSON form, with every `ContentPath` as its content's digest."""
        context: dict[str, Any] = {"hashing": True, "unreadable": []}
        view = self.model_dump(mode="json", context=context)
        if context["unreadable"]:  # raised here: pydantic would wrap it in its own serialization error
            raise context["unreadable"][0]
        return view

    def content_hash(self, inputs: Iterable[str] = ()) -> str:
        return content_hash(self.hash_view(), inputs)


_DIGESTS: dict[tuple[str, int, int], str] = {}  # (resolved path, size, mtime) -> digest, for this process


def file_digest(path: str | Path) -> str:
    """The digest of a file's bytes (blake2b, 128 bits), computed once per process while its size and
    modification time stay the same."""
    resolved = Path(path).expanduser().resolve()
    try:
        stat = resolved.stat()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read the data file to hash it ({err.strerror or err})") from err
    if not S_ISREG(stat.st_mode):  # opening a FIFO would wait for a writer forever
        raise ConfigError(f"{path}: {missing_file(path)}")
    key = (str(resolved), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        digest = hashlib.blake2b(digest_size=16)
        with resolved.open("rb") as fh:
            while chunk := fh.read(1 << 20):
                digest.update(chunk)
        _DIGESTS[key] = f"blake2b:{digest.hexdigest()}"
    return _DIGESTS[key]


def _file_identity(path: str, handler, info: SerializationInfo) -> Any:
    if not (info.context and info.context.get("hashing")):
        return handler(path)
    try:
        return file_digest(path)
    except ConfigError as err:
        info.context["unreadable"].append(err)
        return None


ContentPath = Annotated[str, WrapSerializer(_file_identity)]
"""A path to a user's data file (text, task file, lexicon): the config keeps the path, the artifact hash its
content, so the same data gives the same hash wherever the repo or the data folder lies, and edited data a new
one."""


def _number_problem(field: FieldInfo, value: Any) -> PydanticCustomError | None:
    """A boolean where the field takes none (pydantic reads `true` as 1), or an integer beyond 64 bits; in the
    value or one level down (a list's items, a mapping's values)."""
    items = value.values() if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
    if not _admits_bool(field.annotation) and any(isinstance(v, bool) for v in (value, *items)):
        return PydanticCustomError("bool", "expected a number, got a boolean (true/false)")
    if any(isinstance(v, int) and abs(v) > INT64_MAX for v in (value, *items)):
        return PydanticCustomError("int64", "{value} is beyond a 64-bit integer", {"value": value})
    return None


def _admits_bool(annotation: Any) -> bool:
    """Whether a field's type takes a boolean anywhere (bool, Any, or a union or container holding them); a
    sub-config checks its own fields."""
    if annotation is bool or annotation is Any or (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
        return True
    return any(_admits_bool(arg) for arg in get_args(annotation) if not isinstance(arg, (str, int, float)))


def bounded(low: float, high: float, why: str) -> AfterValidator:
    """A range check whose message says why the bound is there (pydantic's `le` only names the number)."""
    def check(value: float) -> float:
        if not low <= value <= high:
            raise PydanticCustomError("range", "expected {low} to {high} ({why}), got {value}",
                                      {"low": low, "high": high, "why": why, "value": value})
        return value
    return AfterValidator(check)


SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def safe_name(value: str) -> str:
    """`value` when it can name a file or folder inside another (no separator, no '..', not hidden)."""
    if not SAFE_NAME.fullmatch(value) or ".." in value:
        raise PydanticCustomError("name", "{value} is not a safe name: it names a file or folder, so at most 64 "
                                  "letters, digits, '_', '.' or '-', starting with a letter or digit, no '..'",
                                  {"value": repr(value)})
    return value


# Shared value types: every config that names a language, a seed or a step count gets the same checks.
SafeName = Annotated[str, AfterValidator(safe_name)]  # a language or study: stays inside its folder
LanguageName = SafeName
Seed = Annotated[int, bounded(0, 2**32 - 1, "numpy and the corpus split take unsigned 32-bit seeds")]
Steps = Annotated[int, bounded(1, 10**9, "a billion steps is beyond any run here; more is a typo")]
Exponent = Annotated[float, bounded(0.0, 20.0, "n^alpha must stay a finite float for corpora up to 10^12 "
                                    "sentences")]


def unique(values: list) -> list:
    """`values` unchanged when none repeats: a language listed twice would write its folder twice."""
    repeated = sorted({str(v) for v in values if values.count(v) > 1})
    if repeated:
        raise PydanticCustomError("unique", "{repeated} listed more than once", {"repeated": ", ".join(repeated)})
    return values


def check_safe_name(value: str, what: str) -> str:
    """`value` checked as a safe file or folder name outside a config (`what` names it in the error)."""
    try:
        return safe_name(value)
    except PydanticCustomError as err:
        raise ConfigError(f"{what}: {err.message()}") from None


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


HASHED_FIELDS = Path(__file__).with_name("hashed_fields.json")


def config_key(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


@functools.cache
def hashed_fields() -> dict[str, frozenset[str]]:
    """Each built-in config class's fields as they were when its hashes were fixed (2026-11-26): these are
    always dumped; any field added since is dumped only away from its default. Only a test adds classes."""
    return {key: frozenset(names) for key, names in json.loads(HASHED_FIELDS.read_text(encoding="utf-8")).items()}


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


SHOWN_PROBLEMS = 3  # problems named in one error line; the rest are counted


def format_validation_error(err: ValidationError, source: str) -> str:
    """One line: `source: key 'a.b': message; key 'c': message`, the first SHOWN_PROBLEMS problems and a count of
    the rest (the CLI's errors are one line each)."""
    parts = []
    for problem in err.errors():
        key = ".".join(str(p) for p in problem["loc"] if p != "[key]") or "<root>"  # a mapping's key: its own name
        msg = problem["msg"]
        if problem["type"] == "extra_forbidden":
            msg = "unknown key"
        parts.append(f"key '{key}': {msg}")
    more = f" (and {len(parts) - SHOWN_PROBLEMS} more)" if len(parts) > SHOWN_PROBLEMS else ""
    return f"{source}: {'; '.join(parts[:SHOWN_PROBLEMS])}{more}"


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
        value = yaml.load(raw, Loader=UniqueKeyLoader) if raw else ""
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


def read_yaml(path: str | Path, loader: type = UniqueKeyLoader) -> dict[str, Any]:
    """A YAML file's content ({} when empty); bad UTF-8, bad syntax or a repeated key are one-line errors."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"{path}: {missing_file(path)}")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw.count(b"\n", 0, err.start) + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 (byte {raw[err.start]:#04x} at offset {err.start})") from None
    try:
        data = yaml.load(text, Loader=loader)
    except RecursionError:  # `[[[[…` nested deeper than PyYAML's recursive composer goes
        raise ConfigError(f"{path}: invalid YAML (nested too deeply for the parser); expected a config "
                          "file") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        line = f":{mark.line + 1}" if mark is not None else ""
        raise ConfigError(f"{path}{line}: invalid YAML ({getattr(err, 'problem', err)})") from None
    return data if data is not None else {}


def blaming_overrides(parse: Callable[[list[str]], T], overrides: list[str], source: str) -> T:
    """`parse(overrides)`; an error naming `source` that only the `--set` overrides cause (the same parse without
    them passes) names `--set …` instead, where the value came from."""
    try:
        return parse(overrides)
    except ConfigError as err:
        if not overrides or not str(err).startswith(f"{source}:"):
            raise
        try:
            parse([])
        except ConfigError:
            raise err from None
        raise ConfigError(f"--set {' '.join(overrides)}{str(err)[len(source):]}") from None


def load_config(cls: type[C], path: str | Path | None = None, overrides: Iterable[str] = ()) -> C:
    """Read YAML (optional), apply `--set` overrides, validate."""
    data = read_yaml(path) if path is not None else {}
    source = str(path) if path is not None else "<config>"
    return blaming_overrides(lambda sets: parse_config(cls, apply_overrides(data, sets), source), list(overrides),
                             source)
