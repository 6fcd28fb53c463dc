"""`indexbridge inspect` on Paimon file indexes: containers and raw payloads, --type, --query,
both engines giving the same JSON, and the recorded Paimon answers reproduced through the
condition language."""

from __future__ import annotations

import datetime
import json
import math
import struct
from pathlib import Path

import pytest

from indexbridge.cli import main
from indexbridge.cli.inspect import InspectOptions, _describe_jvm, describe
from indexbridge.conformance.paimon import typed_value

FILE_INDEX_FORMATS = ("bloom", "bitmap", "bsi", "fileindex")
CONTAINER_QUERY = "id IN (1, 5) OR k = 3 OR v = 'b' OR `名前` <> 'x' OR NOT (big BETWEEN -5 AND 5)"


def _cases(vectors_dir: Path) -> list[tuple[dict, dict]]:
    manifest = json.loads((vectors_dir / "paimon" / "manifest.json").read_text())
    return [(c, json.loads((vectors_dir / "paimon" / c["json"]).read_text()))
            for c in manifest["cases"] if c["format"] in FILE_INDEX_FORMATS]  # fmt: skip


def _options(entry: dict, case: dict) -> tuple[str | None, InspectOptions]:
    if entry["format"] == "fileindex":
        return None, InspectOptions({}, CONTAINER_QUERY)
    values = [v for v in case["values"] if v is not None and _expressible(case["type"], [v])]
    condition = f"x IN ({_sql_literal(case['type'], values[0])}, {_sql_literal(case['type'], values[-1])})" if values else "x IS NULL"
    return entry["format"], InspectOptions({"": case["type"]["sql"]}, condition)


def test_engines_print_the_same_json_for_every_file_index_vector(vectors_dir: Path) -> None:
    cases = _cases(vectors_dir)
    assert len(cases) == 77
    for entry, case in cases:
        path = str(vectors_dir / "paimon" / entry["bin"])
        fmt, options = _options(entry, case)
        python = describe(path, fmt, options)
        assert _describe_jvm(path, fmt, options) == python, entry["bin"]
        assert python["query"]["result"] in ("skip", "remain", "bitmap")


def test_container_summary_and_query(vectors_dir: Path, capsys) -> None:
    path = vectors_dir / "paimon" / "fileindex" / "fileindex_multi_column.bin"
    case = json.loads(path.with_suffix(".json").read_text())
    assert main(["inspect", "--json", str(path), "--type", "ts=TIMESTAMP(6)", "--query", "id = 5 AND ts > TIMESTAMP '2000-01-01 00:00:00'"]) == 0
    summary = json.loads(capsys.readouterr().out)
    columns = {c["column"]: c for c in summary["columns"]}
    # bitmap key widths tell INT / BIGINT / STRING / a one-byte key; a BSI alone tells BIGINT; a bloom filter nothing
    assert {c: (columns[c]["type"], columns[c]["type_source"]) for c in columns} == {
        "id": ("INT", "inferred"), "big": ("BIGINT", "inferred"), "name": ("STRING", "inferred"),
        "flag": ("TINYINT", "inferred"), "price": ("BIGINT", "inferred"), "ts": ("TIMESTAMP(6)", "given"),
        "score": (None, None),
    }  # fmt: skip
    entries = [(c["column"], [(i["index_type"], i["start"], i["length"]) for i in c["indexes"]]) for c in summary["columns"]]
    assert entries == [(c["column"], [(i["index_type"], i["start"], i["length"]) for i in c["indexes"]])
                       for c in case["header_entries_in_file_order"]]  # fmt: skip
    ids = [row[0] for row in case["rows"]]
    bsi = next(i for i in columns["id"]["indexes"] if i["index_type"] == "bsi")
    assert (bsi["min"], bsi["max"], bsi["non_null_rows"]) == (min(i for i in ids if i is not None), max(i for i in ids if i is not None), sum(i is not None for i in ids))
    bitmap = next(i for i in columns["id"]["indexes"] if i["index_type"] == "bitmap")
    assert (bitmap["distinct_values"], bitmap["null_rows"]) == (len({i for i in ids if i is not None}), ids.count(None))
    bloom = next(i for i in columns["id"]["indexes"] if i["index_type"] == "bloom-filter")
    assert 0 < bloom["bits_set"] < bloom["num_bits"] and bloom["fill_ratio"] == bloom["bits_set"] / bloom["num_bits"]
    query = summary["query"]
    assert query["result"] == "bitmap" and query["rows"]["cardinality"] == ids.count(5)


