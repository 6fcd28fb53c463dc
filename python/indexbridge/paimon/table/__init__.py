"""Whole Paimon tables, read as Paimon 1.4.2 reads them (one module per file kind):

``snapshot`` (snapshot files, hints), ``schema`` (schema files, types), ``manifest`` (manifest
lists, manifests, index manifests), ``options`` and ``paths`` (what the options and the
directory layout say), ``stats`` (predicates on statistics), ``scan`` (the plan), ``read`` (the
plan to Arrow), ``canonical`` (rows as JSON), ``verify`` (end-to-end checks), ``table``
(:class:`FileStoreTable`, the entry point).
"""

from indexbridge.paimon.table.table import FileStoreTable

__all__ = ["FileStoreTable"]
