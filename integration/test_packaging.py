"""The installable artifacts, used as a user would, away from this checkout.

* The wheel (``python -m build --wheel`` of the tracked sources plus the jar that
  scripts/bootstrap.sh builds into python/indexbridge/jars/) carries the jar and the modules
  setup.py compiles with Cython; installed into a fresh virtual environment outside the
  checkout, its ``indexbridge conformance`` passes the Paimon vectors on both engines and a
  small PySpark job runs the ``ib_`` functions.
* The Scala module published locally (``sbt publishLocal`` into a temporary ivy home, so the
  user's ~/.ivy2 is untouched) resolves as ``"io.indexbridge" %% "indexbridge" % "0.1.0"`` in a
  separate minimal sbt project whose Spark job compiles and runs.

Nothing here skips: a missing jar, launcher, Java or registry fails the test with the cause.
The wheel's dependencies are installed from a wheelhouse kept in ~/.cache/indexbridge (filled
from PyPI once, then offline), and both sbt runs reuse the bootstrap's launcher and the caches.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import indexbridge

ROOT = Path(__file__).resolve().parents[1]
JAR = ROOT / "python" / "indexbridge" / "jars" / "indexbridge.jar"
WHEELHOUSE = Path(os.environ.get("INDEXBRIDGE_WHEELHOUSE", Path.home() / ".cache" / "indexbridge" / "wheelhouse"))
VERSION = "0.1.0"


@pytest.fixture(scope="module")
def vectors_dir() -> Path:
    """The golden vectors, where tests/conftest.py looks: INDEXBRIDGE_VECTORS, else ../shared/vectors."""
    root = Path(os.environ.get("INDEXBRIDGE_VECTORS", ROOT.parent / "shared" / "vectors")).resolve()
    if not (root / "paimon" / "manifest.json").is_file():
        pytest.fail(f"golden vectors not found at {root} (set INDEXBRIDGE_VECTORS)", pytrace=False)
    return root


def _run(args: list[str], cwd: Path, timeout: int, env: dict | None = None) -> subprocess.CompletedProcess:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, f"{' '.join(args)} exited {done.returncode}:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    return done


def _clean_env() -> dict:
    """The environment without this checkout's virtual environment or import paths."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if not p.startswith(str(ROOT)))
    return env


