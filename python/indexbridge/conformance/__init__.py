"""Per-case checks of the Python engine against golden vector directories (``indexbridge conformance``)."""
