"""Delta Lake: deletion-vector files and descriptors (:mod:`.dv`), Z85 (:mod:`.z85`), the log's
file actions at a version (:mod:`.log`), and Paimon's deletion vectors moved across (:mod:`.bridge`)."""
