"""The one error type of the library: a malformed input, naming the file, offset and expectation."""

from __future__ import annotations


class IndexFormatError(ValueError):
    """Raised for any input that does not follow its format.

    ``source`` names the file (or ``<bytes>``), ``offset`` is the byte offset at which the
    problem was found, and ``expected`` says what the format requires there.
    """

    def __init__(self, source: str, offset: int, expected: str):
        self.source = source
        self.offset = offset
        self.expected = expected
        super().__init__(f"{source}: offset {offset}: {expected}")
