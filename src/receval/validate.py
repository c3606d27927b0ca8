"""One validation of options and configuration values, run before any work starts.

The command line, the experiment configuration and the public functions check the
same values with the same rules and the same messages: seeds in range, counts ≥ 1,
fractions strictly between 0 and 1, finite numbers where finite is meant, thresholds
on the data's rating scale, per-user folds no more than a user's ratings, and
allocations that scale with users × items (or items²) sized against the memory
available. Every check raises :class:`~receval.errors.ConfigError` naming the option
(``seed=``, ``split.test_fraction``) and how to fix it; the command line prints it as
one ``error:`` line with exit status 2 and its own flag (``--seed``), and a configuration
adds its file and line.

Examples
--------
>>> check_seed(7)
7
>>> check_seed(-1)
Traceback (most recent call last):
...
receval.errors.ConfigError: seed=-1: a seed is an integer from 0 to 4294967295
>>> check_count(0, "seeds")
Traceback (most recent call last):
...
receval.errors.ConfigError: seeds=0: give an integer of at least 1
>>> check_threshold(10, 1, 5)
Traceback (most recent call last):
...
receval.errors.ConfigError: threshold=10 is outside the rating scale 1..5; pick a threshold on the scale
>>> check_number(float("nan"), "rmse", minimum=0)
Traceback (most recent call last):
...
receval.errors.ConfigError: rmse=nan: give a finite number
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from receval.errors import ConfigError

__all__ = [
    "SEED_MAX",
    "available_memory",
    "check_command_options",
    "check_count",
    "check_distinct",
    "check_folds",
    "check_fraction",
    "check_jobs",
    "check_memory",
    "check_number",
    "check_option",
    "check_seed",
    "check_threshold",
    "jobs_limit",
    "options_of",
    "JOBS_CAP",
    "parse_duration",
    "parse_instant",
]

SEED_MAX = 2**32 - 1  # numpy's legacy seeds, scikit-learn's random_state: every seed every library accepts


def _shown(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _bad(option: str, value: Any, text: str) -> ConfigError:
    """The error for ``value`` of ``option``: ``seed=-1: ...`` for a parameter name (the command line shows its
    flag), ``split.test_fraction 1.5: ...`` for a configuration key or an option as written."""
    if _PARAMETER.fullmatch(option):
        return ConfigError(f"{option}={_shown(value)}{text}", parameters=[option])
    return ConfigError(f"{option} {_shown(value)}{text}")


_PARAMETER = re.compile(r"[a-z_][a-z0-9_]*")


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def check_seed(value: Any, option: str = "seed") -> int:
    """``value`` as an int seed from 0 to :data:`SEED_MAX` (ConfigError otherwise).

    Returns
    -------
    int
        The seed.

    Examples
    --------
    >>> check_seed(99999999999999999999)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: seed=99999999999999999999: a seed is an integer from 0 to 4294967295
    """
    if not _is_int(value) or not 0 <= value <= SEED_MAX:
        raise _bad(option, value, f": a seed is an integer from 0 to {SEED_MAX}")
    return int(value)


def check_count(value: Any, option: str, minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum`` (list lengths, rounds, folds, resamples).

    Returns
    -------
    int
        ``value`` as an int.

    Examples
    --------
    >>> check_count(3, "k"), check_count(0, "bootstrap", minimum=0)
    (3, 0)
    >>> check_count(2.5, "k")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: k=2.5: give an integer of at least 1
    """
    if not _is_int(value) or value < minimum:
        raise _bad(option, value, f": give an integer of at least {minimum}")
    return int(value)


# --- worker counts: --jobs / -j of tune, run, evaluate --shards; jobs= of make_executor and sharded evaluation ---

JOBS_CAP = 64  # worker processes allowed on any machine, whatever its cores: see jobs_limit


def jobs_limit() -> int:
    """The most worker processes a command may start: ``max(JOBS_CAP, cores)``, 64 on machines of up to 64 cores.

    Local workers (loky) are whole Python processes of ~100 MB each before any data, and CPU-bound tasks
    gain nothing past one per core; 64 still lets a small machine over-subscribe for I/O-bound tasks, and a
    machine of more cores may use them all. A Dask LocalCluster and a local Ray take the same count.

    Returns
    -------
    int
        The bound :func:`check_jobs` applies.

    Examples
    --------
    >>> jobs_limit() >= JOBS_CAP
    True
    """
    return max(JOBS_CAP, os.cpu_count() or 1)


