"""Study specs: YAML with `include:`, named scales, and a design that says how the grid expands.

A spec file has common keys (name, description, design, scale, scales, include) and the design's own
keys, validated by that design's config class. `scales: {test: {...}, gpu: {...}, paper: {...}}` are deep
overrides applied when that scale is chosen; `--set key=value` overrides come last.

A scale's block may start from another scale's: `inherit: lab` applies the lab block first, then its own.
`gpu` inherits `lab` unless it says `inherit: null`: a fix kept under `scales.lab` (a fine-tuning budget, a
baseline's recipe) reaches the gpu scale unless the gpu block overrides that key in so many words
(tests/studies/test_scale_inheritance.py lists, per built-in spec, every lab key gpu drops). The paper scale
states the paper's own settings and inherits nothing unless it says so.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Iterable

from mbertlab.config import (PRECISIONS, Config, apply_overrides, blaming_overrides, check_safe_name, deep_merge,
                             parse_config, read_yaml)
from mbertlab.errors import ConfigError, missing_file
from mbertlab.runtime import DEVICE_SETTING

COMMON_KEYS = ("name", "description", "design", "scale", "scales", "include", "findings", "resources", "device",
               "precision", "slices")
SCALES = ("test", "lab", "gpu", "paper")  # gpu: one H100-class GPU, <= 1 hour (`study plan` estimates it)
INHERITS = {"gpu": "lab"}  # the scale whose block a scale's block starts from, unless it says `inherit:`


@dataclass(frozen=True)
class StudySpec:
    name: str
    description: str
    design: str
    scale: str
    settings: Config  # the design's validated config
    source: str  # file the spec came from
    device: str = "auto"  # where every stage that runs a model runs, unless its own `device` says otherwise
    precision: str = "auto"  # auto | bf16 | fp32 for every stage left at auto; lab specs pin it (numbers compared)


def builtin_specs() -> dict[str, Path]:
    """Built-in specs shipped with the package, by name: `papers/<key>/spec.yaml` is `<key>`, any other
    `papers/<key>/<name>.yaml` is `<name>` (e.g. `quick`, a spec of the k2020 design)."""
    papers = resources.files("mbertlab") / "papers"
    specs = {}
    for folder in sorted((p for p in papers.iterdir() if p.is_dir()), key=lambda p: p.name):
        for p in folder.iterdir():
            if p.name.endswith(".yaml") and p.name != "published.yaml":
                specs[folder.name if p.name == "spec.yaml" else Path(p.name).stem] = Path(str(p))
    return specs


def resolve_spec_path(name_or_path: str | Path) -> Path:
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists():
        if not path.is_file():
            reason = missing_file(path)
            raise ConfigError(f"{path}: {'no such study spec file' if reason == 'no such file' else reason}")
        return path
    specs = builtin_specs()
    if str(name_or_path) not in specs:
        import difflib

        close = difflib.get_close_matches(str(name_or_path), list(specs), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ConfigError(f"unknown study {str(name_or_path)!r}{hint} (built-in: {', '.join(sorted(specs))})")
    return specs[str(name_or_path)]


def read_spec_data(path: Path, seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """The spec's mapping with its `include:` chain merged in (the including file wins)."""
    path = path.resolve()
    if path in seen:
        raise ConfigError(f"{path}: include cycle ({' -> '.join(p.name for p in seen + (path,))})")
    data = read_yaml(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a study spec must be a mapping")
    _check_scales(path, data.get("scales"))
    include = data.pop("include", None)
    if include is None:
        return data
    if not isinstance(include, str) or not include:
        raise ConfigError(f"{path}: key 'include': expected the name or path of one spec, got {include!r}"[:300])
    base_path = resolve_spec_path(include) if not (path.parent / str(include)).is_file() else path.parent / str(include)
    return deep_merge(read_spec_data(base_path, seen + (path,)), data)


def scale_block(scales: dict[str, Any], scale: str, where: str, seen: tuple[str, ...] = ()) -> dict[str, Any]:
    """The overrides a scale applies to the base: its block over the block it inherits (`inherit:`, by default
    INHERITS), recursively; {} for a scale without a block."""
    if scale in seen:
        chain = " -> ".join(seen + (scale,))
        raise ConfigError(f"{where}: key 'scales.{scale}.inherit': an inheritance cycle ({chain})")
    block = dict(scales.get(scale) or {})
    parent = block.pop("inherit", INHERITS.get(scale))
    if parent is None:
        return block
    if parent not in SCALES or parent == scale:
        raise ConfigError(f"{where}: key 'scales.{scale}.inherit': expected another of {', '.join(SCALES)} or null, "
                          f"got {parent!r}")
    return deep_merge(scale_block(scales, parent, where, seen + (scale,)), block)


def load_spec(name_or_path: str | Path, scale: str | None = None, overrides: Iterable[str] = ()) -> StudySpec:
    from mbertlab.studies.designs import get_design

    path, overrides = resolve_spec_path(name_or_path), list(overrides)
    data = read_spec_data(path)
    chosen = _chosen_scale(path, data, scale)
    scales = data.pop("scales")
    data = deep_merge(data, scale_block(scales, chosen, str(path)))
    data, before = _overridden(data, overrides), data
    for key in ("name", "design"):
        if not isinstance(data.get(key), str):
            raise ConfigError(f"{path}: key '{key}': required (a string)")
    check_safe_name(data["name"], f"{path}: key 'name'")  # it names the report's folder
    design = get_design(data["design"], path.parent)
    settings = _settings(design.config_class, data, before, path, overrides)
    device = data.get("device", "auto")
    if not isinstance(device, str) or not re.fullmatch(DEVICE_SETTING, device):
        raise ConfigError(f"{path}: key 'device': expected auto, cpu, cuda or cuda:N, got {device!r}")
    precision = data.get("precision", "auto")
    if precision not in PRECISIONS:
        raise ConfigError(f"{path}: key 'precision': expected {', '.join(PRECISIONS)}, got {precision!r}")
    return StudySpec(data["name"], str(data.get("description", "")), data["design"], chosen, settings, str(path),
                     device, precision)


def _chosen_scale(path: Path, data: dict[str, Any], scale: str | None) -> str:
    """The scale to run: `--scale` (an empty one is an error, not the default), else the spec's `scale`; it
    must be one the spec defines, and `scales:` must map scale names to mappings."""
    scales = data["scales"] = data.get("scales") or {}
    source, chosen = (f"{path}: key 'scale'", data.get("scale", "lab")) if scale is None else ("--scale", scale)
    if chosen not in SCALES:
        raise ConfigError(f"{source}: expected one of {', '.join(SCALES)}, got {chosen!r}")
    defined = [s for s in SCALES if s in scales or s == data.get("scale", "lab")]
    if chosen not in defined:  # never run another scale's settings under this one's name
        raise ConfigError(f"{source}: scale {chosen!r} is not defined by {path} (defined: {', '.join(defined)})")
    return chosen


def _check_scales(path: Path, scales: Any) -> None:
    """A spec file's `scales:`, checked before it is merged with an included one's: a mapping from scale names to
    mappings (or nothing)."""
    if scales is None:
        return
    if not isinstance(scales, dict):
        raise ConfigError(f"{path}: key 'scales': expected a mapping from scales ({', '.join(SCALES)}) to their "
                          f"keys, got {scales!r}"[:300])
    for name, keys in scales.items():
        if name not in SCALES:
            raise ConfigError(f"{path}: key 'scales': found scale {name!r}; expected one of {', '.join(SCALES)}")
        if not isinstance(keys, (dict, type(None))):
            raise ConfigError(f"{path}: key 'scales.{name}': expected a mapping of the keys this scale sets, got "
                              f"{keys!r}"[:300])


READ_BEFORE_OVERRIDES = ("include", "scale", "scales")  # --set on them would be ignored


def _overridden(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    """`data` with the `--set` overrides applied; one on a key read before overrides apply is an error, not a
    silent no-op."""
    for text in overrides:
        key = text.split("=", 1)[0].strip().split(".")[0]
        if key in READ_BEFORE_OVERRIDES:
            raise ConfigError(f"--set {text!r}: key {key!r} cannot be set with --set (it is read before overrides "
                              "apply); choose the scale with --scale, or edit the spec")
    return apply_overrides(data, overrides)


def _settings(config_class: type[Config], data: dict[str, Any], before: dict[str, Any], path: Path,
              overrides: list[str]) -> Config:
    """The design's config from the spec's own keys; an error that only the `--set` overrides cause names them,
    not the spec file."""
    return blaming_overrides(lambda sets: parse_config(config_class, _design_keys(data if sets else before),
                                                       str(path)), overrides, str(path))


def _design_keys(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in COMMON_KEYS}
