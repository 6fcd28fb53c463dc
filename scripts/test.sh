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
if [ "$#" -gt 0 ]; then
  lanes=(pytest)
  pytest_args=("$@")
else
  lanes=(pytest-tests pytest-integration)
fi
echo "running the Scala tests (target/sbt-test.log) and ${lanes[*]} (target/<lane>.log) side by side..."
bin/sbt test >target/sbt-test.log 2>&1 &
pids=($!)
for lane in "${lanes[@]}"; do
  case "$lane" in
    pytest) args=("${pytest_args[@]}") ;;
    pytest-tests) args=(tests) ;;
    pytest-integration) args=(integration) ;;
  esac
  .venv/bin/python -m pytest -q --durations=15 "${args[@]}" >"target/$lane.log" 2>&1 &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null || true' EXIT
set +e
statuses=()
for pid in "${pids[@]}"; do
  wait "$pid"
  statuses+=($?)
done
set -e
trap - EXIT
cat target/sbt-test.log
echo "sbt test: exit ${statuses[0]}"
failed=$((statuses[0] != 0))
for i in "${!lanes[@]}"; do
  echo
  cat "target/${lanes[$i]}.log"
  echo "${lanes[$i]}: exit ${statuses[$((i + 1))]}"
  failed=$((failed || statuses[$((i + 1))] != 0))
done
[ "$failed" -eq 0 ]
