"""``njit`` that imports numba when a kernel is first called, not when its module is imported.

Importing numba costs about as much as importing pandas, and most commands never call
the kernels of most modules (``receval evaluate`` with ranking metrics never runs the
aspect or debiasing kernels, yet the metric registry imports their modules). A
function decorated with :func:`njit` stays a plain Python object until one of the
kernels of its module is called; then every kernel of that module is compiled with
:func:`numba.njit` and the options given (``cache=True`` kernels load from numba's
on-disk cache as usual) and replaces its placeholder in the module, so that kernels
calling each other see numba dispatchers. A kernel may call the kernels of another module
too (imported by name): compiling its module compiles theirs first and points its name at
their dispatchers. Parallel kernels loop over :func:`prange`, which is ``range`` until their
module compiles and :func:`numba.prange` in the compiled kernels.

Under numba's bounds checking (``NUMBA_BOUNDSCHECK=1``, with a fresh ``NUMBA_CACHE_DIR``:
numba's cache does not tell checked kernels from unchecked ones) every kernel compiles
serially: numba 0.68 checks no index inside a parallel loop, even with
``boundscheck=True``, so a parallel kernel would otherwise escape the check
(``tests/test_kernels_fuzz.py`` runs its fuzz tests that way).

>>> @njit(cache=False)
... def add(a, b):
...     return a + b
>>> type(add).__name__
'LazyKernel'
>>> add(2, 3), type(add).__name__  # compiled on the first call, then numba's own dispatcher
(5, 'CPUDispatcher')
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

__all__ = [
    "COMPILED_FROM", "NUMPY_CELLS", "LazyKernel", "in_threads", "njit", "numpy_pays", "one_at_a_time", "prange",
    "threads",
]  # fmt: skip

_T = TypeVar("_T")

COMPILED_FROM = 1 << 20
"""Rows from which a compiled loop pays: below, its numpy formulation is about as fast and loads no compiler."""

NUMPY_CELLS = 1 << 22
"""Cells of a dense result (n x m pairs: kNN similarities, users x items scores) up to which a kernel's numpy
formulation runs instead (4M: 2,048 entities' similarities; MovieLens-100K's 1,650 items or 943 x 1,650
scores): importing numba and loading its cached kernels costs about 0.5 s per process, and numpy's extra
passes cost as much at about twice this (item-kNN on 2,900 x 2,900, 400k ratings, 2 cores)."""

_PENDING: dict[str, list[LazyKernel]] = {}
"""Module name -> its kernels not compiled yet."""
_LOCK = threading.Lock()
_PARALLEL = threading.Lock()


class LazyKernel:
    """A function compiled by :func:`numba.njit` (with ``options``) on its module's first kernel call."""

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]) -> None:
        functools.update_wrapper(self, func)
        self.py_func = func
        self.options = options
        self.dispatcher: Any = None
        _PENDING.setdefault(func.__module__, []).append(self)

    def compile_module(self) -> None:
        """Replace every pending kernel of this kernel's module by its numba dispatcher."""
        import numba

        namespace = self.py_func.__globals__
        checked = bool(getattr(numba.config, "BOUNDSCHECK", None))
        for kernel in _PENDING.pop(self.py_func.__module__, []):
            options = {**kernel.options, "parallel": False} if checked else kernel.options
            kernel.dispatcher = numba.njit(**options)(kernel.py_func)  # typed on its first call
            if namespace.get(kernel.py_func.__name__) is kernel:  # a wrapper (one_at_a_time) stays in place
                namespace[kernel.py_func.__name__] = kernel.dispatcher
        # before any call, numba must find its own objects behind the names the kernels read: prange, and
        # the kernels imported from other modules (compiled here unless they are; popped first, so modules
        # importing each other's kernels end)
        for name, value in list(namespace.items()):
            if value is prange:
                namespace[name] = numba.prange
            elif isinstance(value, LazyKernel):
                if value.dispatcher is None:
                    value.compile_module()
                namespace[name] = value.dispatcher

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.dispatcher is None:
            with _LOCK:  # one thread compiles; the others wait for its dispatchers
                if self.dispatcher is None:
                    self.compile_module()
        return self.dispatcher(*args, **kwargs)


def njit(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """:func:`numba.njit` deferred to the first call: ``@njit`` or ``@njit(cache=True, ...)``."""
    if func is not None:
        return LazyKernel(func, options)
    return functools.partial(LazyKernel, options=options)


def numpy_pays(cells: int) -> bool:
    """Whether a problem of ``cells`` (n x m pairs) runs a kernel's numpy formulation (which must give the
    kernel's bits): at most :data:`NUMPY_CELLS`, in a process that has not imported numba (once it has, its
    kernels cost their own time only, and run on all cores).

    >>> numpy_pays(NUMPY_CELLS + 1)
    False
    """
    return cells <= NUMPY_CELLS and "numba" not in sys.modules


def threads() -> int:
    """The threads a kernel runs on: numba's, ``NUMBA_NUM_THREADS`` when it is set, else the machine's cores.
    The numpy formulations of the kernels split their independent blocks over as many (:func:`in_threads`).

    >>> threads() >= 1
    True
    """
    given = os.environ.get("NUMBA_NUM_THREADS", "")
    return int(given) if given.isdigit() and int(given) > 0 else os.cpu_count() or 1


def in_threads(jobs: Sequence[Callable[[], _T]]) -> list[_T]:
    """The results of ``jobs``, in their order, run on up to :func:`threads` threads; a job's exception is
    raised here. For jobs that spend their time in numpy's loops over large arrays, which release the GIL.

    >>> in_threads([lambda: 1, lambda: 2])
    [1, 2]
    """
    workers = min(threads(), len(jobs))
    if workers <= 1:
        return [job() for job in jobs]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(workers) as pool:
        running = [pool.submit(job) for job in jobs]
        return [job.result() for job in running]


def prange(*args: int) -> range:
    """``range``, and :func:`numba.prange` in a compiled kernel (its module's name is pointed at numba's).

    >>> list(prange(3))
    [0, 1, 2]
    """
    return range(*args)


def one_at_a_time(kernel: Callable[..., Any]) -> Callable[..., Any]:
    """``kernel`` (a ``parallel=True`` numba kernel) called by one thread of the process at a time.

    Numba's threading layers are not all safe to enter from several threads at once (the workqueue
    layer aborts the process; OpenMP's has aborted under threaded Dask workers here), and one call
    already keeps every core busy, so threads of a threaded executor queue for it instead.

    >>> double = one_at_a_time(lambda x: 2 * x)
    >>> double(21)
    42
    """

    @functools.wraps(kernel, assigned=("__module__", "__name__", "__qualname__", "__doc__"), updated=())
    def call(*args: Any, **kwargs: Any) -> Any:
        with _PARALLEL:
            return kernel(*args, **kwargs)

    return call
