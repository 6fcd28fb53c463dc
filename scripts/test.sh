#!/usr/bin/env bash
# The whole test suite from nothing: bootstrap, then the Scala tests (sbt), pytest's unit, vector
# and cross-language tests (tests/) and its Spark integration tests (integration/), the three side
# by side (the machine has 2 cores; sbt finishes first). The logs are printed when all are done,
# then one closing line that counts every test. Extra arguments run pytest on them alone instead
# of the two pytest halves.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
mkdir -p target
pytest=(.venv/bin/python -m pytest -q --durations=10)
echo "running the Scala tests (target/sbt-test.log) and pytest (target/pytest-*.log) side by side..."
bin/sbt test >target/sbt-test.log 2>&1 &
sbt_pid=$!
pids="$sbt_pid"
if [ "$#" -eq 0 ]; then
  "${pytest[@]}" integration >target/pytest-integration.log 2>&1 &
  integration_pid=$!
  pids="$pids $integration_pid"
  logs=(target/pytest-tests.log target/pytest-integration.log)
  set -- tests
else
  integration_pid=
  logs=(target/pytest-tests.log)
fi
trap 'kill $pids 2>/dev/null || true' EXIT
set +e
"${pytest[@]}" "$@" >target/pytest-tests.log 2>&1
tests_status=$?
integration_status=0
[ -z "$integration_pid" ] || { wait "$integration_pid"; integration_status=$?; }
wait "$sbt_pid"
sbt_status=$?
set -e
trap - EXIT
cat target/sbt-test.log
echo "sbt test: exit $sbt_status"
for log in "${logs[@]}"; do
  echo
  echo "== $log"
  cat "$log"
done
# one closing line over all three runs: sbt's "Tests: succeeded N, failed M" and pytest's summaries
passed=0 failed=0
read -r p f < <(sed -n 's/.*Tests: succeeded \([0-9]*\), failed \([0-9]*\).*/\1 \2/p' target/sbt-test.log | tail -n 1; echo)
passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0}))
for log in "${logs[@]}"; do
  summary=$(tail -n 1 "$log")
  p=$(grep -o '[0-9]* passed' <<<"$summary" | grep -o '[0-9]*' || true)
  f=$(grep -o '[0-9]* failed' <<<"$summary" | grep -o '[0-9]*' || true)
  e=$(grep -o '[0-9]* error' <<<"$summary" | grep -o '[0-9]*' || true)
  passed=$((passed + ${p:-0})) failed=$((failed + ${f:-0} + ${e:-0}))
done
echo
echo "all: $passed passed, $failed failed"
[ "$sbt_status" -eq 0 ] && [ "$tests_status" -eq 0 ] && [ "$integration_status" -eq 0 ]