def _tracked_copy(to: Path) -> Path:
    """The checkout's tracked files only (no build/, egg-info or target/ leftovers)."""
    tracked = _run(["git", "ls-files", "-z"], ROOT, 60).stdout.split("\0")
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (to / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, to / name)
    return to


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    if not JAR.is_file():
        pytest.fail(f"{JAR} is missing: scripts/bootstrap.sh builds it", pytrace=False)
    src = _tracked_copy(tmp_path_factory.mktemp("src"))
    (src / "python" / "indexbridge" / "jars").mkdir()
    shutil.copy2(JAR, src / "python" / "indexbridge" / "jars" / "indexbridge.jar")
    dist = tmp_path_factory.mktemp("dist")
    # the build backend of this environment (pyproject's test extra), not a fresh one fetched per run
    _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(dist), str(src)], src, 300)
    (built,) = dist.glob("indexbridge-*.whl")
    return built


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("venv") / "venv"
    assert not where.is_relative_to(ROOT)
    _run([sys.executable, "-m", "venv", str(where)], where.parent, 120, _clean_env())
    pip = [str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-compile"]
    offline = subprocess.run([*pip, "--no-index", "--find-links", str(WHEELHOUSE), str(wheel)], capture_output=True, text=True, timeout=600, env=_clean_env())
    if offline.returncode != 0:  # a dependency not yet in the wheelhouse: fill it from PyPI once
        WHEELHOUSE.mkdir(parents=True, exist_ok=True)
        _run([str(where / "bin" / "python"), "-m", "pip", "wheel", "--quiet", "--disable-pip-version-check", "--wheel-dir", str(WHEELHOUSE), str(wheel)], where.parent, 900, _clean_env())
        for ours in WHEELHOUSE.glob("indexbridge-*.whl"):  # pip wheel copies the project's own wheel in too
            ours.unlink()
        _run([*pip, "--no-index", "--find-links", str(WHEELHOUSE), str(wheel)], where.parent, 600, _clean_env())
    return where


def test_the_wheel_carries_the_jar(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        assert "indexbridge/jars/indexbridge.jar" in names
        assert z.read("indexbridge/jars/indexbridge.jar") == JAR.read_bytes()
        assert "indexbridge/zap/stop_en.txt" in names  # the analyzers' tables too


def test_the_installed_wheel_passes_conformance_on_both_engines(venv: Path, vectors_dir: Path, tmp_path: Path) -> None:
    where = _run([str(venv / "bin" / "python"), "-c", "import indexbridge, indexbridge.jvm; print(indexbridge.__file__); print(indexbridge.jvm.jar_path())"], tmp_path, 60, _clean_env())
    module, jar = where.stdout.split()
    assert Path(module).is_relative_to(venv) and Path(jar).is_relative_to(venv), where.stdout
    # the wheel's modules compiled by Cython: those of the checkout (tests/test_compiled.py: every one setup.py lists)
    installed = _run([str(venv / "bin" / "python"), "-c", "import indexbridge; print(*indexbridge.compiled())"], tmp_path, 60, _clean_env())
    assert installed.stdout.split() == indexbridge.compiled() != [], installed.stdout
    done = _run([str(venv / "bin" / "indexbridge"), "conformance", str(vectors_dir / "paimon"), "--engine", "all"], tmp_path, 600, _clean_env())
    last = done.stdout.strip().splitlines()[-1]
    passed, failed = last.replace(",", "").split()[0::2]
    assert last.endswith(" passed, 0 failed") and int(passed) > 0, done.stdout[-2000:]
    assert done.stderr == ""  # piped: no progress bar


PYSPARK_JOB = """
from pyspark.sql import SparkSession, functions as F
from indexbridge.paimon.dv import DeletionVector
from indexbridge.spark.functions import dv_agg, dv_cardinality
from indexbridge.spark.session import configure

spark = configure(SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")).getOrCreate()
rows = spark.range(1000).where(F.col("id") % 7 == 0).select(F.col("id").cast("int").alias("pos"))
dv = rows.agg(dv_agg("pos").alias("dv")).select("dv", dv_cardinality("dv").alias("n")).head()
assert dv.n == 143 and DeletionVector.deserialize(bytes(dv.dv)).cardinality == 143, dv.n
print("pyspark job:", dv.n, "positions")
spark.stop()
"""


def test_a_pyspark_job_runs_on_the_installed_wheel(venv: Path, tmp_path: Path) -> None:
    (tmp_path / "job.py").write_text(PYSPARK_JOB)
    done = _run([str(venv / "bin" / "python"), "job.py"], tmp_path, 300, _clean_env())
    assert "pyspark job: 143 positions" in done.stdout


SCALA_JOB = """
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.functions.col
import io.indexbridge.paimon.DeletionVector
import io.indexbridge.spark.functions.{dvAgg, dvCardinality}

object Job {
  def main(args: Array[String]): Unit = {
    val spark = SparkSession.builder().master("local[1]").config("spark.ui.enabled", "false")
      .config("spark.sql.extensions", "io.indexbridge.spark.IndexBridgeExtensions").getOrCreate()
    val rows = spark.range(1000).where(col("id") % 7 === 0).select(col("id").cast("int").as("pos"))
    val dv = rows.agg(dvAgg(col("pos")).as("dv")).select(col("dv"), dvCardinality(col("dv")).as("n")).head()
    val n = dv.getAs[Long]("n")
    require(n == 143L && DeletionVector.deserialize(dv.getAs[Array[Byte]]("dv")).cardinality == 143L, s"cardinality $n")
    println(s"scala job: $n positions")
    spark.stop()
  }
}
"""


def _sbt(project: Path, ivy_home: Path, *commands: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """bin/sbt (the bootstrap's launcher, its repository list, `local` = the ivy home's) in
    ``project``, with its own ivy home."""
    return _run([str(ROOT / "bin" / "sbt"), *commands], project, timeout, env={**os.environ, "SBT_JAVA_OPTS": f"-Dsbt.ivy.home={ivy_home}"})


def test_the_published_scala_module_builds_and_runs_a_spark_job(tmp_path: Path) -> None:
    ivy_home = tmp_path / "ivy"
    # published from a copy with the bootstrap's compiled classes and zinc analysis (relocatable,
    # so nothing recompiles): `sbt test` may be running in the checkout at the same time
    module = _tracked_copy(tmp_path / "module")
    for built in ("target/scala-2.13/classes", "target/scala-2.13/zinc", "target/streams/compile", "project/target", "project/project"):
        if (ROOT / built).is_dir():
            shutil.copytree(ROOT / built, module / built, symlinks=True)
    # no scaladoc (a minute of CPU for nothing a build needs); jar, sources and pom/ivy are published
    _sbt(module, ivy_home, "set Compile / packageDoc / publishArtifact := false", "publishLocal")
    published = ivy_home / "local" / "io.indexbridge" / "indexbridge_2.13" / VERSION
    assert (published / "jars" / "indexbridge_2.13.jar").is_file(), sorted(p.name for p in ivy_home.rglob("*"))
    user = tmp_path / "user-project"
    (user / "project").mkdir(parents=True)
    (user / "project" / "build.properties").write_text((ROOT / "project" / "build.properties").read_text())
    (user / "build.sbt").write_text(textwrap.dedent(f"""
        scalaVersion := "2.13.16"
        libraryDependencies ++= Seq(
          "io.indexbridge" %% "indexbridge" % "{VERSION}",
          "org.apache.spark" %% "spark-sql" % "4.0.1"
        )
        run / fork := true
        run / javaOptions ++= Seq("-XX:TieredStopAtLevel=1", "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED", "--add-opens=java.base/java.nio=ALL-UNNAMED",
          "--add-opens=java.base/java.lang=ALL-UNNAMED", "--add-opens=java.base/java.util=ALL-UNNAMED")
        """))  # fmt: skip
    (user / "src" / "main" / "scala").mkdir(parents=True)
    (user / "src" / "main" / "scala" / "Job.scala").write_text(SCALA_JOB)
    done = _sbt(user, ivy_home, "run")
    assert "scala job: 143 positions" in done.stdout, done.stdout[-3000:]
