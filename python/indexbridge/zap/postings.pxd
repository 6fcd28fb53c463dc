# Cython declarations augmenting postings.py when setup.py compiles it (plain Python ignores this
# file): the bulk postings decoder's byte reads in C integers, over typed views of the segment's
# bytes and of a list's docNums.
cimport cython


@cython.locals(stop=Py_ssize_t)
cdef Py_ssize_t _uvarint_end(const unsigned char[:] buf, Py_ssize_t at, Py_ssize_t end) except -1

@cython.locals(value=cython.ulonglong, low7=cython.ulonglong, shift=cython.int)
cdef long long _uvarint_in(const unsigned char[:] buf, Py_ssize_t at, Py_ssize_t stop)

@cython.locals(stop=Py_ssize_t, count=cython.longlong, _=cython.longlong)
cdef tuple _chunk_ends(const unsigned char[:] buf, Py_ssize_t at, Py_ssize_t end)

@cython.locals(stop=Py_ssize_t, count=cython.longlong, _=cython.longlong, values=list, array_positions=list, found=list)
cdef tuple _locations(const unsigned char[:] buf, Py_ssize_t at, Py_ssize_t end)

@cython.locals(chunk=Py_ssize_t, hi=Py_ssize_t, n=Py_ssize_t, stop=Py_ssize_t, code=cython.longlong, bits=cython.longlong, size=cython.longlong)
cdef Py_ssize_t _chunk_hits(const unsigned char[:] buf, const unsigned int[:] docs, Py_ssize_t lo, Py_ssize_t cf, Py_ssize_t fat, Py_ssize_t fend, Py_ssize_t lat, Py_ssize_t lend, list out) except -1

@cython.locals(high=Py_ssize_t)
cdef Py_ssize_t _u32_le(const unsigned char[:] buf, Py_ssize_t at)

@cython.locals(stop=Py_ssize_t, count=cython.longlong, size=cython.longlong, c=cython.longlong, chunk_end=cython.longlong)
cdef Py_ssize_t _one_chunk_data(const unsigned char[:] buf, Py_ssize_t at, Py_ssize_t end, Py_ssize_t chunk) except -1

@cython.locals(buf="const unsigned char[:]", values="unsigned int[:]", stop=Py_ssize_t, at=Py_ssize_t, roaring_at=Py_ssize_t, roaring_len=Py_ssize_t, key=Py_ssize_t, count=Py_ssize_t, i=Py_ssize_t, low=Py_ssize_t, last=Py_ssize_t, freq_offset=Py_ssize_t, loc_offset=Py_ssize_t, chunk=Py_ssize_t, hits=list)
cpdef object _read_small(object data, str source, Py_ssize_t offset, Py_ssize_t file_end, Py_ssize_t cf, Py_ssize_t num_docs)
