# Cython declarations augmenting roaring.py when setup.py compiles it (plain Python ignores this
# file): the offsets check of a bitmap's header in C integers.
cimport cython


@cython.locals(bitmap_bytes=cython.Py_ssize_t, array_max=cython.Py_ssize_t, at=cython.Py_ssize_t, i=cython.Py_ssize_t, card_minus_1=cython.Py_ssize_t)
cdef Py_ssize_t _no_run_length(tuple fields, Py_ssize_t n) except -2
