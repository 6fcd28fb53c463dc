#!/usr/bin/env bash
# Sets up everything from nothing, idempotently:
#   .venv/ with the Python package (editable, its hot modules compiled by Cython in place) and its
#   dependencies, the sbt launcher in .tools/
#   (from Maven Central, through Maven), and the Scala jar built by sbt and placed inside the
#   Python package (python/indexbridge/jars/indexbridge.jar), so that a pip-installed package
#   carries its JVM half. The Python and JVM halves run side by side (61 s from nothing against
#   85 s one after the other).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"

# The Python half (venv, pip: mostly waiting on downloads) runs beside the JVM half (sbt package
# keeps a core busy for most of a minute from nothing); the script waits for it at the end.
python_setup() {
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
  fi
  if ! .venv/bin/python -c 'import indexbridge, pyspark, pyroaring, pyarrow, pytest, fastavro, backports.zstd, isal, tqdm, build, sqlglot, Cython' 2>/dev/null; then
    # the editable install without its compiled modules: the build below makes them, once
    INDEXBRIDGE_PURE_PYTHON=1 .venv/bin/pip install --quiet -e '.[test]'
  fi
  # Cython's compiled modules (setup.py), beside their sources; only what changed since the last
  # run is compiled again (a compiled module older than its source would shadow the edit)
  .venv/bin/python setup.py --quiet build_ext --inplace
}
python_setup &
python_pid=$!
trap 'wait "$python_pid" 2>/dev/null || true' EXIT # a failing JVM half leaves no pip behind

if [ ! -f .tools/sbt-launch.jar ]; then
  mkdir -p .tools
  mvn --batch-mode --quiet dependency:copy \
    -Dartifact=org.scala-sbt:sbt-launch:1.10.7 -DoutputDirectory="$root/.tools" -Dmdep.stripVersion=true
fi

# Paimon's own classes: the baseline of `indexbridge bench dv` (the sbt tests get theirs from the build)
if [ ! -f "$HOME/.m2/repository/org/apache/paimon/paimon-bundle/1.4.2/paimon-bundle-1.4.2.jar" ]; then
  mvn --batch-mode --quiet dependency:get -Dartifact=org.apache.paimon:paimon-bundle:1.4.2 -Dtransitive=false
fi

# Iceberg's and Delta's own classes: the references of the lakehouse DV tests (integration/test_spark_lakehouse.py
# puts them into its Spark session; the sbt tests get theirs from the build)
for artifact in org.apache.iceberg:iceberg-spark-runtime-4.0_2.13:1.11.0 io.delta:delta-spark_4.0_2.13:4.4.0 io.delta:delta-storage:4.4.0; do
  IFS=: read -r group name version <<<"$artifact"
  if [ ! -f "$HOME/.m2/repository/${group//.//}/$name/$version/$name-$version.jar" ]; then
    mvn --batch-mode --quiet dependency:get -Dartifact="$artifact" -Dtransitive=false
  fi
done

bin/sbt package
mkdir -p python/indexbridge/jars
cp target/scala-2.13/indexbridge_2.13-0.1.0.jar python/indexbridge/jars/indexbridge.jar

# The Go reference of the zap integration test and `indexbridge bench zap` (integration/zapgo:
# bleve v1.0.14 + zap v11.0.14 from the Go module proxy). Not fatal here: the test builds it
# again and fails with Go's error if Go or the proxy is missing.
go_bin="$(command -v go || echo /usr/local/go/bin/go)"
mkdir -p target/zapgo
(cd integration/zapgo && GOFLAGS=-mod=mod CGO_ENABLED=0 "$go_bin" build -o "$root/target/zapgo/zapgo" .) \
  || echo "bootstrap: could not build integration/zapgo (Go toolchain or module proxy missing); test_zap_go.py will fail" >&2
# The bleve references (integration/boltgo: bleve v1.0.14 + bbolt v1.3.5, and its bleve2 module),
# built here so that the test lanes, which run side by side, find them built (their own go build
# of an unchanged source leaves the binary in place)
(cd integration/boltgo && GOFLAGS=-mod=mod CGO_ENABLED=0 "$go_bin" build -o "$root/target/boltgo/boltgo" .) || echo "bootstrap: could not build integration/boltgo (bbolt v1.3.5, the reference of tests/test_bleve_bolt.py, which builds it again)" >&2
(cd integration/boltgo/bleve2 && GOFLAGS=-mod=mod CGO_ENABLED=0 "$go_bin" build -o "$root/target/boltgo/bleve2" .) || echo "bootstrap: could not build integration/boltgo/bleve2 (bleve v2, the reference of tests/test_bleve_index.py, which builds it again)" >&2

trap - EXIT
wait "$python_pid" || { echo "bootstrap: the Python environment (.venv, pip install -e '.[test]') failed" >&2; exit 1; }
