"""`indexbridge bench dv`, the lakehouse lines: moving the deletion vectors of many data files from
Paimon deletion files to Iceberg v3 Puffin files and to Delta Lake DV files, against merely
reading them, in the same run (issue 18; goal <= 1.2x).

The input is generated: ``files`` data files with ``positions`` deleted positions in all (half
dense runs, half scattered, :func:`indexbridge.cli.bench.file_positions`), 100 data files per
bucket, each bucket's 64-bit DVs written as Paimon writes its deletion files (HashMap order,
rolling at 2 MB). Then, per deletion file, as the CLI and the Spark tasks do it:

* baseline: reading every DV (``paimon.dv.read_deletion_vectors``: decoded, CRC and cardinality
  checked);
* Puffin: ``iceberg.bridge.deletion_file_to_puffin`` (every frame checked, then copied into a
  Puffin file with Iceberg's footer);
* Delta: ``delta.bridge.deletion_file_to_delta`` with ``u`` descriptors (every frame checked, then
  the whole file copied under Delta's name).

Timings are the best of ``rounds``; no number is asserted.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from indexbridge.cli.bench import best_time, file_positions
from indexbridge.cli.progress import progress
from indexbridge.delta.bridge import deletion_file_to_delta
from indexbridge.iceberg.bridge import PaimonDeletionFile, PaimonDv, deletion_file_to_puffin
from indexbridge.paimon.dv import DeletionVector, DeletionVectorRange, read_deletion_vectors, write_deletion_files

FILES_PER_BUCKET = 100
DELETION_FILE_TARGET_SIZE = 2 * 1024 * 1024  # deletion-vector.index-file.target-size
GOAL = 1.2
FULL_FILES, FULL_POSITIONS = 10_000, 200_000_000  # the scale (--full)


def generate(root: Path, files: int, positions: int) -> list[PaimonDeletionFile]:
    """The deletion files of ``files`` data files (one bucket at a time, to bound memory)."""
    per_file = max(1, positions // files)
    out = []
    for bucket, first in enumerate(range(0, files, FILES_PER_BUCKET)):
        count = min(FILES_PER_BUCKET, files - first)
        dvs = [(f"data-{first + i}.parquet", DeletionVector.from_positions(p, bitmap64=True))
               for i, p in enumerate(file_positions(count, per_file, seed=bucket))]  # fmt: skip
        directory = root / f"bucket-{bucket}"
        metas = write_deletion_files(directory, dvs, target_size=DELETION_FILE_TARGET_SIZE, file_name=lambda n, b=bucket: f"index-{b}-{n}")
        for meta in metas:
            ranges = tuple(PaimonDv(r.data_file, root / "data" / r.data_file, r.offset, r.length, r.cardinality) for r in meta.ranges)
            out.append(PaimonDeletionFile(meta.file_name, directory / meta.file_name, ranges))
    return out


def _read(deletion_files: list[PaimonDeletionFile]) -> int:
    n = 0
    for f in deletion_files:
        n += len(read_deletion_vectors(f.path, [DeletionVectorRange(d.data_file, d.offset, d.length, d.cardinality) for d in f.dvs]))
    return n


def _best_conversion(convert: Callable[[PaimonDeletionFile, Path], object], deletion_files: list[PaimonDeletionFile], out_root: Path, rounds: int) -> float:
    """The best time of ``convert`` over every deletion file, each round into a new directory
    that is deleted after its timing (deleting the last round's tens of MB inside the timing had
    been counted as conversion)."""
    best = float("inf")
    for n in progress(range(rounds), "timing rounds", unit="round"):
        out = out_root / f"round-{n}"
        out.mkdir(parents=True)
        t0 = time.perf_counter()
        for f in deletion_files:
            convert(f, out)
        best = min(best, time.perf_counter() - t0)
        shutil.rmtree(out)
    return best


def run(files: int, positions: int, rounds: int) -> None:
    with tempfile.TemporaryDirectory(prefix="indexbridge-bench-lakehouse-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        deletion_files = generate(root / "paimon", files, positions)
        size = sum(f.path.stat().st_size for f in deletion_files)
        print(f"lakehouse: {files} data files, {positions} deleted positions, {len(deletion_files)} Paimon deletion files "
              f"({size / 1e6:.1f} MB), generated in {time.perf_counter() - t0:.1f} s; best of {rounds}")  # fmt: skip
        read = best_time(lambda: _read(deletion_files), rounds)
        conversions = (
            ("Paimon DVs -> Iceberg Puffin", deletion_file_to_puffin, root / "iceberg"),
            ("Paimon DVs -> Delta DV files (u)", lambda f, out: deletion_file_to_delta(f, out, "u"), root / "delta"),
        )
        for label, convert, out_root in conversions:
            t = _best_conversion(convert, deletion_files, out_root, rounds)
            print(f"lakehouse: {label:<34} {t * 1000:9.1f} ms   vs read every DV {read * 1000:9.1f} ms   "
                  f"ratio {t / read:5.2f}   (goal <= {GOAL}: {'met' if t / read <= GOAL else 'not met'})")