def check_jobs(value: Any, option: str = "jobs") -> int:
    """``value`` as a number of workers from 1 to :func:`jobs_limit` (ConfigError otherwise), before any is started.

    Returns
    -------
    int
        The number of workers.

    Examples
    --------
    >>> check_jobs(2)
    2
    >>> check_jobs(100000)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: jobs=100000: give at most ... workers (max(64, the machine's ... cores))
    >>> check_jobs(0)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: jobs=0: give an integer of at least 1
    """
    count = check_count(value, option)
    limit = jobs_limit()
    if count > limit:
        raise _bad(
            option, value, f": give at most {limit} workers (max({JOBS_CAP}, the machine's {os.cpu_count()} cores))"
        )
    return count


def check_fraction(value: Any, option: str) -> float:
    """``value`` as a float strictly between 0 and 1 (test shares, attack sizes of a population).

    Returns
    -------
    float
        ``value`` as a float.

    Examples
    --------
    >>> check_fraction(0.2, "test_fraction")
    0.2
    >>> check_fraction(1.5, "split.test_fraction")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: split.test_fraction 1.5: give a number strictly between 0 and 1
    """
    if not _is_real(value) or not 0 < value < 1:
        raise _bad(option, value, ": give a number strictly between 0 and 1")
    return float(value)


def first_repeat(values: Sequence[Any]) -> int | None:
    """The position of the first of ``values`` equal to an earlier one, else None: the one rule of "listed
    twice" for grid axes and search-space choices. ``==`` makes 10 and 10.0 one value; True and 1 stay two (a
    flag and a count are different settings).

    Examples
    --------
    >>> first_repeat([10, 20, 10.0]), first_repeat([1, True]), first_repeat([])
    (2, None, None)
    """
    for j, value in enumerate(values):
        if any(v == value and isinstance(v, bool) == isinstance(value, bool) for v in values[:j]):
            return j
    return None


def check_distinct(names: Sequence[str], option: str) -> list[str]:
    """``names`` (a list option's entries) as a list, each once; a name given twice is a ConfigError.

    The studies key their systems, targets and estimators by name: a second entry would be dropped silently.

    Returns
    -------
    list of str
        ``names``, in their order.

    Examples
    --------
    >>> check_distinct(["random", "greedy"], "--targets")
    ['random', 'greedy']
    >>> check_distinct(["random", "greedy", "random"], "--targets")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: --targets random,greedy,random: 'random' is named twice; name each once
    """
    listed = list(names)
    twice = next((name for j, name in enumerate(listed) if name in listed[:j]), None)
    if twice is not None:
        raise _bad(option, ",".join(listed), f": {twice!r} is named twice; name each once")
    return listed


def check_number(value: Any, option: str, *, minimum: float | None = None, maximum: float | None = None) -> float:
    """``value`` as a finite float within ``[minimum, maximum]`` (either side open when None).

    Returns
    -------
    float
        ``value`` as a float.

    Examples
    --------
    >>> check_number(0.9, "rmse", minimum=0)
    0.9
    >>> check_number(-1, "rmse", minimum=0)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: rmse=-1: give a number of at least 0
    """
    if not _is_real(value) or not math.isfinite(value):
        raise _bad(option, value, ": give a finite number")
    if minimum is not None and value < minimum:
        raise _bad(option, value, f": give a number of at least {minimum:g}")
    if maximum is not None and value > maximum:
        raise _bad(option, value, f": give a number of at most {maximum:g}")
    return float(value)


def check_threshold(value: Any, low: float, high: float, option: str = "threshold", *, below: bool = False) -> float:
    """A relevance threshold λ (rating ≥ λ is positive) that lies on the scale ``low..high``.

    Outside the scale no rating (or every rating) is positive and every user is left
    out of the mean: the evaluation would be NaN over 0 users. ``below=True`` accepts
    a threshold under ``low`` (a scale inferred from held-out data, whose lowest
    grade may be missing: every rating is then positive).

    Returns
    -------
    float
        The threshold as a float.

    Examples
    --------
    >>> check_threshold(4, 1, 5), check_threshold(0.5, 2, 5, below=True)
    (4.0, 0.5)
    >>> check_threshold(-math.inf, 2, 5, below=True)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: threshold=-inf is outside the rating scale 2..5; ...
    >>> check_threshold(float("inf"), 1, 5, "split.threshold")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: split.threshold inf is outside the rating scale 1..5; pick a threshold on the scale
    """
    if not _is_real(value):  # the text '4' is not 'outside the rating scale 1..5'
        raise _bad(option, repr(value), f": give a number on the rating scale {low:g}..{high:g}")
    if not math.isfinite(value) or not ((below or low <= value) and value <= high):
        raise _bad(option, value, f" is outside the rating scale {low:g}..{high:g}; pick a threshold on the scale")
    return float(value)


