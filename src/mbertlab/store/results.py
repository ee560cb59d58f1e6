"""results.db: one SQLite row per score. Reports are rendered from here only.

WAL mode and a busy timeout let several processes (a study's parallel stages, DDP ranks, SLURM
jobs on a shared filesystem) write at once; a writer that still meets a lock retries.
"""
from __future__ import annotations

import csv
import json
import sqlite3
import time
from contextlib import closing
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Iterable, Iterator, TextIO

from mbertlab.errors import StorageError
from mbertlab.store.faults import NO_SPACE

COLUMNS = (
    "study", "model", "task", "mode", "train_lang", "test_lang", "split", "metric",
    "value", "seed", "config_hash", "artifact", "time", "extra",
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  study TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  task TEXT NOT NULL DEFAULT '',
  mode TEXT NOT NULL DEFAULT '',
  train_lang TEXT NOT NULL DEFAULT '',
  test_lang TEXT NOT NULL DEFAULT '',
  split TEXT NOT NULL DEFAULT '',
  metric TEXT NOT NULL,
  value REAL NOT NULL,
  seed INTEGER,
  config_hash TEXT NOT NULL DEFAULT '',
  artifact TEXT NOT NULL DEFAULT '',
  time REAL NOT NULL,
  extra TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS results_study ON results(study, task, metric);
CREATE INDEX IF NOT EXISTS results_artifact ON results(artifact);
"""

# What a transfer row's `extra` records of the run its grid selected (transfer/run.py), as opposed to the tags
# of the job that made it: two rows of one condition can differ here without being of different conditions.
SELECTED_RUN_KEYS = frozenset({"lr", "batch_size", "step", "epoch", "epochs", "checkpoint"})


@dataclass
class ResultRow:
    metric: str
    value: float
    study: str = ""
    model: str = ""
    task: str = ""
    mode: str = ""
    train_lang: str = ""
    test_lang: str = ""
    split: str = ""
    seed: int | None = None
    config_hash: str = ""
    artifact: str = ""
    time: float = field(default_factory=time.time)
    extra: dict[str, Any] = field(default_factory=dict)

    def as_record(self) -> dict[str, Any]:
        return asdict(self)


class ResultsDB:
    def __init__(self, path: str | Path, retries: int = 50, existing: bool = False):
        """`existing`: for commands that only read results, refuse a missing file (a mistyped `-w`) instead of
        making the folder and an empty database."""
        self.path = Path(path)
        self.retries = retries
        if existing and not self.path.is_file():
            raise StorageError(f"{self.path}: no such file; expected the results database of a workdir where "
                               "studies or stages have run (is -w right?)")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._check_schema()
        self._with_retry(lambda con: con.executescript(SCHEMA))

    def _check_schema(self) -> None:
        """Refuse a database whose `results` table is another program's, read-only, before WAL mode and our
        indexes would change the file (a damaged file is left to the usual path, which words it)."""
        if not self.path.is_file():
            return
        try:
            with closing(sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True)) as con:
                found = {row[1] for row in con.execute("PRAGMA table_info(results)")}
        except sqlite3.Error:
            return
        if found and not set(COLUMNS) <= found:
            missing = ", ".join(c for c in COLUMNS if c not in found)
            raise StorageError(f"{self.path}: not an mbertlab results database (its table `results` lacks the "
                               f"columns {missing}); move it aside, or choose another workdir (-w)")

    def _connect(self) -> sqlite3.Connection:
        con = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        con.execute("PRAGMA journal_mode=WAL")
        con.execute("PRAGMA busy_timeout=30000")
        return con

    def _with_retry(self, work):
        delay = 0.01
        for attempt in range(self.retries):
            con = None
            try:
                con = self._connect()
                return work(con)
            except sqlite3.OperationalError as err:
                if "locked" not in str(err) and "busy" not in str(err) or attempt == self.retries - 1:
                    raise self._fault(err) from err
            except sqlite3.DatabaseError as err:  # not a database, a damaged page (subclasses are our own bugs)
                if type(err) is not sqlite3.DatabaseError:
                    raise
                raise self._fault(err) from err
            finally:
                if con is not None:
                    con.close()
            time.sleep(delay)
            delay = min(delay * 2, 0.5)

    def _fault(self, err: sqlite3.Error) -> StorageError:
        """One line naming the file: damaged (recoverable only by hand), or not writable here."""
        if not isinstance(err, sqlite3.OperationalError):
            return StorageError(f"{self.path}: a damaged results database ({err}); move it aside and run again to "
                                f"start a new one (`sqlite3 {self.path.name} .recover` may save its rows)")
        if "full" in str(err):
            return StorageError(f"{self.path}: {NO_SPACE}")
        if any(words in str(err) for words in ("no such column", "has no column", "no such table")):
            return StorageError(f"{self.path}: not an mbertlab results database ({err}: a table `results` of "
                                "another schema); move it aside, or choose another workdir (-w)")
        if "locked" in str(err) or "busy" in str(err):
            return StorageError(f"{self.path}: still locked by another process after {self.retries} tries ({err}); "
                                "run the command again when it has finished")
        return StorageError(f"{self.path}: cannot open or write the results database ({err}); the workdir must be "
                            "a folder you may write to")

    def add(self, rows: Iterable[ResultRow], replace_artifact: str | None = None) -> int:
        """Insert rows in one transaction; with `replace_artifact`, that artifact's rows are replaced.

        Replacing makes a re-run of a stage idempotent: a stage killed after writing its rows and
        run again leaves one copy, not two.
        """
        rows = list(rows)
        cols = [c for c in COLUMNS]
        sql = f"INSERT INTO results ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"
        values = [tuple(_column_value(r, c) for c in cols) for r in rows]

        def work(con: sqlite3.Connection) -> int:
            con.execute("BEGIN IMMEDIATE")
            try:
                if replace_artifact is not None:
                    con.execute("DELETE FROM results WHERE artifact = ?", (replace_artifact,))
                con.executemany(sql, values)
                con.execute("COMMIT")
            except BaseException:
                con.execute("ROLLBACK")
                raise
            return len(values)

        return self._with_retry(work)

    def query(self, **filters: Any) -> list[ResultRow]:
        """Rows whose columns equal the given values (a list/tuple value means 'any of')."""
        clauses, params = [], []
        for key, value in filters.items():
            if key not in COLUMNS:
                raise KeyError(f"unknown results column {key!r}")
            if isinstance(value, (list, tuple, set)):
                clauses.append(f"{key} IN ({', '.join('?' for _ in value)})")
                params.extend(value)
            else:
                clauses.append(f"{key} = ?")
                params.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {', '.join(COLUMNS)} FROM results {where} ORDER BY id"
        return self._with_retry(lambda con: [_row_from(r) for r in con.execute(sql, params).fetchall()])

    def __iter__(self) -> Iterator[ResultRow]:
        return iter(self.query())

    def count(self) -> int:
        return self._with_retry(lambda con: con.execute("SELECT COUNT(*) FROM results").fetchone()[0])


def _column_value(row: ResultRow, col: str) -> Any:
    value = getattr(row, col)
    if col == "extra":
        return json.dumps(value, sort_keys=True)
    if col == "value":
        return float(value)
    return value


def _row_from(values: tuple) -> ResultRow:
    record = dict(zip(COLUMNS, values))
    record["extra"] = json.loads(record["extra"] or "{}")
    return ResultRow(**record)


def write_csv(rows: Iterable[ResultRow], out: TextIO) -> None:
    writer = csv.writer(out)
    names = [f.name for f in fields(ResultRow)]
    writer.writerow(names)
    for row in rows:
        rec = row.as_record()
        rec["extra"] = json.dumps(rec["extra"], sort_keys=True)
        writer.writerow([rec[n] if rec[n] is not None else "" for n in names])


def open_results(workdir: str | Path, existing: bool = False) -> ResultsDB:
    """The workdir's results.db; with `existing` (reading commands), one that is already there."""
    return ResultsDB(Path(workdir) / "results.db", existing=existing)
