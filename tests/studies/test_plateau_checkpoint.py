"""The plateau check reads the dev loss of the checkpoint the rows used (issue 52: wd2020's paper scale picks
the best checkpoint on dev, and the check read the final loss): a low-resource encoder that overfits after its
best checkpoint passes on the rows that used that checkpoint, fails on rows of its final model."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mbertlab.store.results import ResultRow
from mbertlab.analysis import artifact_facts
from mbertlab.analysis.artifact_facts import ArtifactFacts
from mbertlab.studies.preconditions import LeftPlateau, evaluate_checks


@pytest.fixture(autouse=True)
def plateau_at_the_entropy(monkeypatch):
    """The plateau losses of the hand-made shard (64 equally frequent tokens): the checkpoint choice is under test
    here, the context-free loss itself in tests/analysis/test_plateau.py (it needs a whole shards folder)."""
    monkeypatch.setattr(artifact_facts, "plateau_losses", lambda shards, lang, selection="uniform":
                        (math.log(64), math.log(64)))


def _workdir(tmp_path):
    shards = tmp_path / "shards" / "s1"
    shards.mkdir(parents=True)
    np.save(shards / "lo.train.ids.npy", np.arange(64, dtype=np.int32).repeat(10))  # entropy ln 64 = 4.159 nats
    pretrain = tmp_path / "pretrain" / "p1"
    pretrain.mkdir(parents=True)
    (pretrain / "inputs.json").write_text(json.dumps([{"path": str(shards)}]))
    (pretrain / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [
        {"step": 100, "lang": "lo", "loss": 5.0}, {"step": 200, "lang": "lo", "loss": 2.5},  # best at 200
        {"step": 300, "lang": "lo", "loss": 4.0}]))  # overfit by the end: 0.16 nats below the entropy
    transfer = tmp_path / "transfer" / "t1"
    transfer.mkdir(parents=True)
    (transfer / "inputs.json").write_text(json.dumps([{"path": str(pretrain)}]))
    return transfer


def _check(rows, workdir):
    (result,) = evaluate_checks([LeftPlateau(kind="left_plateau", nats=0.5)], [{}], rows, ArtifactFacts(workdir))
    return result


def test_the_plateau_check_reads_the_checkpoint_the_rows_used(tmp_path):
    transfer = _workdir(tmp_path)
    best = ResultRow("f1", 0.5, artifact=str(transfer), extra={"checkpoint": "best", "row checkpoint": 200})
    final = ResultRow("f1", 0.4, artifact=str(transfer), extra={"checkpoint": "final"})
    assert math.log(64) - 2.5 > 0.5 > math.log(64) - 4.0
    used_best = _check([best], tmp_path)
    assert used_best.passed is True and "checkpoint 200" in used_best.text
    used_final = _check([final], tmp_path)
    assert used_final.passed is False and "checkpoint" not in used_final.text and "4.000" in used_final.text
    assert _check([best, final], tmp_path).passed is False  # the worst checkpoint any row used
    early = ResultRow("f1", 0.1, artifact=str(transfer), extra={"checkpoint": "100", "step": "100"})
    assert _check([early], tmp_path).passed is False  # Fig. 4's row of step 100 reads step 100
