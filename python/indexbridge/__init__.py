"""indexbridge: Apache Paimon index files and bleve zap segments, byte for byte, from Spark and Python."""

from indexbridge.errors import IndexFormatError

__version__ = "0.1.0"
__all__ = ["IndexFormatError", "__version__"]
