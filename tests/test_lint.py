"""Types and lint: CI runs ``./dev lint`` (ruff and mypy) before the tests, and the package says it is typed.

mypy itself is not run here (it takes a minute from a cold cache); ``.ci/run`` fails when it
reports an error, which is what makes the ``py.typed`` marker honest (PEP 561).
"""

from __future__ import annotations

import importlib.resources
import subprocess
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_lints_before_the_tests_and_fails_on_findings():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    lint = next(i for i, line in enumerate(ci) if line.startswith("./dev lint"))
    assert lint < ci.index("./dev test")
    assert "exit 1" in ci[lint]  # a lint failure stops CI with a non-zero status


def test_dev_lint_runs_ruff_check_ruff_format_and_mypy_and_returns_their_failure(tmp_path):
    dev = (ROOT / "dev").read_text(encoding="utf-8")
    body = dev[dev.index("  lint)") : dev.index(";;", dev.index("  lint)"))]
    assert ".venv/bin/ruff check src tests benchmarks examples" in body and ".venv/bin/mypy" in body
    assert ".venv/bin/ruff format --check src tests benchmarks examples" in body
    # the same case arm with stand-ins for the tools (no warm-up running alongside: test_packaging's
    # test_dev_lint_on_a_new_venv_compiles_the_kernels_while_mypy_runs): either one failing makes the status 1
    for ruff, mypy, want in (("true", "true", 0), ("false", "true", 1), ("true", "false", 1)):
        arm = body.replace(".venv/bin/ruff", ruff).replace(".venv/bin/mypy", mypy).replace("  lint)", "")
        script = tmp_path / "lint.sh"
        script.write_text(f"set -euo pipefail\nwarming=''\n{arm}\n", encoding="utf-8")
        assert subprocess.run(["bash", str(script)], check=False).returncode == want


def test_mypy_checks_the_package_not_strict():
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["files"] == ["src/receval"] and not mypy.get("strict", False)


def test_py_typed_ships_with_the_package():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["receval"]
    assert importlib.resources.files("receval").joinpath("py.typed").is_file()
