"""Generated raw-document corpora for the comparison with Go (integration/test_zap_go.py) and ``bench zap``.

A corpus is field mappings plus documents of ``(field, value)`` pairs in document order. Its JSON
form is what integration/zapgo and the Scala side (io.indexbridge.bench.ZapCorpus) read::

    {"mappings": [{"name", "type", "analyzer", "index", "store", "term_vectors", "doc_values",
                   "include_in_all"}],
     "all_field": true,
     "docs": [{"id": "d0", "fields": [["title", "Hello"], ["price", 3.5], ["tags", ["a", "b"]],
                                      ["created", "2020-01-02T03:04:05.000006+00:00"], ...]}]}

Datetimes are RFC 3339 strings in JSON (bleve's default parser reads them) and ``datetime`` in
Python. The text mixes case, punctuation, numbers, apostrophes, English stop words and non-ASCII
words, including Go's lower-casing quirks (``İ``, ``Σ``).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import shutil
import subprocess
from dataclasses import asdict, dataclass
from pathlib import Path

from indexbridge.zap.analysis import Document, gc_paused
from indexbridge.zap.analyzers import FieldMapping, analyze_document

MAPPINGS = (
    FieldMapping("title"),
    FieldMapping("body", store=False, doc_values=False),
    FieldMapping("tags", analyzer="keyword", term_vectors=False),
    FieldMapping("summary", analyzer="simple", include_in_all=False),
    FieldMapping("price", "number"),
    FieldMapping("counts", "number", term_vectors=True, include_in_all=False),
    FieldMapping("active", "boolean"),
    FieldMapping("created", "datetime"),
    FieldMapping("raw", analyzer="keyword", index=False),
)

WORDS = tuple((
    "the quick brown fox jumps over lazy dog and of to in is it you that he was for on are with as I his they be "
    "at one have this from or had by hot but some what there we can out other were all your when up use word how "
    "said an each she which do their time if will way about many then them would write like so these her long make "
    "thing see him two has look more day could go come did my sound no most number who over know water than call "
    "first people may down side been now find any new work part take get place made live where after back little "
    "only round man year came show every good me give our under name very through just form much great think say "
    "help low line before turn cause same mean differ move right boy old too does tell sentence set three want air "
    "well also play small end put home read hand port large spell add even land here must big high such follow act "
    "why ask men change went light kind off need house picture try us again animal point mother world near build "
    "self earth father head stand own page should country found answer school grow study still learn plant cover"
).split())
ODD_WORDS = (
    "don't", "O'Neil's", "dogs'", "rock'n'roll", "e-mail", "foo@bar.com", "https://example.org/a?b=c", "U.S.A.",
    "3.14159", "1,234,567", "v1.0.14", "x_y", "__init__", "café", "naïve", "Straße", "İstanbul", "ΟΔΥΣΣΕΥΣ",
    "Ωmega", "日本語", "カタカナ", "한국어", "中文", "😀", "“quoted”", "—", "…", "¿qué?", "12:30", "$100", "50%",
    "#tag", "don’t", "\u05d0\"\u05d1", "co\u00adop", "e\u0301tude", "ＡＢＣ", "KELVIN\u212a",
)
PUNCTUATION = (".", ",", "!", "?", ";", ":", " -", " (", ")", '"', "'")
EPOCH = dt.datetime(2000, 1, 1, tzinfo=dt.timezone.utc)
REPO = Path(__file__).resolve().parents[3]


def zapgo() -> Path:
    """Builds integration/zapgo of this source checkout into target/zapgo/ and returns the binary.

    Needs Go (PATH or /usr/local/go/bin/go) and the Go module proxy or a warm module cache; Go's
    build cache makes rebuilding unchanged sources quick.
    """
    source = REPO / "integration" / "zapgo"
    if not (source / "go.mod").is_file():
        raise RuntimeError(f"integration/zapgo is not in {REPO}: the Go reference needs a source checkout")
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).is_file():
        raise RuntimeError("the Go toolchain is required (PATH or /usr/local/go/bin/go)")
    binary = REPO / "target" / "zapgo" / "zapgo"
    binary.parent.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, GOFLAGS="-mod=mod", CGO_ENABLED="0")
    subprocess.run([go, "build", "-o", str(binary), "."], cwd=source, env=env, check=True)
    return binary


@dataclass(frozen=True)
class Corpus:
    mappings: tuple[FieldMapping, ...]
    docs: tuple[tuple[str, tuple[tuple[str, object], ...]], ...]
    all_field: bool = True

    def documents(self) -> list[Document]:
        """The writer input indexbridge's analyzers make of every document."""
        with gc_paused():
            return [analyze_document(doc_id, fields, self.mappings, self.all_field) for doc_id, fields in self.docs]

    def to_json(self) -> str:
        def plain(value: object) -> object:
            if isinstance(value, dt.datetime):
                return value.isoformat()
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value

        return json.dumps({
            "mappings": [asdict(m) for m in self.mappings],
            "all_field": self.all_field,
            "docs": [{"id": doc_id, "fields": [[name, plain(v)] for name, v in fields]} for doc_id, fields in self.docs],
        }, ensure_ascii=False)

    def write(self, path: Path) -> Path:
        path.write_text(self.to_json(), "utf-8")
        return path


def _sentence(rng: random.Random, n_words: int) -> str:
    parts = []
    for k in range(n_words):
        word = rng.choice(ODD_WORDS) if rng.random() < 0.08 else rng.choice(WORDS)
        if rng.random() < 0.15:
            word = word.capitalize() if rng.random() < 0.7 else word.upper()
        if rng.random() < 0.05:
            word = str(rng.randint(0, 10**rng.randint(1, 7)))
        parts.append(word + (rng.choice(PUNCTUATION) if rng.random() < 0.12 and k < n_words - 1 else ""))
    return " ".join(parts)


def generate(n_docs: int, seed: int = 0, id_prefix: str = "doc", body_words: int = 60) -> Corpus:
    """``n_docs`` documents; fields present at random and in random order, arrays for tags and counts."""
    rng = random.Random(seed)
    docs = []
    for d in range(n_docs):
        fields: list[tuple[str, object]] = []
        if rng.random() < 0.9:
            fields.append(("title", _sentence(rng, rng.randint(1, 8))))
        if rng.random() < 0.95:
            fields.append(("body", _sentence(rng, rng.randint(0, 2 * body_words))))
        if rng.random() < 0.7:
            fields.append(("tags", [rng.choice(WORDS + ODD_WORDS) for _ in range(rng.randint(1, 4))]))
        if rng.random() < 0.6:
            fields.append(("summary", _sentence(rng, rng.randint(1, 12))))
        if rng.random() < 0.8:
            fields.append(("price", rng.choice([rng.randint(-1000, 100000), round(rng.uniform(-1e6, 1e6), 3)])))
        if rng.random() < 0.4:
            fields.append(("counts", [rng.randint(0, 500) for _ in range(rng.randint(1, 3))]))
        if rng.random() < 0.7:
            fields.append(("active", rng.random() < 0.5))
        if rng.random() < 0.7:
            fields.append(("created", EPOCH + dt.timedelta(seconds=rng.randint(0, 10**9), microseconds=rng.randint(0, 999999))))
        if rng.random() < 0.5:
            fields.append(("raw", _sentence(rng, rng.randint(1, 5))))
        rng.shuffle(fields)
        docs.append((f"{id_prefix}{d}", tuple(fields)))
    return Corpus(MAPPINGS, tuple(docs))