def check_folds(folds: Any, per_user_counts: np.ndarray, option: str = "folds") -> int:
    """Per-user k-fold: at least 2 folds, and no more than the fewest ratings of a user.

    A user with fewer ratings than folds is tested in only some folds, so every fold
    beyond the fewest ratings changes the training share of those users and the
    results; receval refuses it (filter the users, or lower the folds).

    Returns
    -------
    int
        The number of folds.

    Examples
    --------
    >>> check_folds(5, np.array([10, 12, 7]))
    5
    >>> check_folds(200, np.array([10, 12, 7]))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: folds=200: 3 users have fewer than 200 ratings (the fewest: 7); use folds=7 or ...
    """
    folds = check_count(folds, option, minimum=2)
    counts = np.asarray(per_user_counts)
    counts = counts[counts > 0]
    fewest = int(counts.min()) if counts.size else 0
    if fewest < folds:
        short = int(np.count_nonzero(counts < folds))
        fewer = _bad(option, max(fewest, 2), "").message
        raise _bad(option, folds, f": {short} users have fewer than {folds} ratings (the fewest: {fewest}); use "
                   f"{fewer} or fewer, or filter out users with fewer ratings than folds")  # fmt: skip
    return folds


# Option names whose rule is known wherever they appear (command options, protocol options, split keys).
_COUNTS = {
    "k": 1,
    "rounds": 1,
    "n_per_round": 1,
    "refit_every": 1,
    "n_targets": 1,
    "n_resamples": 1,
    "folds": 2,
    "seeds": 1,  # a number of seeds (metaeval --seeds); a configuration's list of seeds is checked seed by seed
    "users": 1,
    "items": 1,
    "ratings": 1,
    "bootstrap": 0,
}
_FRACTIONS = ("test_fraction", "confidence")
_NONNEGATIVE = ("size", "filler", "min_train", "rmse")


def check_option(name: str, value: Any, option: str | None = None) -> Any:
    """Check ``value`` by the rule of the option ``name`` (counts, fractions, thresholds, seeds).

    Names without a rule pass unchanged; ``option`` is the name shown (default ``name``).

    Returns
    -------
    Any
        ``value`` as its rule returns it (an int, a float), or unchanged when ``name`` has no rule.

    Examples
    --------
    >>> check_option("rounds", 5), check_option("order", "random")
    (5, 'random')
    >>> check_option("rounds", 0, "protocol.rounds")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: protocol.rounds 0: give an integer of at least 1
    """
    shown = option or name
    if name in _COUNTS:
        return check_count(value, shown, minimum=_COUNTS[name])
    if name in _FRACTIONS:
        return check_fraction(value, shown)
    if name in _NONNEGATIVE:
        return check_number(value, shown, minimum=0)
    if name in ("threshold", "negative_threshold"):
        return check_number(value, shown)
    if name in ("seed", "sample_seed"):
        return check_seed(value, shown)
    if name == "jobs":
        return check_jobs(value, shown)
    if name == "cold_start":
        from receval.vocabulary import cold_start_policy

        return cold_start_policy(value)
    return value


def check_command_options(**values: Any) -> None:
    """Each keyword by :func:`check_option`, named as a parameter (``test_fraction=``: the command line shows its flag).

    ``None`` (an option not given) passes.

    Returns
    -------
    None
        Every keyword passes; the first that does not raises :class:`~receval.errors.ConfigError`.

    Examples
    --------
    >>> check_command_options(seed=3, k=10, threshold=None)
    >>> check_command_options(test_fraction=1.5)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: test_fraction=1.5: give a number strictly between 0 and 1
    """
    for name, value in values.items():
        if value is not None:
            check_option(name, value)


