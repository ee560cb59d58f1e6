"""Study designs: how a spec's settings expand into jobs and how its rows become the paper's tables."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from mbertlab.config import Config
from mbertlab.registry import Registry
from mbertlab.report.render import Report
from mbertlab.studies.jobs import Job


@dataclass(frozen=True)
class Design:
    config_class: type[Config]
    plan: Callable[..., list[Job]]  # (spec) -> jobs
    report: Callable[..., Report]  # (spec, store, results) -> Report


DESIGNS: Registry[Design] = Registry("study design")


def get_design(name: str) -> Design:
    """A built-in design, or `package.module:name` for a design a user registers in their own module."""
    if ":" in name:
        import importlib

        module = name.split(":", 1)[0]
        try:
            importlib.import_module(module)
        except ImportError as err:
            from mbertlab.errors import ConfigError

            raise ConfigError(f"design {name!r}: cannot import {module!r} ({err})") from None
    return DESIGNS.get(name)


def _load_builtin_designs() -> None:
    """Every module of this package registers its design on import (the `*_report` modules hold tables)."""
    import importlib
    import pkgutil

    from mbertlab.studies import stages  # noqa: F401  (registers the stage kinds)

    for module in pkgutil.iter_modules(__path__):
        if not module.name.endswith("_report"):
            importlib.import_module(f"{__name__}.{module.name}")


_load_builtin_designs()