# ---------------------------------------------------------------------------------------------
# Paimon's recorded answers, asked as SQL conditions


def _sql_literal(type_json: dict, value: object) -> str:
    root = type_json["root"]
    v = typed_value(type_json, value)
    if v is None:
        return "NULL"
    if root in ("FLOAT", "DOUBLE"):
        if math.isnan(v) or math.isinf(v):
            return f"CAST('{'NaN' if math.isnan(v) else '-Infinity' if v < 0 else 'Infinity'}' AS {root})"
        return f"CAST('{v!r}' AS FLOAT)" if root == "FLOAT" else f"{v!r}D"
    if root == "DECIMAL":
        return f"{v}BD"
    if root == "DATE":
        return f"DATE '{datetime.date.fromordinal(719163 + v).isoformat()}'"
    if root == "TIME_WITHOUT_TIME_ZONE":
        return f"'{v // 3_600_000:02d}:{v // 60_000 % 60:02d}:{v // 1000 % 60:02d}.{v % 1000:03d}'"
    if root.startswith("TIMESTAMP"):
        seconds, millis = divmod(v.millisecond, 1000)
        wall = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=seconds)
        return f"TIMESTAMP '{wall:%Y-%m-%d %H:%M:%S}.{millis * 1_000_000 + v.nano_of_millisecond:09d}'"
    if root in ("CHAR", "VARCHAR"):
        return "'" + v.replace("'", "''") + "'"
    if root in ("BINARY", "VARBINARY"):
        return f"X'{v.hex()}'"
    if root == "BOOLEAN":
        return "TRUE" if v else "FALSE"
    return str(v)


def _expressible(type_json: dict, values: list) -> bool:
    """Whether SQL can write the values (a TIME is a time of day)."""
    return type_json["root"] != "TIME_WITHOUT_TIME_ZONE" or all(0 <= v < 86_400_000 for v in values)


_OPS = {"equal": "=", "not_equal": "<>", "less_than": "<", "less_or_equal": "<=", "greater_than": ">", "greater_or_equal": ">="}


def _condition(op: str, literals: list[str]) -> str:
    if op in _OPS:
        return f"x {_OPS[op]} {literals[0]}"
    if op in ("in", "not_in"):
        return f"x {'IN' if op == 'in' else 'NOT IN'} ({', '.join(literals)})"
    if op == "between":
        return f"x BETWEEN {literals[0]} AND {literals[1]}"
    return f"x {op.upper().replace('_', ' ')}"


def test_raw_payload_queries_answer_as_paimon_recorded(vectors_dir: Path) -> None:
    asked = 0
    for entry, case in _cases(vectors_dir):
        if entry["format"] == "fileindex":
            continue
        path = str(vectors_dir / "paimon" / entry["bin"])
        for q in case["queries"]:
            if any(v is None for v in q.get("literals", [])):
                continue  # SQL: a comparison with NULL is never true, the condition is UNDECIDED
            if not _expressible(case["type"], q.get("literals", [])):
                continue
            text = _condition(q["op"], [_sql_literal(case["type"], v) for v in q.get("literals", [])])
            got = describe(path, entry["format"], InspectOptions({"": case["type"]["sql"]}, text))["query"]
            what = f"{entry['bin']}: {text}"
            assert (got["result"], got["remain"]) == (q["result_kind"], q["remain"]), what
            if "rows" in q and got["result"] == "bitmap":
                assert got["rows"]["cardinality"] == q["rows"]["cardinality"], what
                assert got["rows"]["ranges"] == q["rows"]["ranges"][:16], what
            asked += 1
    assert asked > 300


# ---------------------------------------------------------------------------------------------
# Errors: one line on stderr, exit status 2


