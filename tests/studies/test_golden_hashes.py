"""Golden job hashes: every built-in spec's artifact hashes at every scale it defines, as committed.

An artifact's hash is its address in every existing workdir; a config field added with its default, a type
tightened, a refactor of a design must not move it. A deliberate change is listed in docs/artifacts.md and the
file regenerated with `MBERTLAB_UPDATE_GOLDEN=1 pytest tests/studies/test_golden_hashes.py` (which then fails once,
so an update is never silent)."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from mbertlab.errors import ConfigError
from mbertlab.store.artifacts import ArtifactStore
from mbertlab.studies.kinds import job_hash
from mbertlab.studies.runner import study_jobs
from mbertlab.studies.spec import builtin_specs, load_spec, read_spec_data

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).with_name("golden_hashes.json")


def spec_paths() -> dict[str, Path]:
    """Built-in specs by name and the user-facing specs of `studies/` by repo-relative path."""
    specs = dict(builtin_specs())
    specs.update({f"studies/{p.name}": p for p in sorted((REPO / "studies").glob("*.yaml"))})
    return specs


def hashes_by_kind(path: Path, scale: str, store: ArtifactStore) -> dict[str, list[str]] | str:
    """Each stage kind's sorted job hashes; a spec that cannot be planned here gives its error's text."""
    try:
        jobs = study_jobs(load_spec(path, scale))
    except ConfigError as e:
        return str(e).replace(str(REPO) + "/", "")
    memo: dict = {}
    out: dict[str, list[str]] = {}
    for job in jobs:
        out.setdefault(job.kind, []).append(job_hash(job, store, memo))
    return {kind: sorted(v) for kind, v in sorted(out.items())}


def current_hashes(store: ArtifactStore) -> dict:
    out: dict = {}
    for name, path in spec_paths().items():
        data = read_spec_data(path)
        for scale in sorted({data.get("scale", "lab"), *(data.get("scales") or {})}):
            out.setdefault(name, {})[scale] = hashes_by_kind(path, scale, store)
    return out


def differences(golden: dict, now: dict) -> list[str]:
    """One line per (spec, scale, kind) whose hashes moved: how many appeared and disappeared."""
    lines = []
    for name in sorted({*golden, *now}):
        for scale in sorted({*golden.get(name, {}), *now.get(name, {})}):
            old, new = golden.get(name, {}).get(scale, {}), now.get(name, {}).get(scale, {})
            if isinstance(old, str) or isinstance(new, str):
                if old != new:
                    lines.append(f"{name} {scale}: {old!r:.80} -> {new!r:.80}")
                continue
            for kind in sorted({*old, *new}):
                before, after = set(old.get(kind, ())), set(new.get(kind, ()))
                gone, added = before - after, after - before
                if gone or added:
                    lines.append(f"{name} {scale} {kind}: {len(gone)} hashes gone, {len(added)} new")
    return lines


@pytest.mark.slow
def test_builtin_specs_keep_their_job_hashes(tmp_path):
    now = current_hashes(ArtifactStore(tmp_path))
    if os.environ.get("MBERTLAB_UPDATE_GOLDEN") == "1":
        GOLDEN.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        pytest.fail(f"{GOLDEN.name} rewritten; list the changes in docs/artifacts.md and rerun without the variable")
    moved = differences(json.loads(GOLDEN.read_text()), now)
    assert not moved, "job hashes moved (list deliberate changes in docs/artifacts.md):\n" + "\n".join(moved)


def test_differences_name_what_moved():
    golden = {"s": {"lab": {"pretrain": ["a", "b"], "corpus": ["c"]}, "test": "needs an encoder"}}
    now = {"s": {"lab": {"pretrain": ["a", "x"], "corpus": ["c"], "transfer": ["t"]}, "test": "needs an encoder"},
           "new": {"lab": {"corpus": ["c"]}}}
    assert differences(golden, now) == ["new lab corpus: 0 hashes gone, 1 new",
                                        "s lab pretrain: 1 hashes gone, 1 new",
                                        "s lab transfer: 0 hashes gone, 1 new"]
    assert differences(golden, golden) == []


@pytest.mark.slow
def test_hashes_follow_the_data_not_where_it_lies(tmp_path, shared_data):
    """A clone elsewhere with the data beside it (CI's layout) plans the committed hashes: data files enter the
    hash by content, not by absolute path; an edited file moves the corpus hash."""
    import shutil

    spec_dir = tmp_path / "elsewhere" / "repo" / "studies"  # the specs' root is ../../shared/data
    spec_dir.mkdir(parents=True)
    data = tmp_path / "elsewhere" / "shared" / "data"
    shutil.copytree(shared_data, data)
    golden = json.loads(GOLDEN.read_text())
    store = ArtifactStore(tmp_path / "w")
    for name in ("liu2020-real.yaml", "k2020-lab.yaml"):
        shutil.copy(REPO / "studies" / name, spec_dir / name)
        assert hashes_by_kind(spec_dir / name, "test", store) == golden[f"studies/{name}"]["test"], name
    with (data / "raw_text" / "en.txt").open("a", encoding="utf-8") as fh:
        fh.write("One more English sentence.\n")
    moved = hashes_by_kind(spec_dir / "liu2020-real.yaml", "test", store)
    assert moved["corpus"] != golden["studies/liu2020-real.yaml"]["test"]["corpus"]


def test_an_unreadable_data_file_is_one_config_error(tmp_path):
    from mbertlab.corpus.build import CorpusConfig

    source = {"path": str(tmp_path / "no.txt")}
    config = CorpusConfig.model_validate({"languages": [{"name": "x", "sources": [source]}]})
    with pytest.raises(ConfigError, match=r"no\.txt: cannot read the data file to hash it"):
        ArtifactStore(tmp_path).hash_for("corpus", config)
