"""Every zap vector case through the Python checker, and the CLI over both manifest shapes."""

from __future__ import annotations

from pathlib import Path

from indexbridge.cli.conformance import manifest_cases
from indexbridge.cli.conformance import run as run_conformance
from indexbridge.conformance.zap import check_case


def test_zap_case(vectors_dir: Path, zap_case: dict, tmp_path: Path) -> None:
    """Decode matches the JSON description; encode (build or merge) matches the bytes; --out writes them."""
    zap_dir = vectors_dir / "zap"
    assert check_case(zap_dir, zap_case, tmp_path) == []
    assert (tmp_path / zap_case["zap"]).read_bytes() == (zap_dir / zap_case["zap"]).read_bytes()


def test_manifest_cases_inherit_the_top_level_format() -> None:
    zap = {"format": "zap", "cases": [{"case": "a"}]}
    paimon = {"cases": [{"case": "b", "format": "dv32"}]}
    assert manifest_cases(zap) == [{"case": "a", "format": "zap"}]
    assert manifest_cases(paimon) == [{"case": "b", "format": "dv32"}]


def test_cli_runs_a_zap_directory(vectors_dir: Path, tmp_path: Path, capsys) -> None:
    """The CLI over a zap-shaped directory (two cases linked from the vectors), with --out."""
    import json

    src = vectors_dir / "zap"
    manifest = json.loads((src / "manifest.json").read_text())
    picked = [c for c in manifest["cases"] if c["case"] in ("one_doc", "merge_basic")]
    cases_dir = tmp_path / "vectors"
    cases_dir.mkdir()
    for case in picked:
        for name in [case["case"], *case["merge_inputs"]]:
            for suffix in (".zap", ".json"):
                (cases_dir / f"{name}{suffix}").symlink_to(src / f"{name}{suffix}")
    (cases_dir / "manifest.json").write_text(json.dumps({**manifest, "cases": picked}))
    out = tmp_path / "out"
    status = run_conformance(str(cases_dir), "python", [], str(out))
    printed = capsys.readouterr().out
    assert printed.strip().splitlines()[-1] == "2 passed, 0 failed", printed
    assert status == 0
    for case in picked:
        assert (out / "python" / case["zap"]).read_bytes() == (src / case["zap"]).read_bytes()