@pytest.mark.parametrize("engine", ["python", "jvm", "jvm-under-pyspark", "jvm-after-spark-stop"])
def test_malformed_payloads_and_bad_arguments(vectors_dir: Path, tmp_path: Path, engine: str, capsys, monkeypatch) -> None:
    if engine == "jvm-under-pyspark":  # as with a SparkContext in the process: Java errors arrive as PySpark's
        import py4j.java_gateway
        import py4j.protocol
        from pyspark import SparkContext
        from pyspark.errors.exceptions.captured import capture_sql_exception

        from indexbridge.jvm import _gateway

        monkeypatch.setattr(SparkContext, "_gateway", _gateway())
        monkeypatch.setattr(SparkContext, "_jvm", _gateway().jvm)
        monkeypatch.setattr(py4j.java_gateway, "get_return_value", capture_sql_exception(py4j.protocol.get_return_value))
        engine = "jvm"
    if engine == "jvm-after-spark-stop":  # PySpark's handler stays installed after spark.stop(), with no JVM to ask
        import py4j.java_gateway
        import py4j.protocol
        from pyspark import SparkContext
        from pyspark.errors.exceptions.captured import capture_sql_exception

        assert SparkContext._jvm is None
        monkeypatch.setattr(py4j.java_gateway, "get_return_value", capture_sql_exception(py4j.protocol.get_return_value))
        engine = "jvm"
    container = (vectors_dir / "paimon" / "fileindex" / "fileindex_small_embedded.bin").read_bytes()
    truncated = tmp_path / "truncated.index"
    truncated.write_bytes(container[:60])
    bitmap = tmp_path / "bitmap.bin"
    bitmap.write_bytes((vectors_dir / "paimon" / "bitmap" / "bitmap_v2_int.bin").read_bytes()[:7])
    assert main(["inspect", "--engine", engine, str(truncated)]) == 2
    assert main(["inspect", "--engine", engine, "--format", "bitmap", "--type", "INT", str(bitmap)]) == 2
    assert main(["inspect", "--engine", engine, "--format", "bsi", str(bitmap)]) == 2
    assert main(["inspect", "--engine", engine, "--query", "k = (", str(truncated)]) == 2
    good = vectors_dir / "paimon" / "fileindex" / "fileindex_small_embedded.bin"
    assert main(["inspect", "--engine", engine, "--query", "k = DATE '2024-01-01'", str(good)]) == 2
    out = capsys.readouterr()
    errors = out.err.splitlines()
    assert len(errors) == 5 and out.out == "", out.err
    assert errors[0].startswith(f"indexbridge: error: {truncated}: offset ")
    assert errors[1].startswith(f"indexbridge: error: {bitmap}: offset ")
    assert errors[2] == f"indexbridge: error: {bitmap}: a raw bsi payload needs --type TYPE (its column's data type)"
    assert errors[3] == "indexbridge: error: --query: offset 5: a condition in Spark SQL syntax"  # Spark stops at the end
    assert errors[4].startswith(f"indexbridge: error: {good}: --query: ") and errors[4].endswith("(pass --type COLUMN=TYPE)")


def test_text_output(vectors_dir: Path, capsys) -> None:
    path = vectors_dir / "paimon" / "fileindex" / "fileindex_small_embedded.bin"
    assert main(["inspect", str(path), "--query", "v = 'a' OR k < 0"]) == 0
    text = capsys.readouterr().out
    assert f"{path}: file-index\n" in text and "    k: BIGINT (inferred)\n" in text
    assert "      bsi @265+192: row_count=10, non_null_rows=10, min=-3, max=6" in text
    assert "  query: v = 'a' OR k < 0\n    " in text


def test_float_literal_bits_survive_the_text(vectors_dir: Path) -> None:
    # CAST('<repr of a float32>' AS FLOAT) must land on the same float: the renderer above relies on it
    for bits in (0x3DCCCCCD, 0x00000001, 0x7F7FFFFF, 0x80800000):
        f = struct.unpack(">f", bits.to_bytes(4, "big"))[0]
        from indexbridge.paimon.fileindex.condition import parse

        assert struct.pack(">f", parse(f"x = CAST('{f!r}' AS FLOAT)").literals[0]) == bits.to_bytes(4, "big")
