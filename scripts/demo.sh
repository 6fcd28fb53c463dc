#!/usr/bin/env bash
# The main job: the demo Spark job on an embedded local Spark (see README).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh >/dev/null
exec .venv/bin/indexbridge demo "$@"
