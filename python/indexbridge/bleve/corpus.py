"""Generated bleve workloads (documents, mappings, queries, later updates) and the Go reference
programs that answer them: what tests/test_bleve_index.py, ``bench bleve`` and the demo use.

``Workload.generate(seed)`` makes JSON documents (text with case, punctuation, stop words and
non-ASCII words; numbers, booleans, date strings bleve's default parser does and does not
accept, arrays, nested objects, nulls, fields whose type changes between documents), a mapping in
bleve's JSON (dynamic or static default mapping, explicit text/number/datetime/boolean fields
with every option, renamed fields, several fields over one property, disabled objects, ``_all``
on or off, default analyzers at every level, the ``*_dynamic`` switches, another default field)
and queries of every supported kind over the words and numbers the documents hold.

The reference programs are built from this source checkout into ``target/boltgo/``:
``boltgo`` (integration/boltgo: bleve v1.0.14, bbolt v1.3.5) and ``bleve2`` (its ``bleve2``
module: bleve v2). Building needs Go and the module proxy (or a warm module cache).
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from indexbridge.zap.corpus import ODD_WORDS, WORDS, _sentence

REPO = Path(__file__).resolve().parents[3]
STOP = ("the", "and", "of", "to", "in", "is", "it", "a", "an", "for", "on", "with", "as", "at", "be", "by", "this", "or")


# -- the Go reference programs -----------------------------------------------------------------


def _go() -> str:
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).is_file():
        raise RuntimeError("the Go toolchain is required (PATH or /usr/local/go/bin/go)")
    return go


def reference_binary(name: str = "boltgo") -> Path:
    """``boltgo`` (bleve v1.0.14) or ``bleve2`` (bleve v2) built into target/boltgo/."""
    source = REPO / "integration" / "boltgo"
    if name == "bleve2":
        source = source / "bleve2"
    if not (source / "go.mod").is_file():
        raise RuntimeError(f"{source} is missing: the Go reference needs a source checkout")
    binary = REPO / "target" / "boltgo" / name
    binary.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GOFLAGS="-mod=mod", CGO_ENABLED="0")
    subprocess.run([_go(), "build", "-o", str(binary), "."], cwd=source, env=env, check=True)
    return binary


def run_reference(binary: Path, *args: object) -> Any:
    """Run a reference program; its JSON output (an error names the program's stderr)."""
    done = subprocess.run([str(binary), *map(str, args)], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{binary.name} {' '.join(map(str, args))}: {done.stderr.strip()}")
    return json.loads(done.stdout) if done.stdout.strip() else None


def run_job(binary: Path, mode: str, job: dict, *args: object) -> Any:
    """A reference mode that reads a JOB.json: the job is written to a temporary file."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(job, f)
    try:
        if mode in ("bleve-segment", "bleve-bench"):
            return run_reference(binary, mode, f.name, *args)
        return run_reference(binary, mode, *args, f.name)
    finally:
        os.unlink(f.name)


def answer(binary: Path, index_dir: str | os.PathLike, queries: list, docs: bool = True) -> dict:
    """``bleve-answer`` (or bleve2's ``answer``): doc count, stored fields (unless ``docs`` is
    false; bleve v1 only), each query's hits."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        json.dump(queries, f)
    try:
        if binary.name == "bleve2":
            return run_reference(binary, "answer", index_dir, f.name)
        return run_reference(binary, "bleve-answer", index_dir, f.name, *(() if docs else ("nodocs",)))
    finally:
        os.unlink(f.name)


# -- documents ----------------------------------------------------------------------------------

_DATE_STRINGS = ("2020-01-02T03:04:05Z", "2021-12-31T23:59:59.123456789Z", "1999-02-28 12:00:00", "2024-02-29",
                 "2023-02-29", "2020-13-01", "2020-01-02T3:04:05Z", "2020-01-02T03:04:05+01:30", "2020-01-02T03:04:05,5Z",
                 "2020-01-02T03:04:05+24:00", "2020-01-02T24:00:00Z", "2020-01-02  10:11:12", "2020-1-02",
                 "1677-09-21T00:12:43Z", "2262-04-12T00:00:00Z", "0001-01-01", "2020-01-02T03:04:05.Z", "not a date")


def _text(rng: random.Random, lo: int, hi: int) -> str:
    return _sentence(rng, rng.randint(lo, hi))


def _word(rng: random.Random) -> str:
    return rng.choice(ODD_WORDS) if rng.random() < 0.1 else rng.choice(WORDS[:80])


def random_document(rng: random.Random, n: int) -> dict:
    """One JSON document; keys present at random, in random order."""
    doc: dict[str, Any] = {}
    items: list[tuple[str, Any]] = []
    if rng.random() < 0.9:
        items.append(("title", _text(rng, 1, 8)))
    if rng.random() < 0.9:
        items.append(("body", _text(rng, 0, 60)))
    if rng.random() < 0.6:
        items.append(("tags", [_word(rng) for _ in range(rng.randint(0, 4))]))
    if rng.random() < 0.7:
        items.append(("price", rng.choice([rng.randint(-1000, 1000), round(rng.uniform(-1e4, 1e4), 2), rng.randint(0, 20)])))
    if rng.random() < 0.3:
        items.append(("counts", [rng.randint(0, 50) for _ in range(rng.randint(1, 3))]))
    if rng.random() < 0.6:
        items.append(("active", rng.random() < 0.5))
    if rng.random() < 0.6:
        items.append(("when", rng.choice(_DATE_STRINGS) if rng.random() < 0.3 else
                      f"20{rng.randint(0, 29):02d}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00Z"))
    if rng.random() < 0.5:
        author: dict[str, Any] = {"name": _text(rng, 1, 3)}
        if rng.random() < 0.6:
            author["age"] = rng.randint(18, 90)
        if rng.random() < 0.3:
            author["email"] = rng.choice(["a@b.org", "x.y@z.com", None])
        items.append(("author", author))
    if rng.random() < 0.3:
        items.append(("comments", [{"text": _text(rng, 1, 10), "stars": rng.randint(1, 5)} for _ in range(rng.randint(1, 3))]))
    if rng.random() < 0.3:
        items.append(("meta", {"source": _word(rng), "rank": rng.randint(0, 9)}))
    if rng.random() < 0.3:
        items.append(("code", rng.choice([rng.randint(0, 99), _word(rng), True, None])))  # its type varies
    if rng.random() < 0.2:
        items.append(("status", rng.choice(["open", "closed", "in review", "Open"])))
    rng.shuffle(items)
    for key, value in items:
        doc[key] = value
    doc["id"] = f"doc{n:05d}"
    return doc


# -- mappings -----------------------------------------------------------------------------------

ANALYZER_NAMES = ("standard", "simple", "keyword")


def _field_mapping(rng: random.Random, kind: str, name: str = "") -> dict:
    fm: dict[str, Any] = {"type": kind}
    if name:
        fm["name"] = name
    if kind == "text" and rng.random() < 0.7:
        fm["analyzer"] = rng.choice(ANALYZER_NAMES)
    for option, p in (("index", 0.9), ("store", 0.7), ("include_term_vectors", 0.7 if kind == "text" else 0.15),
                      ("include_in_all", 0.7), ("docvalues", 0.5)):
        if rng.random() < p:
            fm[option] = True
        elif rng.random() < 0.3:
            fm[option] = False
    if kind == "datetime" and rng.random() < 0.3:
        fm["date_format"] = "dateTimeOptional"
    return fm


def random_mapping(rng: random.Random) -> dict | None:
    """A bleve mapping JSON object (None: bleve's default mapping)."""
    if rng.random() < 0.15:
        return None
    props: dict[str, Any] = {}
    if rng.random() < 0.7:
        fields = [_field_mapping(rng, "text")]
        if rng.random() < 0.4:
            fields.append(_field_mapping(rng, "text", "title_exact") | {"analyzer": "keyword", "index": True})
        props["title"] = {"fields": fields} | ({"dynamic": False} if rng.random() < 0.3 else {})
    if rng.random() < 0.5:
        props["body"] = {"fields": [_field_mapping(rng, "text")]}
    if rng.random() < 0.5:
        props["tags"] = {"fields": [_field_mapping(rng, "text") | {"analyzer": rng.choice(ANALYZER_NAMES)}]}
    if rng.random() < 0.6:
        props["price"] = {"fields": [_field_mapping(rng, "number")]}
    if rng.random() < 0.4:
        props["when"] = {"fields": [_field_mapping(rng, "datetime")]}
    if rng.random() < 0.4:
        props["active"] = {"fields": [_field_mapping(rng, "boolean")]}
    if rng.random() < 0.5:
        author: dict[str, Any] = {"properties": {"name": {"fields": [_field_mapping(rng, "text")]}}}
        if rng.random() < 0.5:
            author["properties"]["age"] = {"fields": [_field_mapping(rng, "number", rng.choice(["", "years"]))]}
        if rng.random() < 0.4:
            author["dynamic"] = False
        if rng.random() < 0.3:
            author["default_analyzer"] = rng.choice(ANALYZER_NAMES)
        props["author"] = author
    if rng.random() < 0.3:
        props["meta"] = {"enabled": False}
    if rng.random() < 0.3:
        props["comments"] = {"dynamic": rng.random() < 0.5, "properties": {"text": {"fields": [_field_mapping(rng, "text")]}}}
    if rng.random() < 0.2:
        props["status"] = {"fields": [_field_mapping(rng, "text") | {"analyzer": "keyword"}, _field_mapping(rng, "number")]}
    if rng.random() < 0.25:
        props["_all"] = {"enabled": False}
    default: dict[str, Any] = {"dynamic": rng.random() < 0.75}
    if props:
        default["properties"] = props
    if rng.random() < 0.3:
        default["default_analyzer"] = rng.choice(ANALYZER_NAMES)
    mapping: dict[str, Any] = {"default_mapping": default}
    if rng.random() < 0.3:
        mapping["default_analyzer"] = rng.choice(ANALYZER_NAMES)
    for key in ("store_dynamic", "index_dynamic", "docvalues_dynamic"):
        if rng.random() < 0.15:
            mapping[key] = False
    if rng.random() < 0.15:
        mapping["default_field"] = "title"
    return mapping


# -- queries ------------------------------------------------------------------------------------

_FIELDS_TEXT = ("title", "body", "tags", "author.name", "comments.text", "status", "title_exact", "code", "")
_FIELDS_NUMBER = ("price", "counts", "author.age", "author.years", "comments.stars", "meta.rank", "code", "")


def _query_words(rng: random.Random, docs: list[dict]) -> list[str]:
    words = []
    for _ in range(3):
        doc = rng.choice(docs)
        text = doc.get(rng.choice(("title", "body"))) or ""
        if isinstance(text, str) and text:
            parts = text.split()
            start = rng.randrange(len(parts))
            words.extend(parts[start:start + rng.randint(1, 3)])
    return words or [rng.choice(WORDS)]


def _phrase_words(rng: random.Random, docs: list[dict]) -> tuple[list[str], str]:
    """Consecutive words of one text value of a document, and its field: a phrase that matches;
    or, from two of its comments, word k of one and word k + 1 of the other: consecutive
    positions that must not match (their array positions differ)."""
    doc = rng.choice(docs)
    sources = [(name, [doc[name]]) for name in ("title", "body") if isinstance(doc.get(name), str)]
    author = doc.get("author")
    if isinstance(author, dict) and isinstance(author.get("name"), str):
        sources.append(("author.name", [author["name"]]))
    comments = [c["text"] for c in doc.get("comments") or () if isinstance(c, dict) and isinstance(c.get("text"), str)]
    if comments:
        sources.append(("comments.text", comments))
    if not sources:
        return [rng.choice(WORDS)], ""
    name, texts = rng.choice(sources)
    parts = [t.split() for t in texts]
    if len(parts) > 1 and len(parts[1]) > 1 and parts[0] and rng.random() < 0.4:
        k = rng.randrange(min(len(parts[0]), len(parts[1]) - 1))
        return [parts[0][k], parts[1][k + 1]], name
    words = rng.choice(parts) or [rng.choice(WORDS)]
    start = rng.randrange(len(words))
    return words[start : start + rng.randint(1, 4)], name


def random_query(rng: random.Random, docs: list[dict], depth: int = 0) -> dict:
    kind = rng.choice(("term", "match", "match", "match_phrase", "prefix", "range", "conj", "disj", "match_all", "match_and"))
    if depth >= 2 and kind in ("conj", "disj"):
        kind = "match"
    q: dict[str, Any]
    if kind == "term":
        word = rng.choice(_query_words(rng, docs)).lower().strip(".,!?;:\"'()")
        q = {"term": rng.choice([word, rng.choice(WORDS), "open", "in review"])}
        fld = rng.choice(_FIELDS_TEXT)
    elif kind in ("match", "match_and"):
        q = {"match": " ".join(_query_words(rng, docs)[: rng.randint(1, 4)]) if rng.random() < 0.9 else rng.choice(STOP)}
        if kind == "match_and":
            q["operator"] = "and"
        if rng.random() < 0.15:
            q["analyzer"] = rng.choice(ANALYZER_NAMES)
        fld = rng.choice(_FIELDS_TEXT)
    elif kind == "match_phrase":
        if rng.random() < 0.75:  # words in a row of one value: most of these match
            words, source = _phrase_words(rng, docs)
            fld = rng.choice((source, source, ""))
        else:
            words, fld = _query_words(rng, docs)[: rng.randint(1, 4)], rng.choice(_FIELDS_TEXT)
        q = {"match_phrase": " ".join(words)}
    elif kind == "prefix":
        word = rng.choice(_query_words(rng, docs)).lower()
        q = {"prefix": word[: rng.randint(1, 3)] if rng.random() < 0.9 else ""}
        fld = rng.choice(_FIELDS_TEXT)
    elif kind == "range":
        lo = rng.choice([None, rng.randint(-1000, 500), round(rng.uniform(-100, 100), 2), 0])
        hi = rng.choice([None, rng.randint(-500, 1000), round(rng.uniform(-10, 1e4), 2)]) if lo is not None else rng.randint(-500, 1000)
        q = {}
        if lo is not None:
            q["min"] = lo
        if hi is not None:
            q["max"] = hi
        for key in ("inclusive_min", "inclusive_max"):
            if rng.random() < 0.4:
                q[key] = rng.random() < 0.5
        fld = rng.choice(_FIELDS_NUMBER)
    elif kind == "conj":
        q = {"conjuncts": [random_query(rng, docs, depth + 1) for _ in range(rng.randint(1, 3))]}
        fld = ""
    elif kind == "disj":
        parts = [random_query(rng, docs, depth + 1) for _ in range(rng.randint(1, 4))]
        q = {"disjuncts": parts}
        if rng.random() < 0.4:
            q["min"] = rng.randint(0, len(parts))
        fld = ""
    else:
        q = {"match_all": {}}
        fld = ""
    if fld and kind not in ("conj", "disj", "match_all"):
        q["field"] = fld
    if rng.random() < 0.2:
        q["boost"] = rng.choice([0.5, 2.0, 3.5])
    return q


# -- workloads ----------------------------------------------------------------------------------


@dataclass
class Workload:
    """Documents (in order, unique ids under ``id``), a mapping, queries, and a later update
    (more documents, new versions of some, deletions) as bleve batches."""

    seed: int
    docs: list[dict]
    mapping: dict | None
    queries: list[dict]
    update: list[dict] = field(default_factory=list)

    @property
    def pairs(self) -> list[list]:
        return [[d["id"], d] for d in self.docs]

    @classmethod
    def generate(cls, seed: int, n_docs: int = 120, n_queries: int = 40) -> Workload:
        rng = random.Random(seed)
        docs = [random_document(rng, k) for k in range(n_docs)]
        mapping = random_mapping(rng)
        queries = [random_query(rng, docs) for _ in range(n_queries)]
        queries += [{"match_all": {}}, {"match": rng.choice(STOP)}, {"term": "zzz-not-there"}]
        extra = [random_document(rng, n_docs + k) for k in range(rng.randint(5, 30))]
        changed = [random_document(rng, rng.randrange(n_docs)) for _ in range(rng.randint(1, 10))]
        gone = sorted({f"doc{rng.randrange(n_docs):05d}" for _ in range(rng.randint(1, 8))})
        update = [{"index": [[d["id"], d] for d in extra[: len(extra) // 2]]},
                  {"index": [[d["id"], d] for d in extra[len(extra) // 2:] + changed], "delete": gone}]
        return cls(seed, docs, mapping, queries, update)

    def bleve_batches(self, rng: random.Random) -> list[dict]:
        """The same final documents as bleve batches with history: each document indexed in one
        of several batches, some first in another version (then updated), some extra ones
        indexed and deleted again."""
        batches: list[dict] = [{"index": [], "delete": []} for _ in range(rng.randint(2, 5))]
        for doc in self.docs:
            if rng.random() < 0.15:
                early = rng.randrange(len(batches) - 1)
                batches[early]["index"].append([doc["id"], random_document(rng, 0) | {"id": doc["id"]}])
                batches[rng.randrange(early + 1, len(batches))]["index"].append([doc["id"], doc])
            else:
                batches[rng.randrange(len(batches))]["index"].append([doc["id"], doc])
        for k in range(rng.randint(1, 6)):
            ghost = f"ghost{self.seed}-{k}"
            early = rng.randrange(len(batches) - 1)
            batches[early]["index"].append([ghost, random_document(rng, 0) | {"id": ghost}])
            batches[rng.randrange(early + 1, len(batches))]["delete"].append(ghost)
        return batches

    def final_after_update(self) -> list[dict]:
        """The live documents once :attr:`update` ran: id -> document, in no particular order."""
        live = {d["id"]: d for d in self.docs}
        for op in self.update:
            for doc_id, doc in op.get("index", []):
                live[doc_id] = doc
            for doc_id in op.get("delete", []):
                live.pop(doc_id, None)
        return list(live.values())


__all__ = ["Workload", "answer", "random_document", "random_mapping", "random_query", "reference_binary", "run_job",
           "run_reference"]
