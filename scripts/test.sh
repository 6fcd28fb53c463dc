#!/usr/bin/env bash
# The whole test suite from nothing: bootstrap, then three lanes side by side on the machine's
# cores — the Scala tests (sbt), pytest over tests/ (unit, vectors, cross-language) and pytest over
# integration/ (Spark, the demo, packaging). Each lane mostly keeps one core busy; one pytest run
# over both directories left a core idle once sbt was done (16 min against 11 for the lanes).
# The logs are printed when all are done, integration's last. Extra arguments go to both pytest runs.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
mkdir -p target
echo "running the Scala tests (target/sbt-test.log), pytest tests/ (target/pytest-tests.log) and"
echo "pytest integration/ (target/pytest-integration.log) side by side..."
bin/sbt test >target/sbt-test.log 2>&1 &
sbt_pid=$!
.venv/bin/python -m pytest -q --durations=15 tests "$@" >target/pytest-tests.log 2>&1 &
tests_pid=$!
trap 'kill "$sbt_pid" "$tests_pid" 2>/dev/null || true' EXIT
set +e
.venv/bin/python -m pytest -q --durations=15 integration "$@" >target/pytest-integration.log 2>&1
integration_status=$?
wait "$tests_pid"
tests_status=$?
wait "$sbt_pid"
sbt_status=$?
set -e
trap - EXIT
cat target/sbt-test.log
echo "sbt test: exit $sbt_status"
echo
cat target/pytest-tests.log
echo "pytest tests/: exit $tests_status"
echo
cat target/pytest-integration.log
echo "pytest integration/: exit $integration_status"
[ "$sbt_status" -eq 0 ] && [ "$tests_status" -eq 0 ] && [ "$integration_status" -eq 0 ]
