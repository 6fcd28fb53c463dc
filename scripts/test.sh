#!/usr/bin/env bash
# The whole test suite from nothing: bootstrap, Scala tests, then pytest (unit, vectors,
# cross-language, Spark integration). Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
bin/sbt test
.venv/bin/python -m pytest -q "$@"
