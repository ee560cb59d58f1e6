"""Peak memory of word retrieval (cosine and CSLS) on the full shared MUSE dictionaries, against the size of
the dense float64 sources x targets matrix that `retrieve` built before it worked in blocks.

Vectors are random (300 dimensions, float32, as fastText/MUSE vectors): the similarity step's memory depends
only on how many source and target words there are. Peak = tracemalloc's peak during `word_retrieval`
(NumPy reports its buffers to tracemalloc), minus what was allocated before it started.
Usage: python benchmarks/retrieve_memory.py [SHARED_DATA] [MEMORY_MB]. Last line: name=value.
"""
from __future__ import annotations

import os
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

from mbertlab.analysis.retrieval import MEMORY_MB, word_retrieval
from mbertlab.formats.muse import read_dictionary

DIM = 300
MIB = 2**20


def vectors(words: set[str], rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {w: rng.standard_normal(DIM).astype(np.float32) for w in sorted(words)}


def measure(path: Path, memory_mb: float, csls: bool) -> tuple[int, int, float, float, float]:
    """(sources, targets, dense matrix MiB, peak MiB, seconds) of one retrieval."""
    dictionary = read_dictionary(path)
    rng = np.random.default_rng(0)
    src = vectors(set(dictionary), rng)
    tgt = vectors({t for ts in dictionary.values() for t in ts}, rng)
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    start = time.perf_counter()
    scores = word_retrieval(dictionary, src, tgt, csls=csls, memory_mb=memory_mb)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] - before
    tracemalloc.stop()
    dense = scores.pairs * len(tgt) * 8 / MIB
    return scores.pairs, len(tgt), dense, peak / MIB, seconds


def main() -> None:
    data = Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MBERTLAB_SHARED_DATA", "../shared/data"))
    memory_mb = float(sys.argv[2]) if len(sys.argv) > 2 else MEMORY_MB
    worst = 0.0
    print(f"memory_mb={memory_mb:g}")
    print(f"{'dictionary':<12}{'scoring':<8}{'sources':>8}{'targets':>8}{'dense MiB':>11}{'peak MiB':>10}{'s':>7}")
    for path in sorted((data / "muse").glob("*.txt")):
        for csls in (False, True):
            n_src, n_tgt, dense, peak, seconds = measure(path, memory_mb, csls)
            worst = max(worst, peak)
            print(f"{path.stem:<12}{'csls' if csls else 'cosine':<8}{n_src:>8}{n_tgt:>8}{dense:>11.0f}{peak:>10.0f}"
                  f"{seconds:>7.1f}")
    print(f"peak_mib={worst:.0f}")


if __name__ == "__main__":
    main()
