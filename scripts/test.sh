#!/usr/bin/env bash
# The whole test suite from nothing: bootstrap, then five lanes side by side on the machine's
# cores — the Scala tests (sbt), pytest over tests/ (unit, vectors, cross-language), pytest over
# integration/'s tests sharing one Spark session, the whole jobs (the demo, local-cluster,
# packaging, two benchmarks' smoke runs), and seven test files of tests/ (zap segments, columns
# and conformance, the mutation tests, the fileindex bench's smoke run) over the package as plain
# Python, without its compiled modules. The logs are printed when all are done, the whole-job tests' last. Extra arguments
# (say, a test file or -k EXPR) make one pytest run of their own beside sbt instead.
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
# the PySpark drivers' class-data archive (spark_cds.py), made beside sbt's start; without it the
# tests run as well, only slower
jar=python/indexbridge/jars/indexbridge.jar archive=target/cds/pyspark-driver.jsa
if [ ! -f "$archive" ] || [ "$jar" -nt "$archive" ]; then
  .venv/bin/python spark_cds.py >target/spark-cds.log 2>&1 ||
    { tail -20 target/spark-cds.log; echo "no class-data archive (target/spark-cds.log): the Spark drivers start without it"; }
fi
if [ "$#" -gt 0 ]; then
  lane pytest .venv/bin/python -m pytest -q --durations=15 "$@"
else
  # whole jobs in processes of their own (the demo, local-cluster, packaging, the smoke runs of
  # two benchmarks) make a lane apart from the tests sharing a session's Spark; six files of
  # tests/ that need no Spark (zap segments, columns and conformance, the mutation tests; about
  # 200 CPU-s on one thread) a lane of their own from the start, done early: behind the whole
  # jobs, two of them left that lane running alone on one core for its last 60-110 s (the others
  # ended at 1019-1065 s, it at 1130); in tests/'s lane, the other four made that lane end last.
  # The fileindex bench's smoke run went from the jobs lane, which ended last once the wheel it
  # builds compiled (787 s against 592), to the plain lane, where its bytes compared with
  # Paimon's hold the plain bloom filters too
  jobs=(integration/test_demo.py integration/test_local_cluster.py integration/test_packaging.py tests/test_bench_zap.py tests/test_bench_bleve.py)
  pure=(tests/test_zap_segment.py tests/test_zap_mutation.py tests/test_zap_columns.py tests/test_zap_conformance.py
    tests/test_mutations_paimon_fileindex.py tests/test_mutations_paimon_table.py tests/test_bench_fileindex.py)
  ignored=("${jobs[@]/#/--ignore=}" "${pure[@]/#/--ignore=}")
  lane pytest-tests .venv/bin/python -m pytest -q --durations=15 tests "${ignored[@]}"
  lane pytest-integration .venv/bin/python -m pytest -q --durations=15 integration "${ignored[@]}"
  # that lane runs over the package as plain Python: a copy of its sources without the modules
  # Cython compiled, found first on the path, so that both forms are held to the references
  rm -rf target/plain && mkdir -p target/plain && cp -r python/indexbridge target/plain/
  find target/plain -name '*.so' -delete
  PYTHONPATH=target/plain .venv/bin/python -c 'import indexbridge, sys; sys.exit(indexbridge.compiled() or not indexbridge.__file__.startswith(sys.argv[1]))' "$root/target/plain" ||
    { echo "target/plain is not a plain-Python indexbridge"; exit 1; }
  lane pytest-pure env PYTHONPATH="$root/target/plain" .venv/bin/python -m pytest -q --durations=5 "${pure[@]}"
  lane pytest-jobs .venv/bin/python -m pytest -q --durations=15 "${jobs[@]}"
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
