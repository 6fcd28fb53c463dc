"""bleve index directories (bleve v1.0.14, scorch): ``bolt`` reads and writes the BoltDB file
``store/root.bolt`` as go.etcd.io/bbolt v1.3.5 does."""
