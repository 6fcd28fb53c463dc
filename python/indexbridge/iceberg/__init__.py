"""Apache Iceberg: Puffin files and their ``deletion-vector-v1`` blobs (:mod:`.puffin`), and
Paimon's deletion vectors moved into them (:mod:`.bridge`)."""
