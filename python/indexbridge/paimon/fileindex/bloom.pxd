# Cython declarations augmenting bloom.py when setup.py compiles it (plain Python ignores this
# file): the per-literal probe in C integers.
cimport cython

cdef unsigned long long _LOW32, _BIT31


cdef class _Prober:
    cdef const unsigned char[:] bits
    cdef unsigned long long num_bits
    cdef int num_hashes
    cdef object fast_hash_u64

    @cython.locals(h=cython.ulonglong, c=cython.ulonglong, h2=cython.ulonglong, pos=cython.ulonglong, num_bits=cython.ulonglong, _=cython.int)
    cpdef bint might_contain(self, object value)
