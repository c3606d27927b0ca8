"""Trials run with native thread pools limited to one thread; the pools are found once per set of imports."""

import sys
import types

from threadpoolctl import threadpool_info, threadpool_limits

from receval.experiment import executors


def _blas_threads(job, shared):
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_trial_sees_one_thread_and_the_limit_is_lifted_after():
    import numpy  # noqa: F401  (numpy's BLAS is a pool to limit)

    with threadpool_limits(limits=2, user_api="blas"):  # whatever OPENBLAS_NUM_THREADS says, two threads here
        before = _blas_threads(None, None)
        assert before and set(before) == {2}, before
        assert executors._limited(_blas_threads, None, None) == [1] * len(before)
        assert _blas_threads(None, None) == before


def test_controller_kept_until_an_import(monkeypatch):
    executors._limited(_blas_threads, None, None)
    first = executors._CONTROLLER[1]
    executors._limited(_blas_threads, None, None)
    assert executors._CONTROLLER[1] is first  # no import between the calls: the scan is not repeated
    monkeypatch.setitem(sys.modules, "receval_test_new_module", types.ModuleType("receval_test_new_module"))
    executors._limited(_blas_threads, None, None)
    assert executors._CONTROLLER[1] is not first  # a module arrived: its libraries may hold new pools
