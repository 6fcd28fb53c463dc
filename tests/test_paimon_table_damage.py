"""Damaged copies of real Paimon tables (``paimon_suite``): every read path and ``verify`` fail
with one ``IndexFormatError`` naming the damaged file, never a traceback or a wrong answer."""

from __future__ import annotations

import io
import json
import shutil
from contextlib import redirect_stderr
from pathlib import Path

import fastavro
import pytest

from indexbridge.cli import main
from indexbridge.errors import IndexFormatError
from indexbridge.paimon.table.manifest import read_manifest_list
from indexbridge.paimon.table.table import FileStoreTable
from indexbridge.paimon.table.verify import verify


def _copy(paimon_suite, tmp_path, want) -> Path:
    """A copy of the first suite table for which ``want(table)`` holds."""
    for t in paimon_suite.values():
        table = FileStoreTable.open(t["path"])
        if want(table):
            return Path(shutil.copytree(t["path"], tmp_path / t["name"]))
    pytest.fail("no suite table has what this test damages; widen the suite's seeds")


def _with_deletion_vectors(table: FileStoreTable) -> bool:
    return any(e.deletion_file is not None and e.deletion_file.cardinality for e in table.plan().data_files)


def _with_index_files(table: FileStoreTable) -> bool:
    return any(e.file_index_path is not None for e in table.plan().data_files)


def _with_hash_indexes(table: FileStoreTable) -> bool:
    return any(i.index_type == "HASH" and i.row_count for i in table.plan().index_files)


def _flip(path: Path, offset: int) -> None:
    data = bytearray(path.read_bytes())
    data[offset] ^= 0x40
    path.write_bytes(bytes(data))


def _fails_naming(path: Path, action) -> IndexFormatError:
    with pytest.raises(IndexFormatError) as e:
        action()
    assert e.value.source.startswith(str(path)), f"{e.value} does not name {path}"
    return e.value


def test_flipped_byte_in_a_deletion_vector(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, _with_deletion_vectors)
    entry = next(e for e in FileStoreTable.open(path).plan().data_files if e.deletion_file and e.deletion_file.cardinality)
    _flip(entry.deletion_file.path, entry.deletion_file.offset + 10)  # inside the bitmap: the CRC no longer holds
    _fails_naming(entry.deletion_file.path, lambda: verify(FileStoreTable.open(path)))
    _fails_naming(entry.deletion_file.path, lambda: FileStoreTable.open(path).to_arrow())


def test_flipped_byte_in_an_index_file(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, _with_index_files)
    entry = next(e for e in FileStoreTable.open(path).plan().data_files if e.file_index_path is not None)
    index = entry.file_index_path
    _flip(index, index.stat().st_size - 3)  # in the last payload: only a rebuild can tell
    _fails_naming(index, lambda: verify(FileStoreTable.open(path), rebuild=True))
    _flip(index, 3)  # in the magic
    _fails_naming(index, lambda: verify(FileStoreTable.open(path)))


def test_truncated_hash_index(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, _with_hash_indexes)
    index = next(i for i in FileStoreTable.open(path).plan().index_files if i.index_type == "HASH" and i.row_count)
    index.path.write_bytes(index.path.read_bytes()[:-2])
    _fails_naming(index.path, lambda: verify(FileStoreTable.open(path)))


