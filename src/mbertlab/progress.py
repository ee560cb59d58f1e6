"""Rich progress bars with rate and ETA, quiet when output is not a terminal."""
from __future__ import annotations

from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TaskProgressColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)

console = Console(stderr=True)


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
        disable=not console.is_terminal,
    )
