"""Word-order distance between the source's treebank and each target's (Wu & Dredze 2019 Table 6 orders its
languages by word-order distance to English, from Ahmad et al. 2019's WALS-based measure).

WALS features are not in the shared data and a generated language has none, so the distance here is measured
from the treebanks themselves, the same way for real and generated languages: for every universal relation
(subtype dropped; punct and root left out) the share of dependents placed before their head; the distance is
the mean absolute difference of those shares over the relations with at least `min_count` dependents in both
treebanks (0: the same head directions, 1: every one reversed). A WALS word-order feature (e.g. 83A, order of
object and verb) is one such direction, read from a grammar instead of counted.

Rows: task `parse`, mode `word_order`, metric `word_order_distance` (and `relations`, how many relations it
averages), train_lang = source, test_lang = target, split test.
"""
from __future__ import annotations

import json
from collections import Counter
from itertools import islice
from pathlib import Path

from pydantic import Field

from mbertlab.config import Config
from mbertlab.errors import DataError
from mbertlab.store.artifacts import final_path
from mbertlab.store.results import ResultRow, ResultsDB
from mbertlab.transfer.config import DataFile

SKIPPED = frozenset({"punct", "root"})


class WordOrderConfig(Config):
    train: list[DataFile] = Field(min_length=1, description="The source's parsing training file(s).")
    tests: list[DataFile] = Field(min_length=1, description="Each target's parsing test file.")
    max_sentences: int | None = Field(None, description="Sentences read per file (None: all).")
    min_count: int = Field(10, ge=1, description="Dependents a relation needs in both treebanks to count.")


def head_directions(paths: list[Path], max_sentences: int | None = None, v1_to_v2: bool = False
                    ) -> dict[str, tuple[int, int]]:
    """relation -> (dependents before their head, dependents) over the treebank files."""
    from mbertlab.formats.conllu import read_conllu

    before, total = Counter(), Counter()
    for path in paths:
        if not path.is_file():
            raise DataError(path, None, "no such treebank (needed for the word-order distance)")
        for sentence in islice(read_conllu(path, v1_to_v2=v1_to_v2), max_sentences):
            for word, (head, relation) in enumerate(zip(sentence.heads, sentence.deprels), 1):
                relation = relation.split(":")[0]
                if relation in SKIPPED or head == 0:
                    continue
                total[relation] += 1
                before[relation] += word < head
    return {r: (before[r], n) for r, n in total.items()}


def word_order_distance(a: dict[str, tuple[int, int]], b: dict[str, tuple[int, int]], min_count: int = 10
                        ) -> tuple[float, int]:
    """(mean |share before head in a − in b| over the relations frequent in both, how many relations)."""
    shared = [r for r in a if r in b and a[r][1] >= min_count and b[r][1] >= min_count]
    if not shared:
        return float("nan"), 0
    gaps = [abs(a[r][0] / a[r][1] - b[r][0] / b[r][1]) for r in shared]
    return sum(gaps) / len(gaps), len(shared)


def word_order_into(config: WordOrderConfig, data_root: Path | None, out: Path, results: ResultsDB,
                    study: str = "") -> dict:
    """word_order.json ({target: {distance, relations}}) and its rows."""
    from mbertlab.transfer.adapter import resolve

    def directions(files: list[DataFile]):
        return head_directions([resolve(f.path, data_root) for f in files], config.max_sentences,
                               any(f.v1_to_v2 for f in files))

    source = directions(config.train)
    stats = {}
    for test in config.tests:
        distance, relations = word_order_distance(source, directions([test]), config.min_count)
        stats[test.lang] = {"distance": distance, "relations": relations}
    (out / "word_order.json").write_text(json.dumps(stats, indent=1) + "\n", encoding="utf-8")
    artifact = str(final_path(out))
    common = {"study": study, "model": "", "task": "parse", "mode": "word_order", "train_lang": config.train[0].lang,
              "split": "test", "config_hash": final_path(out).name, "artifact": artifact}
    rows = [ResultRow(metric=metric, value=float(value), test_lang=target, **common)
            for target, values in stats.items() if values["relations"]  # no shared relation: no distance
            for metric, value in (("word_order_distance", values["distance"]), ("relations", values["relations"]))]
    results.add(rows, replace_artifact=artifact)
    return stats
