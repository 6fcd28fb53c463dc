"""indexbridge against the live Go implementation: bleve v1.0.14's mapping and analyzers, zap v11.0.14.

integration/zapgo (go.mod pins bleve, zap/v11, vellum, roaring, snappy) is built once per run
into target/zapgo/ through the Go module proxy. From the same generated raw documents:

* Go maps, analyses and writes segments; indexbridge's analyzers + writer in Python and in Scala
  (io.indexbridge.cli.FileCodecs over py4j) must write identical files;
* Go opens indexbridge's segments and dumps every field, term, posting, location and stored
  field; Python's reader must report the same;
* Go merges indexbridge's segments with deleted documents; Python's and Scala's merges must
  produce identical bytes and document renumbering.

Needs Go (PATH or /usr/local/go/bin/go) and the module proxy (or a warm module cache); without
them the test fails, it is not skipped.
"""

from __future__ import annotations

import json
import random
import subprocess
from pathlib import Path

import pytest

from indexbridge.jvm import jvm
from indexbridge.zap import Segment, build_segment, merge_segments
from indexbridge.zap.corpus import generate, zapgo

SEGMENTS = 3
DOCS_PER_SEGMENT = 120


@pytest.fixture(scope="module", name="zapgo")
def zapgo_fixture() -> Path:
    return zapgo()


def run_go(zapgo: Path, *args: object) -> str:
    return subprocess.run([str(zapgo), *map(str, args)], check=True, capture_output=True, text=True).stdout


def python_dump(path: Path) -> str:
    """zapgo ``dump``'s text, from Python's reader."""
    lines = []
    with Segment.open(path) as seg:
        names = seg.field_names
        for name in names:
            lines.append(f"field {name}")
            for term, _ in seg.dictionary(name).items():
                lines.append(f"term {term.hex()}")
                for hit in seg.postings(name, term):
                    locs = "".join(
                        f" {names[loc.field_id]}/{loc.pos}/{loc.start}/{loc.end}/{','.join(map(str, loc.array_positions))}"
                        for loc in hit.locations or ()
                    )
                    lines.append(f" {hit.doc} {hit.freq} {hit.norm_bits}{locs}")
        for doc in range(seg.num_docs):
            lines.append(f"doc {doc} {seg.doc_id(doc).hex()}")
            for name, kind, value, positions in seg.document(doc):
                lines.append(f" stored {name} {kind} {value.hex()} {','.join(map(str, positions))}")
    return "\n".join(lines) + "\n"


def test_segments_equal_go(zapgo: Path, tmp_path: Path) -> None:
    codecs = jvm().io.indexbridge.cli.FileCodecs
    ours = []
    for k in range(SEGMENTS):
        corpus = generate(DOCS_PER_SEGMENT, seed=100 + k, id_prefix=f"s{k}-")
        corpus_path = corpus.write(tmp_path / f"corpus{k}.json")
        run_go(zapgo, "build", corpus_path, tmp_path / f"go{k}.zap")
        go_bytes = (tmp_path / f"go{k}.zap").read_bytes()

        python_bytes = build_segment(corpus.documents())
        assert python_bytes == go_bytes, f"segment {k}: Python's analysis + writer differ from Go"
        codecs.buildZapSegment(str(corpus_path), str(tmp_path / f"scala{k}.zap"))
        assert (tmp_path / f"scala{k}.zap").read_bytes() == go_bytes, f"segment {k}: Scala's analysis + writer differ from Go"

        ours_path = tmp_path / f"ours{k}.zap"
        ours_path.write_bytes(python_bytes)
        assert run_go(zapgo, "dump", ours_path) == python_dump(ours_path), f"segment {k}: Go's reading differs from Python's"
        ours.append(ours_path)

    rng = random.Random(5)
    drops = [sorted(rng.sample(range(DOCS_PER_SEGMENT), rng.randint(1, DOCS_PER_SEGMENT // 3))) for _ in ours]
    drops[1] = []  # one input merged whole
    (tmp_path / "drops.json").write_text(json.dumps(drops))
    go_doc_nums = json.loads(run_go(zapgo, "merge", tmp_path / "go-merged.zap", tmp_path / "drops.json", *ours))
    go_merged = (tmp_path / "go-merged.zap").read_bytes()

    segments = [Segment.open(p) for p in ours]
    try:
        python_merged, python_doc_nums = merge_segments(segments, [set(d) for d in drops])
    finally:
        for seg in segments:
            seg.close()
    assert python_doc_nums == go_doc_nums
    assert python_merged == go_merged, "Python's merge differs from Go's"
    scala_doc_nums = codecs.mergeZapSegments(json.dumps([str(p) for p in ours]), json.dumps(drops), str(tmp_path / "scala-merged.zap"))
    assert json.loads(scala_doc_nums) == go_doc_nums
    assert (tmp_path / "scala-merged.zap").read_bytes() == go_merged, "Scala's merge differs from Go's"
    # the merged segment reads the same in Go and in Python
    assert run_go(zapgo, "dump", tmp_path / "go-merged.zap") == python_dump(tmp_path / "go-merged.zap")
