"""De-duplication in bounded memory: an open-addressing table of 8-byte line hashes in one numpy array.

A Python set of hashes costs about 80 bytes per distinct sentence; this table costs 8 bytes per slot at
a load between 1/4 and 1/2, so 16–32 bytes per distinct sentence (10M sentences ≈ 160–320 MB).
Two different sentences share a 64-bit hash with probability about n²/2⁶⁵ (≈ 3·10⁻⁶ for 10M).
"""
from __future__ import annotations

import hashlib

import numpy as np


class SeenLines:
    def __init__(self, capacity: int = 1 << 16):
        self._table = np.zeros(capacity, dtype=np.uint64)
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def add(self, line: str) -> bool:
        """True if the line is new (and remembers it), False if it was seen before."""
        key = int.from_bytes(hashlib.blake2b(line.encode("utf-8"), digest_size=8).digest(), "little") or 1
        if not self._insert(self._table, key):
            return False
        self._size += 1
        if 2 * self._size > len(self._table):
            self._grow()
        return True

    @staticmethod
    def _insert(table: np.ndarray, key: int) -> bool:
        mask = len(table) - 1
        i = key & mask
        while True:
            slot = int(table[i])
            if slot == 0:
                table[i] = key
                return True
            if slot == key:
                return False
            i = (i + 1) & mask

    def _grow(self) -> None:
        old = self._table
        self._table = np.zeros(2 * len(old), dtype=np.uint64)
        for start in range(0, len(old), 1 << 16):  # in blocks: no list of every key at once
            block = old[start:start + (1 << 16)]
            for key in block[block != 0].tolist():
                self._insert(self._table, key)
