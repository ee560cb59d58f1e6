"""The toy design re-exported by a module that registers a word map on import, as a user's design module
registers its own task or manipulation: the runner's spawned workers must see it too."""
from __future__ import annotations

from mbertlab.corpus.manipulations import WORD_MAPS, register_word_map
from tests.studies.toydesign import toy  # noqa: F401  (the design this module's specs name)

if "toy-shout" not in WORD_MAPS:
    register_word_map("toy-shout", str.upper)
