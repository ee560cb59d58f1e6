"""Run one slice of a study on a bare GPU machine and leave its exported results in a folder (issue 52).

    python benchmarks/gpu_slice.py k2020 overlap-seed0 OUT [--scale gpu] [--device auto] [--wheels DIR] [--jobs N]
                                   [--set KEY=VALUE ...] [--pack DIR [--piece-mib 15]]
                                   [--also SLICE ... [--start-within-s S]]

From the repository root of a copy of the working tree, with the machine's own Python (which has torch and
transformers, and may lack the package's lighter dependencies). Steps, each printed with its time:
1. the imports the package needs; any that fail are installed from the wheels in `--wheels` (default:
   shared/wheels, carried with the working tree, as benchmarks/README.md describes) into OUT/site, never from
   the network (the machine reaches none);
2. `study plan --slices`: the slice's estimate by the plan's measured rates;
3. `study run --slice NAME` in OUT/work (per-stage lines and a heartbeat every 60 s on stderr);
4. `results export --slice NAME` into OUT/export, for `mbertlab results merge` on the machine that reports;
5. with `--pack DIR`: the export as DIR/SLICE.tar.xz.000, .001, ..., pieces of at most `--piece-mib` MiB (an export
   holds the generated text, about 260 MB for a k2020 gpu slice, over the device tool's 16 MiB a file); on the
   machine that reports, `cat SLICE.tar.xz.* | tar -xJ` gives back `export/`. Then OUT/export is removed, so the
   next slice can run in the same OUT (its workdir reuses the generated languages).
With `--also`, more slices in turn in the same workdir (so they reuse the generated languages), none started
after `--start-within-s` seconds. The last line is `slice_seconds=...` (steps 3 to 5, summed over the slices).
Nothing here imports mbertlab: it runs as a subprocess once its dependencies import. On the CPU at test scale:
`--scale test --device cpu` (tests/benchmarks/test_gpu_slice.py).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The package's imports a slice may reach (pyproject's dependencies less the report's and the downloads' own)
NEEDED = ("pydantic", "typer", "rich", "yaml", "numpy", "scipy", "torch", "transformers", "tokenizers", "safetensors",
          "sentencepiece", "conllu", "seqeval", "filelock", "gensim", "statsmodels", "ufal.chu_liu_edmonds")


def main() -> None:
    args = parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(out / "site")])}
    started = time.time()
    step("imports", lambda: ensure_imports(env, Path(args.wheels), out / "site"))
    common = [args.study, "--scale", args.scale, *[a for s in args.set for a in ("--set", s)]]
    mbertlab = [sys.executable, "-m", "mbertlab", "--workdir", str(out / "work")]
    step("plan", lambda: run([*mbertlab, "study", "plan", *common, "--slices"], env, {"COLUMNS": "160"}))
    device = ["--device", args.device] if args.device else []
    total, packed = 0.0, set()
    for i, name in enumerate([args.slice, *args.also]):
        if i and time.time() - started > args.start_within_s:
            print(f"== skip slice {name}: {time.time() - started:.0f} s gone, none starts after "
                  f"{args.start_within_s:.0f} s", flush=True)
            continue
        slice_started = time.time()
        step(f"run slice {name}", lambda: run([*mbertlab, "study", "run", *common, *device, "--slice", name,
                                               "--jobs", str(args.jobs)], env))
        step("export", lambda: run([*mbertlab, "results", "export", args.study, str(out / "export"), "--scale",
                                    args.scale, *[a for s in args.set for a in ("--set", s)], "--slice", name], env))
        if args.pack:
            step("pack", lambda: pack(out / "export", Path(args.pack) / f"{name}.tar.xz", args.piece_mib, packed))
        total += time.time() - slice_started
    print(f"done in {time.time() - started:.1f} s; the export: {args.pack or out / 'export'}", flush=True)
    print(f"slice_seconds={total:.1f}", flush=True)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("study", help="Built-in study name or path to a spec YAML.")
    parser.add_argument("slice", help="A slice `study plan --slices` lists, e.g. seed0 or overlap-seed0.")
    parser.add_argument("out", help="Output folder: work/ (the workdir), export/ (the results), site/ (wheels).")
    parser.add_argument("--scale", default="gpu")
    parser.add_argument("--device", default=None, help="auto (default: the spec's), cpu, cuda or cuda:N.")
    parser.add_argument("--wheels", default=str(ROOT / "shared" / "wheels"), help="Wheels of missing imports.")
    parser.add_argument("--jobs", type=int, default=0, help="study run --jobs (0: one per core).")
    parser.add_argument("--set", action="append", default=[], help="A spec override (repeatable).")
    parser.add_argument("--pack", default=None, help="Folder for the export as xz-compressed pieces (then removed).")
    parser.add_argument("--piece-mib", type=float, default=15.0, help="Largest piece of --pack, in MiB.")
    parser.add_argument("--also", action="append", default=[], help="A slice to run after it, in the same workdir "
                        "(repeatable; needs --pack, which empties OUT/export for the next).")
    parser.add_argument("--start-within-s", type=float, default=float("inf"), help="Start no --also slice after "
                        "this many seconds of the script (a device call's limit less a slice's time).")
    args = parser.parse_args()
    if args.also and not args.pack:
        parser.error("--also needs --pack (each slice's export leaves OUT/export for the next)")
    return args


def step(name: str, work) -> None:
    began = time.time()
    print(f"== {name}", flush=True)
    work()
    print(f"== {name}: {time.time() - began:.1f} s", flush=True)


def run(command: list[str], env: dict, extra: dict | None = None) -> None:
    result = subprocess.run(command, cwd=ROOT, env={**env, **(extra or {})})
    if result.returncode != 0:
        sys.exit(f"gpu_slice: `{' '.join(command[2:])}` failed with exit status {result.returncode}")


def pack(export: Path, archive: Path, piece_mib: float, packed: set[str]) -> None:
    """`export` as a tar.xz cut into numbered pieces of at most `piece_mib` MiB beside `archive`; then removed.
    Artifacts an earlier slice of this call packed (the generated languages, shared tokenizers) are left out and
    listed in `already-packed.txt`: merge that slice's export with the earlier ones."""
    import shutil
    import tarfile

    here = {f"{d.parent.name}/{d.name}" for d in (export / "artifacts").glob("*/*") if d.is_dir()}
    left_out = sorted(here & packed)
    for rel in left_out:
        shutil.rmtree(export / "artifacts" / rel)
    (export / "already-packed.txt").write_text("".join(f"{rel}\n" for rel in left_out), encoding="utf-8")
    packed |= here
    archive.parent.mkdir(parents=True, exist_ok=True)
    whole = archive.parent / f".{archive.name}.tmp"
    with tarfile.open(whole, "w:xz", preset=3) as tar:
        tar.add(export, arcname="export")
    size, n = int(piece_mib * 2**20), 0
    with whole.open("rb") as fh:
        while chunk := fh.read(size):
            (archive.parent / f"{archive.name}.{n:03d}").write_bytes(chunk)
            n += 1
    whole.unlink()
    shutil.rmtree(export)
    print(f"packed into {n} piece(s) {archive}.000 ... ({len(left_out)} artifacts left to an earlier slice's)",
          flush=True)


PROBE = """
import importlib.util, sys
def found(name):
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:  # a dotted name whose parent is missing
        return False
print(' '.join(m for m in sys.argv[1:] if not found(m)))
"""


def missing(env: dict) -> list[str]:
    """The NEEDED modules the machine's Python (with PYTHONPATH's folders) cannot find, without importing them."""
    probe = PROBE
    out = subprocess.run([sys.executable, "-c", probe, *NEEDED], env=env, capture_output=True, text=True, check=True)
    return out.stdout.split()


def ensure_imports(env: dict, wheels: Path, site: Path) -> None:
    """Install the carried wheels into `site` when an import fails; stop with the list if any still fails."""
    gone = missing(env)
    print(f"missing imports: {', '.join(gone) or 'none'}", flush=True)
    if gone and wheels.is_dir() and any(wheels.glob("*.whl")):
        run([sys.executable, "-m", "pip", "install", "--quiet", "--no-index", "--no-deps", "--target", str(site),
             *map(str, sorted(wheels.glob("*.whl")))], env)
        gone = missing(env)
    if gone:
        sys.exit(f"gpu_slice: cannot import {', '.join(gone)} (put their wheels in {wheels})")


if __name__ == "__main__":
    main()
