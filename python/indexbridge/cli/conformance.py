"""`indexbridge conformance DIR`: every case × engine of a vector directory (DESIGN.md).

A case passes when the engine decodes the reference binary reporting everything the case's
JSON records, and encodes the JSON's input to the reference bytes. A case the engine cannot
handle counts as failed, never as skipped. Ends with the line `N passed, M failed`.
"""

from __future__ import annotations

import json
from pathlib import Path

from indexbridge.cli.progress import progress
from indexbridge.conformance import fileindex, paimon, zap

PYTHON_CHECKERS = {**paimon.CHECKERS, **fileindex.CHECKERS, **zap.CHECKERS}


def manifest_cases(manifest: dict) -> list[dict]:
    """The manifest's cases, each with its ``format``: Paimon's name it per case, zap's once at the top."""
    top = manifest.get("format")
    return [c if "format" in c else {**c, "format": top} for c in manifest["cases"]]


def _python_results(vectors_dir: Path, cases: list[dict], out: Path | None) -> list[tuple[dict, list[str]]]:
    results = []
    for entry in progress(cases, "conformance [python]", unit="case"):
        checker = PYTHON_CHECKERS.get(entry["format"])
        if checker is None:
            failures = [f"format {entry['format']} not supported by engine python"]
        else:
            try:
                failures = checker(vectors_dir, entry, out)
            except Exception as error:  # a crash is a failed case, reported with its cause
                failures = [f"crashed: {type(error).__name__}: {error}"]
        results.append((entry, failures))
    return results


def _jvm_results(vectors_dir: Path, only: list[str], out: Path | None) -> list[tuple[dict, list[str]]]:
    from indexbridge.jvm import jvm

    for _ in progress([None], "conformance [jvm]", unit="run"):  # one call into the JVM
        report = jvm().io.indexbridge.conformance.Conformance.run(str(vectors_dir), ",".join(only), str(out or ""))
    return [({"format": r["format"], "case": r["case"]}, r["failures"]) for r in json.loads(report)]


def run(directory: str, engine: str, only: list[str], out: str | None) -> int:
    vectors_dir = Path(directory).resolve()
    manifest = json.loads((vectors_dir / "manifest.json").read_text())
    cases = [c for c in manifest_cases(manifest) if not only or c["format"] in only]
    passed = failed = 0
    for name in ["python", "jvm"] if engine == "all" else [engine]:
        engine_out = Path(out).resolve() / name if out else None
        if name == "python":
            results = _python_results(vectors_dir, cases, engine_out)
        else:
            results = _jvm_results(vectors_dir, only, engine_out)
        for entry, failures in results:
            if failures:
                failed += 1
                more = f" (+{len(failures) - 1} more)" if len(failures) > 1 else ""
                print(f"FAILED [{name}] {entry['format']}/{entry['case']}: {failures[0]}{more}")
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1
