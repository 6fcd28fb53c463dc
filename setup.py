"""Compiles indexbridge's hot modules with Cython; pyproject.toml holds everything else.

The modules listed in COMPILED stay plain Python (one source: there is no .pyx twin to keep in
step). Cython compiles each, as it stands, into an extension module that Python imports in place
of the .py file beside it: the same code, with the same semantics, run without the
interpreter's per-step dispatch. A module may have a .pxd beside it (Cython's "augmenting"
declarations, which plain Python never reads) that gives its hottest function C integer types
where the Python values stay in 64 bits: bloom.py's probe and fasthash.py's wang64 (a
per-literal bloom-filter query from 1.2 to 0.2 us), roaring.py's check of a bitmap's offsets
(a 16-container bitmap read in 7.6 us, not 9.5), postings.py's bulk decoder over typed views of
the segment's bytes (`bench zap`'s per-hit iteration 1.23 -> 0.55 s; the same loops run in plain
Python take 2.2 s, where the regular-expression split they replaced took 1.3).
Issue 14's Python rows (zap build and analysis, term lookup, postings iteration, DV deserialize,
bloom queries) were measured with and without this; the notes on the issue have the figures.

Where no C compiler or no Cython is at hand, or with ``INDEXBRIDGE_PURE_PYTHON=1`` in the
environment, the package installs and runs as plain Python (the same bytes, slower; the
bootstrap's editable install is made so, then compiled in place by ``setup.py build_ext
--inplace``): ``indexbridge.compiled()`` says which modules are compiled, and
``indexbridge bench`` prints it beside its rows. scripts/test.sh runs one test lane over the
sources without the extension modules, so that both forms are held to the references.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

# Module names, each with its source at python/<dotted name as a path>.py; tests/test_compiled.py
# holds indexbridge.compiled() of the checkout to this list. Each was measured compiled and not:
# indexbridge.bytes, .zap.analysis and .paimon.dv ran as fast either way (DV deserialize, zap
# build and analysis within 2%), so they stay plain; .paimon.fileindex.bitmap gained 7% (its
# equality queries), not kept
COMPILED = [
    "indexbridge.zap.analyzers",
    "indexbridge.zap.fst",
    "indexbridge.zap.postings",
    "indexbridge.zap.segment",
    "indexbridge.paimon.fileindex.bloom",
    "indexbridge.paimon.fileindex.fasthash",
    "indexbridge.roaring",
]


class OptionalBuildExt(build_ext):
    """build_ext that compiles the modules side by side, and leaves a module as plain Python when
    its C cannot be compiled."""

    def finalize_options(self):
        super().finalize_options()
        self.parallel = self.parallel or os.cpu_count() or 1

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001 - distutils raises CompileError, LinkError, OSError alike
            print(f"indexbridge: {ext.name} stays plain Python (its C did not compile: {e})", file=sys.stderr)


def _extensions() -> list:
    if os.environ.get("INDEXBRIDGE_PURE_PYTHON") == "1":
        return []
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("indexbridge: Cython is not installed; the package stays plain Python", file=sys.stderr)
        return []
    from setuptools import Extension

    # After the interpreter's own CFLAGS (-g -O3): without debug information, and at -O2, the C
    # compiles in 2/5 of the time (postings: 41 -> 18 s), and `bench zap` runs as fast (at -O1,
    # in half that again, its build ran 3% slower)
    flags = ["-g0", "-O2"]
    sources = [os.path.join("python", *name.split(".")) + ".py" for name in COMPILED]
    build_dir = os.path.join("build", "cython")  # the generated C, out of the source tree
    # Cython writes a module's C again when its source changed; this file's directives and flags
    # changing must do so too
    generated = [os.path.join(build_dir, source[: -len(".py")] + ".c") for source in sources]
    stale = any(not os.path.exists(c) or os.path.getmtime(c) < os.path.getmtime(__file__) for c in generated)
    return cythonize(
        [Extension(name, [source], extra_compile_args=flags) for name, source in zip(COMPILED, sources)],
        language_level=3,
        nthreads=os.cpu_count() or 1,
        quiet=True,
        force=stale,
        build_dir=build_dir,
        compiler_directives={
            # annotations stay documentation, as in Python: Cython would type arguments by them,
            # and an `int` argument so typed took 2.5 and added 1 to it as 3
            "annotation_typing": False,
            # functions keep their signatures and docstrings for inspect and help()
            "binding": True,
            "embedsignature": True,
        },
    )


setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
