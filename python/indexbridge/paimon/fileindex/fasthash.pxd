# Cython declarations augmenting fasthash.py when setup.py compiles it (plain Python ignores this
# file): wang64 in C integers, which wrap modulo 2**64 as its masks do.
cimport cython

cdef unsigned long long _MASK64, _SIGN64, _FILL24, _FILL14, _FILL28


@cython.locals(m21=cython.ulonglong, m3_8=cython.ulonglong, m2_4=cython.ulonglong, m31=cython.ulonglong, k=cython.ulonglong)
cpdef unsigned long long wang64_unsigned(object key) except? 0
