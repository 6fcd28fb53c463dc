#!/usr/bin/env bash
# The whole test suite from nothing: bootstrap, then the Scala tests (sbt) and pytest (unit,
# vectors, cross-language, Spark integration) side by side — each mostly keeps one core busy.
# Both logs are printed when both are done, pytest's last, so its summary closes the run.
# Extra arguments go to pytest.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
mkdir -p target
echo "running the Scala tests (target/sbt-test.log) and pytest (target/pytest.log) side by side..."
bin/sbt test >target/sbt-test.log 2>&1 &
sbt_pid=$!
trap 'kill "$sbt_pid" 2>/dev/null || true' EXIT
set +e
.venv/bin/python -m pytest -q --durations=15 "$@" >target/pytest.log 2>&1
pytest_status=$?
wait "$sbt_pid"
sbt_status=$?
set -e
trap - EXIT
cat target/sbt-test.log
echo "sbt test: exit $sbt_status"
echo
cat target/pytest.log
[ "$sbt_status" -eq 0 ] && [ "$pytest_status" -eq 0 ]
