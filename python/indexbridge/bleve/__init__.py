"""bleve index directories (bleve v1.0.14, scorch), one module per concern:

``bolt``     the BoltDB file ``store/root.bolt``, as go.etcd.io/bbolt v1.3.5 reads and writes it
``mapping``  bleve's index mapping JSON, and documents mapped by it into zap's writer input
``index``    the directory: index_meta.json, the scorch snapshot in root.bolt, zap v11 segments;
             live documents (deletions and updates applied), whole indexes written atomically
``query``    bleve's query JSON, searched over an index with bleve's TF-IDF scores
``corpus``   generated documents, mappings and queries (tests, benchmark, demo)
"""
