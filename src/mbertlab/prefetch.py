"""Batches prepared ahead for a GPU: a background thread draws or collates them on the CPU and starts their
pinned, asynchronous copies while the GPU computes the current step. On the CPU batches are prepared inline:
a thread would only add overhead there."""
from __future__ import annotations

import queue
import threading
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
_END = object()


def prefetched(items: Iterable[T], move: Callable[[T], T], device, depth: int = 2) -> Iterator[T]:
    """`move(item)` for each item in order; on CUDA computed up to `depth` items ahead on a background thread."""
    if device.type != "cuda":
        return (move(item) for item in items)
    return _ahead(items, move, depth)


def _ahead(items: Iterable[T], move: Callable[[T], T], depth: int) -> Iterator[T]:
    """The thread stops when the consumer does (a loop that breaks early closes this generator)."""
    ready: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(value) -> bool:
        while not stop.is_set():
            try:
                ready.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for item in items:
                if not put(move(item)):
                    return
            put(_END)
        except BaseException as err:  # handed to the consumer, raised there
            put(err)

    thread = threading.Thread(target=work, name="mbertlab-prefetch", daemon=True)
    thread.start()
    try:
        while (value := ready.get()) is not _END:
            if isinstance(value, BaseException):
                raise value
            yield value
    finally:
        stop.set()
        thread.join()