def test_truncated_manifest(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, lambda t: True)
    table = FileStoreTable.open(path)
    metas = read_manifest_list(table.scan.paths.manifest(table.snapshot.base_manifest_list))
    metas += read_manifest_list(table.scan.paths.manifest(table.snapshot.delta_manifest_list))
    manifest = table.scan.paths.manifest(max(metas, key=lambda m: m.file_size).file_name)
    manifest.write_bytes(manifest.read_bytes()[: manifest.stat().st_size // 2])
    _fails_naming(manifest, lambda: FileStoreTable.open(path).plan())
    _fails_naming(manifest, lambda: verify(FileStoreTable.open(path)))


def test_snapshot_hints(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, lambda t: t.snapshot.id > 2)
    latest = FileStoreTable.open(path).snapshot.id
    (path / "snapshot" / "LATEST").write_text("1")  # stale: snapshot-2 exists, so the directory is listed
    assert FileStoreTable.open(path).snapshot.id == latest
    (path / "snapshot" / "EARLIEST").unlink(missing_ok=True)
    assert FileStoreTable.open(path).snapshot.id == latest
    (path / "snapshot" / f"snapshot-{latest}").unlink()
    (path / "snapshot" / "LATEST").write_text(str(latest))  # trusted (no snapshot after it), but gone
    _fails_naming(path / "snapshot" / f"snapshot-{latest}", lambda: FileStoreTable.open(path))
    _fails_naming(path / "snapshot" / f"snapshot-{latest + 5}", lambda: FileStoreTable.open(path, latest + 5))


def test_deletion_vector_range_past_the_end(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, _with_deletion_vectors)
    table = FileStoreTable.open(path)
    manifest = table.scan.paths.manifest(table.snapshot.index_manifest)
    with open(manifest, "rb") as f:
        reader = fastavro.reader(f)
        schema, codec, records = reader.writer_schema, reader.codec, list(reader)
    target = None
    for r in records:
        for d in r.get("_DELETIONS_VECTORS_RANGES") or ():
            if target is None:
                d["f1"] = r["_FILE_SIZE"] + 7
                target = r["_FILE_NAME"]
    with open(manifest, "wb") as f:
        fastavro.writer(f, schema, records, codec=codec)
    error = _fails_naming(path / "index" / target, lambda: FileStoreTable.open(path).to_arrow())
    assert "within the file's" in error.expected
    _fails_naming(path / "index" / target, lambda: verify(FileStoreTable.open(path)))


def test_missing_data_file(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, lambda t: True)
    entry = FileStoreTable.open(path).plan().data_files[0]
    entry.path.unlink()
    _fails_naming(entry.path, lambda: FileStoreTable.open(path).to_arrow())
    _fails_naming(entry.path, lambda: verify(FileStoreTable.open(path)))


def test_unsupported_merge_engine_is_refused(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, lambda t: bool(t.schema.primary_keys))
    schema = max((path / "schema").glob("schema-*"), key=lambda p: int(p.name.split("-")[1]))
    doc = json.loads(schema.read_text())
    doc["options"]["merge-engine"] = "aggregation"  # the table may name another engine already
    schema.write_text(json.dumps(doc, indent=2))
    with pytest.raises(IndexFormatError, match="merge-engine=aggregation is not supported"):
        FileStoreTable.open(path)


def test_cli_reports_one_line(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, _with_deletion_vectors)
    entry = next(e for e in FileStoreTable.open(path).plan().data_files if e.deletion_file and e.deletion_file.cardinality)
    _flip(entry.deletion_file.path, entry.deletion_file.offset + 10)
    for action in ("read", "verify"):
        err = io.StringIO()
        with redirect_stderr(err):
            status = main(["paimon", action, str(path)])
        assert status == 2
        assert err.getvalue().startswith(f"indexbridge: error: {entry.deletion_file.path}: offset "), err.getvalue()
        assert "Traceback" not in err.getvalue() and err.getvalue().count("\n") == 1


def test_hash_index_missing_a_key(paimon_suite, tmp_path):
    path = _copy(paimon_suite, tmp_path, _with_hash_indexes)
    index = next(i for i in FileStoreTable.open(path).plan().index_files if i.index_type == "HASH" and i.row_count)
    data = bytearray(index.path.read_bytes())
    data[0:4] = (0x7FFFFFFF).to_bytes(4, "big")  # another key hash in place of the first, the size unchanged
    index.path.write_bytes(bytes(data))
    verify(FileStoreTable.open(path))  # a well-formed set of hashes
    error = _fails_naming(index.path, lambda: verify(FileStoreTable.open(path), rebuild=True))
    assert "is missing" in error.expected
