"""Shared fixtures: caches in a temporary folder, the real data sets when present."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs the property tests on a fixed sequence of examples: a red CI then always means
# a change, and a local run (random examples) keeps exploring.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Libraries that write caches on first use (matplotlib, surprise, ranx, dask) must not
# touch the home folder during tests. numba keeps its compiled kernels beside the
# sources (__pycache__, ignored by git), so later runs and subprocesses skip compiling.
_CACHE = Path(tempfile.mkdtemp(prefix="receval-test-cache-"))
for _var in ("MPLCONFIGDIR", "SURPRISE_DATA_FOLDER", "IR_DATASETS_HOME", "XDG_CACHE_HOME"):
    os.environ.setdefault(_var, str(_CACHE / _var.lower()))
os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# numba's parallel kernels run on OpenMP threads, which by default spin for a while after each parallel loop:
# with a test worker on every core, the spinning takes the core from the other worker. Passive threads sleep
# (the kernel-heavy test files on two workers: a fifth to a quarter less CPU and wall time, measured).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


@pytest.fixture(autouse=True)
def _numba_settings_unchanged():
    """No test leaves a NUMBA_ variable changed for the tests after it (monkeypatch.setenv undoes itself
    first): numba reads them at every compile, so NUMBA_CACHE_DIR left set, say, would make every later
    kernel of this worker, and every process it starts, compile anew. (Other variables are not checked:
    libraries such as scikit-learn set some of their own when first imported.)"""

    def numba_settings() -> dict[str, str]:
        return {k: v for k, v in os.environ.items() if k.startswith("NUMBA_")}

    before = numba_settings()
    yield
    assert numba_settings() == before, f"the test changed numba's settings: {before} -> {numba_settings()}"


SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"


def shared_path(*parts: str) -> Path:
    """A path under ../shared/data, or a clean skip when it is absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"real data not available: {path}")
    return path


@pytest.fixture
def ml100k_dir() -> Path:
    return shared_path("ml-100k")


@pytest.fixture
def ml_latest_small_dir() -> Path:
    return shared_path("ml-latest-small")


@pytest.fixture
def cm100k_dir() -> Path:
    return shared_path("cm100k")


@pytest.fixture
def imports_numba():
    """``imports_numba(body)``: whether a fresh interpreter imports numba while it runs ``body`` (Python lines
    using ``np``, ``Interactions`` and ``train``, 60 users x 40 items of random ratings)."""
    import subprocess
    import sys

    def run(body: str) -> bool:
        code = (
            "import sys\n"
            "import numpy as np\n"
            "from receval import Interactions\n"
            "rng = np.random.default_rng(0)\n"
            "u, i = np.nonzero(rng.random((60, 40)) < 0.3)\n"
            "train = Interactions.from_arrays(u, i, rng.integers(1, 6, len(u)))\n"
            f"{body}\n"
            "print('numba' in sys.modules)\n"
        )
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
        return {"True": True, "False": False}[out.strip()]

    return run
