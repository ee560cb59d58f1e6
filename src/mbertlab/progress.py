"""Progress: Rich bars with rate and ETA on a terminal; plain lines when stderr goes to a log; none with --quiet."""
from __future__ import annotations

import os
import sys
import threading
import time

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

console = Console(stderr=True)
HEARTBEAT_ENV = "MBERTLAB_HEARTBEAT_S"  # seconds between heartbeat lines (default 60)
_quiet = False


def set_quiet(quiet: bool) -> None:
    """`--quiet`: no progress bars and no progress lines from this process."""
    global _quiet
    _quiet = quiet


def progress(*extra_columns: TextColumn, counts: bool = True) -> Progress:
    """A progress display: description, bar, [n/N], %, elapsed, ETA, plus any extra text columns."""
    return Progress(
        TextColumn("{task.description}", style="bold", markup=False),  # descriptions hold study names
        BarColumn(),
        *([MofNCompleteColumn()] if counts else []),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        *extra_columns,
        console=console,
        transient=False,
        disable=_quiet or not console.is_terminal,
    )


def heartbeat_seconds() -> float:
    """The heartbeat interval: MBERTLAB_HEARTBEAT_S, 60 s unless set (tests set a fraction of a second)."""
    value = os.environ.get(HEARTBEAT_ENV, "60")
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        from mbertlab.errors import ConfigError

        raise ConfigError(f"environment variable {HEARTBEAT_ENV}: expected seconds > 0, got {value!r}")
    return seconds


def duration(seconds: float) -> str:
    """`42.0 s` under a minute, `12 min 05 s` above: an hour-long stage is read at a glance."""
    minutes, secs = divmod(int(seconds), 60)
    return f"{seconds:.1f} s" if seconds < 60 else f"{minutes} min {secs:02d} s"


class StageLines:
    """A study's progress for a log rather than a terminal: a line per finished stage (kind, hash, seconds,
    done/total) and a heartbeat every MBERTLAB_HEARTBEAT_S seconds naming the stages running, so that
    `study run > log` shows it is alive during an hour-long pretraining. Silent on a terminal (the bar shows
    it) and with --quiet."""

    def __init__(self, name: str, total: int):
        self.name, self.total, self.done = name, total, 0
        self.enabled = not _quiet and not console.is_terminal
        self.running: dict[str, float] = {}
        self.lock, self.stopped = threading.Lock(), threading.Event()
        self.began = time.monotonic()
        self.thread: threading.Thread | None = None

    def __enter__(self) -> StageLines:
        if self.enabled:
            self.thread = threading.Thread(target=self._beat, args=(heartbeat_seconds(),), daemon=True)
            self._say(f"{self.total} stages to build")
            self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        if self.thread is not None:
            self.thread.join()

    def start(self, stage: str) -> None:
        with self.lock:
            self.running[stage] = time.monotonic()

    def finish(self, stage: str) -> None:
        with self.lock:
            seconds = time.monotonic() - self.running.pop(stage, time.monotonic())
            self.done += 1
            self._say(f"{stage} done in {seconds:.1f} s ({self.done}/{self.total})")

    def _beat(self, every: float) -> None:
        while not self.stopped.wait(every):
            with self.lock:
                now = time.monotonic()
                running = ", ".join(f"{s} for {duration(now - t)}" for s, t in self.running.items())
                self._say(f"{self.done}/{self.total} stages done after {duration(now - self.began)}; "
                          + (f"running: {running}" if running else "no stage running (workers exiting)"))

    def _say(self, text: str) -> None:
        if self.enabled:
            print(f"{self.name}: {text}", file=sys.stderr, flush=True)
