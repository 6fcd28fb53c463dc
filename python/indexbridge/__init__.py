"""indexbridge: Apache Paimon index files and bleve zap segments, byte for byte, from Spark and Python."""

from pathlib import Path

from indexbridge.errors import IndexFormatError

__version__ = "0.1.0"
__all__ = ["IndexFormatError", "__version__", "compiled"]


def compiled() -> list[str]:
    """The modules of this installation that Cython compiled (setup.py's COMPILED, where a C
    compiler was at hand), by name; the others run as plain Python, with the same results."""
    from importlib.machinery import EXTENSION_SUFFIXES

    root = Path(__file__).parent
    names = set()
    for path in root.rglob("*"):
        for suffix in EXTENSION_SUFFIXES:  # what the import system looks for: module name + suffix
            stem = path.name[: -len(suffix)]
            if path.name.endswith(suffix) and stem.isidentifier():
                names.add(".".join(("indexbridge", *path.relative_to(root).parent.parts, stem)))
    return sorted(names)
