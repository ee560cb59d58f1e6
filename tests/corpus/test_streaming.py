"""`mbertlab corpus build` streams: peak memory does not grow with the input (issue #3: a 1 GB input must
stay under about 2 GB).

The suite measures 50 MB and 300 MB inputs: peak RSS 57 MB and 99 MB (the de-duplication table of 1.6M
8-byte hashes, plus the old one while it grows; it is the only state that grows, 16–32 bytes per
distinct sentence). A 1 GB input (≈ 5.2M distinct ~200-byte lines + 5% repeats, `write_input(path, 1024)`,
same config) was measured once on the idle 2-core machine: **peak RSS 243 MB**, 236 s (before `fake_script`
became a translate table, which made a 30 MB build 55 s -> 6 s); too slow for the
suite.
"""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

CHARS = np.frombuffer(b"abcdefghijklmnopqrstuvwxyz     ", dtype=np.uint8)


def write_input(path, megabytes: int, seed: int = 0) -> None:
    """Distinct ~200-byte lines (a running number makes them unique) plus 5% repeats for de-duplication."""
    rng = np.random.default_rng(seed)
    target, written, i = megabytes * 2**20, 0, 0
    with path.open("w", encoding="utf-8") as f:
        while written < target:
            block = CHARS[rng.integers(len(CHARS), size=(10_000, 190))]
            lines = [f"{i + k} " + row.tobytes().decode() for k, row in enumerate(block)]
            lines += lines[:500]
            text = "\n".join(lines) + "\n"
            f.write(text)
            written += len(text)
            i += len(block)


# A child forked from pytest would count pytest's own pages in its peak: a small wrapper process forks it.
MEASURE = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], check=True, capture_output=True); "
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def peak_rss_mb_of_build(tmp_path, source, name: str) -> float:
    config = tmp_path / f"{name}.yaml"
    config.write_text(f"languages:\n  - name: xx\n    derive: fake-script\n    sources:\n      - path: {source}\n"
                      "dedup: true\n")
    command = [sys.executable, "-m", "mbertlab", "--workdir", str(tmp_path / f"work-{name}"), "corpus", "build",
               str(config)]
    done = subprocess.run([sys.executable, "-c", MEASURE, *command], check=True, capture_output=True, text=True)
    return int(done.stdout.split()[-1]) / 1024  # ru_maxrss is in KiB on Linux


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_corpus_build_memory_does_not_grow_with_input(tmp_path):
    small, large = tmp_path / "small.txt", tmp_path / "large.txt"
    write_input(small, 50)
    write_input(large, 300, seed=1)
    rss_small = peak_rss_mb_of_build(tmp_path, small, "small")
    rss_large = peak_rss_mb_of_build(tmp_path, large, "large")
    print(f"peak RSS: 50 MB input {rss_small:.0f} MB, 300 MB input {rss_large:.0f} MB")
    assert rss_large < 2048
    assert rss_large - rss_small < 100
