#!/usr/bin/env bash
# The whole test suite from nothing: bootstrap, then three lanes side by side on the machine's
# cores — the Scala tests (sbt), pytest over tests/ (unit, vectors, cross-language) and pytest over
# integration/ (Spark, the demo, packaging). Each lane mostly keeps one core busy; one pytest run
# over both directories left a core idle once sbt was done. The logs are printed when all are
# done, integration's last. Extra arguments (say, a test file or -k EXPR) make one pytest run of
# their own beside sbt instead of the two.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
mkdir -p target
lanes=() pids=()
lane() { # NAME COMMAND...: run COMMAND in the background, its output in target/NAME.log
  local name=$1
  shift
  "$@" >"target/$name.log" 2>&1 &
  lanes+=("$name") pids+=($!)
}
lane sbt-test bin/sbt test
if [ "$#" -gt 0 ]; then
  lane pytest .venv/bin/python -m pytest -q --durations=15 "$@"
else
  lane pytest-tests .venv/bin/python -m pytest -q --durations=15 tests
  lane pytest-integration .venv/bin/python -m pytest -q --durations=15 integration
fi
echo "running ${lanes[*]} side by side (logs in target/<lane>.log)..."
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
failed=0
statuses=()
for pid in "${pids[@]}"; do
  status=0
  wait "$pid" || status=$?
  statuses+=("$status")
  [ "$status" -eq 0 ] || failed=1
done
trap - EXIT
for i in "${!lanes[@]}"; do
  [ "$i" -eq 0 ] || echo
  cat "target/${lanes[$i]}.log"
  echo "${lanes[$i]}: exit ${statuses[$i]}"
done
[ "$failed" -eq 0 ]
