"""The process around a ``receval`` command: allocator and collector tuned for those that gain, trackers stopped.

:func:`receval.cli.app.entry` (the console script) calls :func:`wants_tuning` and
:func:`tune_allocator`, and :func:`tune_collector` for :data:`COLLECTOR_COMMANDS`, before the
command and :func:`stop_resource_trackers` after it;
:func:`receval.cli.app.main` (what tests and ``python -m receval`` run) does neither, so that
no setting of this process reaches one that merely imports the CLI.

Examples
--------
>>> sorted(TUNED_COMMANDS), TUNING_VARIABLE
(['evaluate'], 'RECEVAL_MALLOC_TUNING')
"""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Mapping, Sequence

__all__ = [
    "COLLECTOR_COMMANDS", "COLLECTOR_THRESHOLDS", "TUNED_COMMANDS", "TUNING_VARIABLE", "command_word",
    "stop_resource_trackers", "tune_allocator", "tune_collector", "wants_tuning",
]  # fmt: skip

# Commands whose whole process gains from tune_allocator (benchmarks/bench_process_tuning.py): one-shot
# commands only, never those with workers or whose tasks record their peak memory (run)
TUNED_COMMANDS = frozenset({"evaluate"})
TUNING_VARIABLE = "RECEVAL_MALLOC_TUNING"  # "0": no tuning


def wants_tuning(args: Sequence[str], environ: Mapping[str, str]) -> bool:
    """Whether the command line names a command of :data:`TUNED_COMMANDS` and the user has not opted out.

    The root options (``-v``, ``-q``, ``--version``) take no value, so the command is the first other word.

    >>> wants_tuning(["-v", "evaluate", "--truth", "t.tsv"], {}), wants_tuning(["run", "x.toml"], {})
    (True, False)
    >>> wants_tuning(["evaluate"], {"RECEVAL_MALLOC_TUNING": "0"})
    False
    """
    return command_word(args) in TUNED_COMMANDS and environ.get(TUNING_VARIABLE, "1") != "0"


def command_word(args: Sequence[str]) -> str | None:
    """The command a command line names: its first word that is not an option (the root options take no value).

    >>> command_word(["-vv", "data", "stats", "u.data"]), command_word(["--help"])
    ('data', None)
    """
    return next((arg for arg in args if not arg.startswith("-")), None)


# One-shot commands whose imports (numba's, scipy's: hundreds of thousands of objects) make CPython's cyclic
# collector, at its default thresholds (700, 10, 10), run hundreds of passes and full ones over the growing heap:
# 0.15 s CPU of a `receval predict` on ML-100K (0.035 s at COLLECTOR_THRESHOLDS; 0.03 -> 0.015 s for a 30k-user
# `receval evaluate`), counted with gc.callbacks. A pass now comes every 10,000 container allocations, a full
# one practically never in a command that lasts seconds; nothing in these commands lives on reference cycles.
COLLECTOR_COMMANDS = frozenset({"evaluate", "predict"})
COLLECTOR_THRESHOLDS = (10_000, 50, 1_000)


def tune_collector() -> None:
    """Set :data:`COLLECTOR_THRESHOLDS` as the cyclic garbage collector's (this process's, from now on)."""
    gc.set_threshold(*COLLECTOR_THRESHOLDS)


# the helper processes worker pools start beside their workers, by the module that starts them
_RESOURCE_TRACKERS = ("joblib.externals.loky.backend.resource_tracker", "multiprocessing.resource_tracker")


def stop_resource_trackers() -> None:
    """Stop the resource trackers a worker pool started (loky's, multiprocessing's) and wait for them to exit.

    Each would end by itself only after this process has (when its pipe from here closes), so it
    outlives the command by a moment, long enough for whoever started the command to find it. The
    pools' semaphores are collected first: each unregisters with its tracker, and one collected
    after the stop would start a new tracker. A command that started no pool has no tracker.
    """
    running = [
        tracker
        for tracker in (getattr(sys.modules.get(name), "_resource_tracker", None) for name in _RESOURCE_TRACKERS)
        if tracker is not None and getattr(tracker, "_fd", None) is not None
    ]
    if running:
        gc.collect()
        for tracker in running:
            tracker._stop()


def tune_allocator() -> None:
    """Fewer page faults for a short process that allocates and frees large arrays (glibc only).

    glibc hands blocks above 128 kB to the kernel and back on every allocation, so each temporary
    array faults its pages in anew: up to 32 MB they now come from the heap, which keeps freed
    memory for the next one (``benchmarks/bench_process_tuning.py``, a 3-million-row ``receval
    evaluate``: 40% fewer page faults, a quarter less system time, a tenth less CPU time; the
    same peak memory). numpy's request for huge pages is left alone: turning it off bought
    nothing there and doubled the page faults. Settings of this process only: a child process
    starts with glibc's defaults. Elsewhere (no glibc) nothing changes.
    """
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None)
            libc.mallopt(-3, 32 << 20)  # M_MMAP_THRESHOLD: blocks up to 32 MB from the heap
            libc.mallopt(-1, 1 << 30)  # M_TRIM_THRESHOLD: freed memory stays for reuse
