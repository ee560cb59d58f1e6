"""The figures of docs/reliability.md: the fuzz cases of test_fuzz.py, derandomized, counted per outcome
instead of stopping at the first failure. Run from the repository root:

    PYTHONPATH=src:. python -m tests.formats.fuzz_report

Against another version of the readers, put its `src` first on PYTHONPATH (the harness is this one)."""
from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.formats.fuzzing import run_case
from tests.formats.test_fuzz import FORMATS, spec

COLUMNS = ("valid: accepted", "invalid: rejected", "mutated: accepted", "mutated: rejected", "ValidRejected",
           "InvalidAccepted", "NotWrittenBack", "BadMessage", "crash")


def count(fmt: str, path: Path, cases: int) -> Counter:
    fuzz, counts = spec(fmt), Counter()

    @settings(max_examples=cases, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def case(data):
        try:
            counts[run_case(fuzz, path, data)] += 1
        except AssertionError as failure:  # the harness's failure classes
            counts[type(failure).__name__] += 1
        except Exception:  # noqa: BLE001 - a crash: anything a reader raises other than DataError
            counts["crash"] += 1

    case()
    return counts


def main(cases: int = 1000) -> None:
    print("| format | cases | " + " | ".join(COLUMNS) + " |")
    print("|---" * (len(COLUMNS) + 2) + "|")
    with tempfile.TemporaryDirectory() as folder:
        for fmt in FORMATS:
            counts = count(fmt, Path(folder) / "input", cases)
            print(f"| {fmt} | {sum(counts.values())} | " + " | ".join(str(counts[c]) for c in COLUMNS) + " |")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