def available_memory() -> int:
    """Bytes of memory available to a new allocation (``MemAvailable``; physical memory without it).

    Returns
    -------
    int
        ``MemAvailable`` of ``/proc/meminfo`` in bytes where there is one, else the physical memory, else ``2**62``
        (no limit known).

    Examples
    --------
    >>> available_memory() > 0
    True
    """
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return int(os.sysconf("SC_PHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):  # no sysconf (Windows): no limit known
        return 1 << 62


def check_memory(n_bytes: float, what: str, fix: str, *, limit: int | None = None) -> None:
    """Refuse, before allocating, ``n_bytes`` for ``what`` when more than the available memory.

    Returns
    -------
    None
        The allocation fits (``limit``, default :func:`available_memory`); else :class:`~receval.errors.ConfigError`
        says how much is needed, how much is available, and ``fix``.

    Examples
    --------
    >>> check_memory(8e6, "a 1,000 x 1,000 similarity matrix", "filter the items", limit=10**9)
    >>> check_memory(7.2e9, "a 30k x 30k matrix", "filter the items", limit=4 * 10**9)
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: a 30k x 30k matrix needs 7.2 GB of memory and 4.0 GB are available; filter the items
    """
    free = available_memory() if limit is None else limit
    if n_bytes > free:
        raise ConfigError(f"{what} needs {_size(n_bytes)} of memory and {_size(free)} are available; {fix}")


def _size(n_bytes: float) -> str:
    """``7.2 GB``, ``38 kB``: bytes in the largest unit that keeps a leading digit."""
    for unit, scale in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n_bytes >= scale:
            return f"{n_bytes / scale:.1f} {unit}"
    return f"{int(n_bytes)} bytes"


def options_of(values: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every entry of ``values`` checked by :func:`check_option` (shown as ``prefix`` + name).

    Returns
    -------
    dict of str to Any
        The entries, each value as :func:`check_option` returns it, in the order given.

    Examples
    --------
    >>> options_of({"k": 10, "rounds": 3}, "protocol.")
    {'k': 10, 'rounds': 3}
    """
    return {name: check_option(name, value, prefix + name) for name, value in values.items()}


# --- time: durations and instants --------------------------------------------------

_DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")


def parse_duration(value: Any, option: str, *, fraction: bool = False) -> float:
    """A duration (``30d``, ``12h``, ``1w``, ``90m``, ``45s`` or a number of seconds) in seconds.

    With ``fraction=True`` a number strictly between 0 and 1 is a share of the data's time
    span and is returned as is (the caller scales it); every other value is seconds ≥ 0.

    Returns
    -------
    float
        Seconds, or the fraction itself.

    Examples
    --------
    >>> parse_duration("30d", "window"), parse_duration("12h", "gap"), parse_duration(0.25, "window", fraction=True)
    (2592000.0, 43200.0, 0.25)
    >>> parse_duration("30x", "window")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: window=30x: not a duration; write a number and a unit (s, m, h, d, w), e.g. 30d
    """
    if isinstance(value, str):
        text = value.strip().lower()
        found = _DURATION.fullmatch(text)
        if found:
            return float(found.group(1)) * _DURATION_UNITS[found.group(2)]
        try:
            value = float(text)
        except ValueError:
            raise _bad(option, value, ": not a duration; write a number and a unit (s, m, h, d, w), e.g. 30d") from None
    if isinstance(value, bool) or not _is_real(value) or not math.isfinite(value) or value < 0:
        raise _bad(option, value, ": not a duration; write a number and a unit (s, m, h, d, w), e.g. 30d")
    return float(value)


def parse_instant(value: Any, option: str = "at") -> int:
    """An instant as epoch seconds: an ISO date or date-time (UTC when no zone is given) or a number of seconds.

    Returns
    -------
    int
        Seconds since 1970-01-01 UTC.

    Examples
    --------
    >>> parse_instant("1998-01-01"), parse_instant(883612800), parse_instant("1998-01-01T00:00:00+01:00")
    (883612800, 883612800, 883609200)
    >>> parse_instant("next week")
    Traceback (most recent call last):
    ...
    receval.errors.ConfigError: at=next week: not a date; give an ISO date (1998-01-01) or epoch seconds
    """
    from datetime import UTC, datetime

    given = value  # as written, for the message
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text)  # checked below as a number given as a number is ('inf' was an OverflowError)
        except ValueError:
            pass
    if isinstance(value, str):
        try:
            moment = datetime.fromisoformat(text)
        except ValueError:
            raise _bad(option, value, ": not a date; give an ISO date (1998-01-01) or epoch seconds") from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return int(moment.timestamp())
    if isinstance(value, bool) or not _is_real(value) or not math.isfinite(value):
        raise _bad(option, given, ": not a date; give an ISO date (1998-01-01) or epoch seconds")
    if not abs(value) < 2.0**63:  # timestamps are int64 seconds
        raise _bad(option, given, ": outside the 64-bit range of epoch seconds (±9.2e18); give a date within it")
    return int(value)
