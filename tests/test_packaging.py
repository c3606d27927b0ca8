"""Packaging and releases: extras, the error naming a missing extra, version, changelog, citation, docs workflow.

The build itself (``python -m build``, the wheel installed in a fresh venv running
``receval demo``) is a step of ``.ci/run``: it needs minutes and the package index.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

import receval
from receval.data.interactions import Interactions
from receval.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CHANGELOG = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
RELEASE = re.compile(r"^## \[(\d+\.\d+\.\d+)\] - (\d{4}-\d{2}-\d{2})$", re.M)


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[\[<>=!~; ]", r, maxsplit=1)[0].lower() for r in requirements}


def test_an_extra_per_optional_integration():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"surprise", "dask", "ray", "docs", "all", "test"} <= set(extras)
    assert _names(extras["surprise"]) == {"scikit-surprise"}
    assert _names(extras["dask"]) == {"dask"} and "distributed" in extras["dask"][0]
    assert _names(extras["ray"]) == {"ray"}
    assert _names(extras["tune"]) == {"optuna"} and _names(extras["slim"]) == {"scikit-learn"}
    assert extras["all"] == ["receval[surprise,dask,ray,tune,slim]"]
    assert {"mkdocs", "mkdocs-material", "mkdocstrings"} <= _names(extras["docs"])
    # optional integrations stay optional; the test extra brings every one of them
    runtime = _names(PYPROJECT["project"]["dependencies"])
    optional = _names(extras["surprise"] + extras["dask"] + extras["ray"] + extras["docs"])
    assert not runtime & optional
    assert optional <= _names(extras["test"])


@pytest.mark.parametrize(
    ("module", "make_error", "extra"),
    [
        ("surprise", lambda: _fit_surprise(), "receval[surprise]"),
        ("distributed", lambda: _start_executor("dask"), "receval[dask]"),
        ("ray", lambda: _start_executor("ray"), "receval[ray]"),
    ],
)
def test_missing_extra_is_named(module, make_error, extra, monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # `import module` now raises ImportError
    with pytest.raises(ConfigError, match=re.escape(f"pip install '{extra}'")):
        make_error()


def _fit_surprise():
    from receval.recommenders import make

    train = Interactions.from_arrays([0, 0, 1], [0, 1, 0], [5, 3, 4])
    make("surprise:SVD").fit(train)


def _start_executor(name: str):
    from receval.experiment.executors import make_executor

    make_executor(name, jobs=1).start()


def test_version_from_the_git_tag():
    assert PYPROJECT["project"]["dynamic"] == ["version"] and "version" not in PYPROJECT["project"]
    assert any(r.startswith("setuptools-scm") for r in PYPROJECT["build-system"]["requires"])
    fallback = PYPROJECT["tool"]["setuptools_scm"]["fallback_version"]
    assert fallback == RELEASE.findall(CHANGELOG)[-1][0]  # the first release
    assert receval.__version__ == version("receval")


def test_changelog_keeps_a_changelog():
    assert CHANGELOG.startswith("# Changelog\n")
    assert "## [Unreleased]" in CHANGELOG
    releases = RELEASE.findall(CHANGELOG)
    assert releases, "no released version"
    versions = [tuple(map(int, v.split("."))) for v, _ in releases]
    assert versions == sorted(versions, reverse=True), "newest release first"
    dates = [dt.date.fromisoformat(d) for _, d in releases]
    assert dates == sorted(dates, reverse=True)
    sections = set(re.findall(r"^### (.+)$", CHANGELOG, re.M))
    assert sections <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}, sections
    for v, _ in releases:
        assert re.search(rf"^\[{re.escape(v)}\]: https://\S+$", CHANGELOG, re.M), f"no link for {v}"
    assert re.search(r"^\[Unreleased\]: https://\S+$", CHANGELOG, re.M)


def test_citation_cff_matches_the_latest_release():
    yaml = pytest.importorskip("yaml")
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert cff["cff-version"] == "1.2.0"
    assert {"message", "title", "authors"} <= set(cff) and cff["authors"]
    assert all("name" in a or "family-names" in a for a in cff["authors"])
    latest_version, latest_date = RELEASE.findall(CHANGELOG)[0]
    assert str(cff["version"]) == latest_version
    assert str(cff["date-released"]) == latest_date
    assert cff["license"] == PYPROJECT["project"]["license"]


def test_docs_publish_workflow():
    yaml = pytest.importorskip("yaml")
    workflow = yaml.safe_load((ROOT / ".github" / "workflows" / "docs.yml").read_text(encoding="utf-8"))
    steps = workflow["jobs"]["build"]["steps"]
    runs = " ".join(s.get("run", "") for s in steps)
    assert 'pip install ".[docs]"' in runs and "mkdocs build --strict" in runs
    assert any(s.get("uses", "").startswith("actions/upload-pages-artifact") for s in steps)
    assert workflow["jobs"]["deploy"]["steps"][0]["uses"].startswith("actions/deploy-pages")
    assert workflow["permissions"]["pages"] == "write"
    releasing = (ROOT / "docs" / "releasing.md").read_text(encoding="utf-8")
    assert ".github/workflows/docs.yml" in releasing and "mkdocs build --strict" in releasing


def test_ci_runs_the_readme_test_command_with_the_package_smoke_test_alongside(tmp_path):
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "./dev test     # run the whole test suite" in readme
    assert "\n./dev test\n" in ci
    assert "-m build" in ci and "venv" in ci and "demo --seed 1" in ci
    # the steps from the packaging check's start, with stand-ins for it and for ./dev: CI fails when
    # either fails, with the tests' status first, and prints what the packaging check said
    steps = ci[ci.index("package_log=$(mktemp") :]
    for lint, tests, package, want in (
        (0, 0, 0, 0), (0, 0, 1, 1), (0, 3, 0, 3), (0, 3, 1, 3), (1, 0, 0, 1), (0, 5, 0, 1),
    ):  # fmt: skip
        stand_ins = (
            f"package_smoke() {{ sleep 0.2; echo packaging said this; return {package}; }}\n"
            f"dev() {{ case $1 in lint) return {lint};; test) return {tests};; esac; }}\n"
        )
        script = tmp_path / "ci.sh"
        script.write_text("set -uo pipefail\n" + stand_ins + steps.replace("./dev ", "dev "), encoding="utf-8")
        done = subprocess.run(["bash", str(script)], capture_output=True, text=True, check=False)
        assert done.returncode == want, (lint, tests, package, done.stdout)
        assert "packaging said this" in done.stdout


def _stand_in(path: Path, body: str) -> None:
    path.write_text("#!/usr/bin/env bash\n" + body, encoding="utf-8")
    path.chmod(0o755)


INSTALL = ["python -m pip", "python -m pip"]


@pytest.mark.parametrize("demo_status", [0, 3])
def test_dev_lint_on_a_new_venv_compiles_the_kernels_while_mypy_runs(tmp_path, demo_status):
    """``./dev`` on a new ``.venv``, with stand-ins for its programs: lint runs while the kernels compile
    (the warm-up's demo waits for mypy to have started), returns only once the warm-up has ended, and
    fails when the warm-up fails, leaving no stamp so that the next call sets up again. Whatever
    PYTHONDONTWRITEBYTECODE says, what it runs keeps its bytecode in ``.venv/pycache``."""
    root = tmp_path / "repo"
    bin_ = root / ".venv" / "bin"
    bin_.mkdir(parents=True)
    (root / "dev").write_bytes((ROOT / "dev").read_bytes())
    (root / "dev").chmod(0o755)
    (root / "pyproject.toml").write_text("[project]\nname = 'stand-in'\n", encoding="utf-8")
    log = tmp_path / "log"
    started = tmp_path / "mypy-started"
    _stand_in(bin_ / "python", f'[ "$1" = - ] && cat > /dev/null; echo "python $1 ${{2%% *}}" >> {log}\n')
    _stand_in(bin_ / "ruff", f"echo ruff >> {log}\n")
    _stand_in(bin_ / "mypy", f"touch {started}; echo mypy >> {log}\n")
    _stand_in(
        bin_ / "receval",
        f"for _ in $(seq 100); do [ -e {started} ] && break; sleep 0.1; done\n"
        f'[ -e {started} ] || {{ echo "mypy never started" >&2; exit 4; }}\n'
        f'sleep 0.5; echo "demo $PYTHONPYCACHEPREFIX ${{PYTHONDONTWRITEBYTECODE-unset}}" >> {log}\n'
        f"exit {demo_status}\n",
    )
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # as container images set it: bytecode is kept anyway
    done = subprocess.run([str(root / "dev"), "lint"], capture_output=True, text=True, timeout=60, check=False, env=env)
    steps = log.read_text(encoding="utf-8").split("\n")
    demo = f"demo {root / '.venv' / 'pycache'} unset"
    stamp = root / ".venv" / ".receval-installed"
    if demo_status == 0:
        assert done.returncode == 0, done.stderr
        assert steps == [*INSTALL, "ruff", "ruff", "mypy", demo, "python - ", ""]
        assert stamp.is_file()
        again = subprocess.run([str(root / "dev"), "lint"], capture_output=True, text=True, timeout=60, check=False)
        assert again.returncode == 0 and log.read_text(encoding="utf-8").split("\n")[len(steps) - 1 :] == [
            "ruff", "ruff", "mypy", "",
        ]  # fmt: skip
    else:
        assert done.returncode == 1 and "mypy never started" not in done.stderr
        assert steps == [*INSTALL, "ruff", "ruff", "mypy", demo, ""]
        assert not stamp.exists()
