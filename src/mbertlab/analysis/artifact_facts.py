"""What the verdicts' checks read from a study's artifacts (studies/preconditions.py), behind one door: read from a
workdir, remembering every answer, or replayed from those answers committed beside a paper (papers/records.py), so
a scorecard renders with its checks' numbers where the artifacts are gone. An artifact is named `stage/hash`."""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable


class NotRecorded(LookupError):
    """A replayed run lacks an answer a check asks for: the spec now reads artifacts the recorded run did not."""


def artifact_key(path: str | Path) -> str:
    """`stage/hash` of an artifact's path (wherever its workdir was)."""
    p = Path(path)
    return f"{p.parent.name}/{p.name}"


class ArtifactFacts:
    """Answers keyed by what was asked; `recorded` (a committed run's answers) replays them and reads nothing."""

    def __init__(self, workdir: Path | None = None, recorded: dict[str, Any] | None = None):
        self.workdir = workdir
        self.answers: dict[str, Any] = dict(recorded or {})
        self.replay = recorded is not None

    def locate(self, artifact: str) -> str:
        """A row's artifact path as a key; without a workdir, the first path seen says where the workdir is."""
        if self.workdir is None and not self.replay:
            self.workdir = Path(artifact).parent.parent
        return artifact_key(artifact)

    def _answer(self, question: str, compute: Callable[[Path], Any], *args: Any) -> Any:
        key = "|".join([question, *map(str, args)])
        if key not in self.answers:
            if self.replay:
                raise NotRecorded(f"{key}: not in the recorded run (the spec reads what that run did not)")
            self.answers[key] = compute(self.workdir)
        return self.answers[key]

    def inputs(self, artifact: str) -> list[str]:
        """The artifacts this one read (its inputs.json), as keys."""
        def read(workdir: Path) -> list[str]:
            found = workdir / artifact / "inputs.json"
            return [artifact_key(i["path"]) for i in json.loads(found.read_text(encoding="utf-8"))] \
                if found.is_file() else []
        return self._answer("inputs", read, artifact)

    def setting(self, artifact: str, key: str, default: Any = None) -> Any:
        """One key of its config.json (`default` when it has none)."""
        def read(workdir: Path) -> Any:
            path = workdir / artifact / "config.json"
            return json.loads(path.read_text(encoding="utf-8")).get(key, default) if path.is_file() else default
        return self._answer("setting", read, artifact, key)

    def dev_losses(self, pretrain: str, step: int | None) -> dict[str, float]:
        """Each language's dev MLM loss at the last evaluated step (up to `step`, a checkpoint's)."""
        return self._answer("dev_losses", lambda w: final_dev_loss(w / pretrain, step), pretrain, step)

    def plateau(self, shards: str, lang: str, selection: str) -> tuple[float, float]:
        """(unigram entropy, context-free loss) of a language's training tokens (plateau_losses)."""
        return tuple(self._answer("plateau", lambda w: list(plateau_losses(w / shards, lang, selection)),
                                  shards, lang, selection))

    def surface(self, data: str, train: str, test: str) -> float:
        """The surface-only classifier's accuracy, trained on `train` and scored on `test` (files of `data`)."""
        return self._answer("surface", lambda w: _surface_accuracy(w / data / train, w / data / test),
                            data, train, test)


def final_dev_loss(pretrain: Path, step: int | None = None) -> dict[str, float]:
    """Each language's dev MLM loss at the last evaluated step of a pretraining (its metrics.jsonl), or at the
    last evaluated step up to `step` (a checkpoint's)."""
    last: dict[str, tuple[int, float]] = {}
    path = pretrain / "metrics.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if "lang" in rec and "loss" in rec and rec["step"] >= last.get(rec["lang"], (-1, 0.0))[0] and \
                    (step is None or rec["step"] <= step):
                last[rec["lang"]] = (rec["step"], rec["loss"])
    return {lang: loss for lang, (_, loss) in last.items()}


@lru_cache(maxsize=256)
def plateau_losses(shards: Path, lang: str, selection: str = "uniform") -> tuple[float, float]:
    """(unigram entropy, context-free loss) in nats of a language's training tokens: the dev loss of a model that
    predicts every masked token from word frequencies alone, and that of the best one that ignores context but
    reads the token shown at a masked position under the run's 80/10/10 masking (analysis/plateau.py)."""
    import numpy as np

    from mbertlab.analysis.plateau import context_free_loss, selected_distribution
    from mbertlab.tokenizers.shards import ShardReader, _n_specials

    reader = ShardReader(shards)
    counts = np.bincount(reader.tokens(lang), minlength=reader.vocab_size)
    weights = np.maximum(reader.token_counts(), 1).astype(np.float64) ** -0.5 if selection == "rare" else None
    p = counts[counts > 0] / counts.sum()
    s = selected_distribution(counts, weights)
    return float(-(p * np.log(p)).sum()), context_free_loss(s, _n_specials(reader.tokenizer_dir))


@lru_cache(maxsize=256)
def _surface_accuracy(train: Path, test: Path) -> float:
    from mbertlab.analysis.surface import surface_baseline_accuracy

    return surface_baseline_accuracy(train, test)
