"""Study designs: how a spec's settings expand into jobs and how its rows become the paper's tables.

A design is any module attribute holding a `Design`, named `package.module:attribute`. The built-in
designs (one per paper, under `mbertlab.papers`) are listed in `BUILTIN_DESIGNS` and loaded through
the same door as a user's own; nothing registers itself by being imported.
"""
from __future__ import annotations

import difflib
import importlib
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

from mbertlab.config import Config
from mbertlab.errors import ConfigError
from mbertlab.report.render import Report
from mbertlab.studies.jobs import Job, StageKind
from mbertlab.studies.kinds import add_stage_kinds

# Adding a paper: a `papers/<key>/` folder and one line here.
BUILTIN_DESIGNS = {
    "k2020": "mbertlab.papers.k2020:DESIGN",
    "wd2019": "mbertlab.papers.wd2019:DESIGN",
    "wd2020": "mbertlab.papers.wd2020:DESIGN",
    "liu2020": "mbertlab.papers.liu2020:DESIGN",
    "lms2023": "mbertlab.papers.lms2023:DESIGN",
}
ALIASES = {"conditions": "k2020"}  # the k2020 design's name before it had a home of its own


@dataclass(frozen=True)
class Design:
    config_class: type[Config]
    plan: Callable[..., list[Job]]  # (spec) -> jobs
    report: Callable[..., Report]  # (spec, store, results) -> Report
    stage_kinds: Mapping[str, StageKind] = field(default_factory=dict)  # the design's own kinds (wd2020's, a user's)


# The modules of users' designs imported so far: spawned workers import them too, so whatever they register on
# import (a task, a word map, a stage kind) exists where the stages build.
USER_MODULES: list[str] = []


def get_design(name: str, spec_dir: Path | None = None) -> Design:
    """A built-in design by name, or `package.module:attribute` for a user's own, importable from the spec's
    folder (kept on the path, so spawned workers find the module too) or from PYTHONPATH."""
    ref = BUILTIN_DESIGNS.get(ALIASES.get(name, name), name)
    if spec_dir is not None and ref not in BUILTIN_DESIGNS.values() and str(spec_dir.resolve()) not in sys.path:
        sys.path.append(str(spec_dir.resolve()))
    if ":" not in ref:
        close = difflib.get_close_matches(name, list(BUILTIN_DESIGNS), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise ConfigError(f"unknown study design {name!r}{hint} (built-in: {', '.join(BUILTIN_DESIGNS)}; "
                          "or package.module:attribute)")
    module_name, attribute = ref.split(":", 1)
    try:
        module = importlib.import_module(module_name)
    except ImportError as err:
        raise ConfigError(f"design {name!r}: cannot import {module_name!r} ({err})") from None
    design = getattr(module, attribute, None)
    if not isinstance(design, Design):
        raise ConfigError(f"design {name!r}: {module_name} has no Design named {attribute!r}")
    add_stage_kinds(design.stage_kinds)
    if module_name not in USER_MODULES:
        USER_MODULES.append(module_name)
    return design
