"""Seeded deletion-vector position sets for the lakehouse tests: every roaring container kind
(array, bitmap, run), chunk and key boundaries, and positions at and beyond 2^32."""

from __future__ import annotations

import numpy as np

from indexbridge.paimon.dv import MAX_POSITION_64

BOUNDARIES = [0, 1, 4095, 4096, 65535, 65536, 65537, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, 5 << 32, MAX_POSITION_64]


def positions(seed: int, wide: bool = True) -> np.ndarray:
    """A sorted, distinct int64 array; ``wide=False`` keeps everything below 2^31."""
    rng = np.random.default_rng(seed)
    top = 3 << 32 if wide else 2**31 - 1
    parts = []
    for _ in range(int(rng.integers(1, 8))):
        kind = int(rng.integers(0, 5))
        start = int(rng.integers(0, 1 << 20)) if rng.random() < 0.7 else int(rng.integers(0, top))
        if kind == 0:  # scattered: array containers
            parts.append(rng.integers(start, start + 200_000, size=int(rng.integers(1, 3000))))
        elif kind == 1:  # a run
            parts.append(np.arange(start, start + int(rng.integers(1, 20_000))))
        elif kind == 2:  # a dense chunk: a bitmap container
            chunk = start & ~0xFFFF
            parts.append(chunk + rng.integers(0, 65536, size=int(rng.integers(4097, 9000))))
        elif kind == 3:  # boundaries
            candidates = [b for b in BOUNDARIES if b <= top]
            parts.append(np.array(rng.choice(candidates, size=int(rng.integers(1, 4))), np.int64))
        else:  # across 2^31 inside a key, where signed arithmetic breaks
            key = int(rng.integers(0, 3)) if wide else 0
            base = (key << 32) + 0x7FFFFF00
            parts.append(np.arange(base, base + int(rng.integers(1, 3000))))
    out = np.unique(np.concatenate(parts).astype(np.int64))
    return out[(out >= 0) & (out <= top)]
