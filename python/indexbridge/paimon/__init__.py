"""Apache Paimon index formats: deletion vectors, dynamic-bucket hash index, file indexes."""
