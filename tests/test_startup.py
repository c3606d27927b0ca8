"""Start-up imports only what a command needs (no timing: which modules are loaded).

Each check runs in a fresh interpreter (``sys.modules`` of this test process already
holds everything), and asks which heavy libraries are loaded after ``import receval``,
after ``receval --help`` and after a command's ``--help``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pandas", "numba", "scipy", "pyarrow", "matplotlib", "sklearn", "implicit", "rich", "dask", "surprise")

_REPORT = f"""
import json, sys
print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r}))))
"""


def _loaded_after(code: str) -> list[str]:
    """The heavy top-level packages in ``sys.modules`` after running ``code`` in a new interpreter."""
    result = subprocess.run(
        [sys.executable, "-c", code + _REPORT], capture_output=True, text=True, check=True, timeout=300
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _cli(*args: str) -> str:
    """Code that runs ``receval ARGS`` through the entry point's ``main`` and keeps its output off stdout."""
    return (
        "import contextlib, io\n"
        "from receval.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    status = main({list(args)!r})\n"
        "assert status == 0 and 'Usage' in out.getvalue(), (status, out.getvalue())\n"
    )


def test_import_receval_loads_no_heavy_library():
    assert _loaded_after("import receval") == []


def test_public_names_load_on_first_use():
    code = (
        "import receval\n"
        "from receval import Interactions, evaluate, evaluate_model\n"
        "import receval.evaluation\n"
        "assert receval.evaluate is evaluate and callable(evaluate), receval.evaluate\n"
        "assert evaluate_model.__module__ == 'receval.evaluation' and Interactions.__name__ == 'Interactions'\n"
    )
    loaded = _loaded_after(code)
    # the names are real (the child's assertions) and bring no heavy library: pandas waits for a DataFrame, scipy
    # for a metric that multiplies matrices (the evaluation's rows are receval.data.csr.CSR)
    assert not {"pandas", "scipy", "numba"} & set(loaded), loaded


def test_import_as_binds_every_submodule():
    # `import receval.X as m` binds the module X for every submodule, whichever was imported first
    code = (
        "import importlib, pkgutil, types, receval\n"
        "from receval import evaluate\n"
        "names = [m.name for m in pkgutil.walk_packages(receval.__path__, 'receval.') if '__main__' not in m.name]\n"
        "assert 'receval.evaluation' in names and len(names) > 50, names\n"
        "for name in names:\n"
        "    importlib.import_module(name)\n"
        "    parent, _, child = name.rpartition('.')\n"
        "    bound = getattr(importlib.import_module(parent), child)\n"
        "    assert isinstance(bound, types.ModuleType) and bound.__name__ == name, (name, bound)\n"
        "import receval.evaluation as m\n"
        "assert isinstance(m, types.ModuleType) and callable(m.to_rankings)\n"
        "assert receval.evaluate is evaluate is m.evaluate\n"
    )
    _loaded_after(code)  # check=True: the assertions hold in the child


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no_such_name"):
        import receval

        _ = receval.no_such_name


@pytest.mark.parametrize(
    "args",
    [("--help",), ("evaluate", "--help"), ("predict", "--help"), ("run", "--help"), ("metaeval", "--help")],
)
def test_help_loads_no_heavy_library(args):
    assert _loaded_after(_cli(*args)) == []


def test_command_index_is_what_the_modules_register():
    # the index is generated from COMMAND_MODULES (receval.cli.app.write_index): a command added or renamed fails here
    from receval.cli._index import COMMAND_INDEX
    from receval.cli.app import COMMAND_MODULES, EXAMPLES, command_index

    rewrite = "python -c 'from receval.cli.app import write_index; write_index()'"
    assert COMMAND_INDEX == command_index(), f"rewrite it: {rewrite}"
    assert set(COMMAND_INDEX.values()) == set(COMMAND_MODULES)
    assert {name.split()[0] for name in EXAMPLES} == {*COMMAND_INDEX, "version"}  # every command, listed by --help


def test_write_index_writes_the_index_back(tmp_path):
    import re

    import receval.cli._index
    from receval.cli.app import write_index

    written = Path(receval.cli._index.__file__).read_text()
    emptied = re.sub(r"(COMMAND_INDEX: dict\[str, str\] = \{\n).*?(^\}\n)", r"\1\2", written, flags=re.S | re.M)
    assert '"evaluate": "receval.cli.evaluate",' in written and '"evaluate"' not in emptied
    (tmp_path / "_index.py").write_text(emptied)
    write_index(tmp_path / "_index.py")
    assert (tmp_path / "_index.py").read_text() == written  # what is checked in is what write_index writes


_COMMAND_MODULES_LOADED = """
import json, sys
from receval.cli.app import COMMAND_MODULES
print(json.dumps(sorted(set(COMMAND_MODULES) & set(sys.modules))))
"""


def _command_modules_after(code: str) -> list[str]:
    """The modules of COMMAND_MODULES in ``sys.modules`` after running ``code`` in a new interpreter."""
    done = subprocess.run([sys.executable, "-c", code + _COMMAND_MODULES_LOADED], capture_output=True, text=True,
                          check=True, timeout=300)  # fmt: skip
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("args", "module"), [(("evaluate", "--help"), "receval.cli.evaluate"),
                                              (("-q", "predict", "--help"), "receval.cli.recommend"),
                                              (("data", "stats", "--help"), "receval.cli.data")])  # fmt: skip
def test_a_command_imports_only_its_own_module(args, module):
    # what the module itself imports, and nothing more: no other command's module is imported or built
    alone = _command_modules_after(f"import receval.cli.app, {module}")
    assert module in alone and len(alone) < 5, alone
    assert _command_modules_after(_cli(*args)) == alone


def test_help_and_unknown_commands_load_every_command_module():
    from receval.cli.app import COMMAND_MODULES

    assert _command_modules_after(_cli("--help")) == sorted(COMMAND_MODULES)
    typo = "import contextlib, io\nfrom receval.cli.app import main\nwith contextlib.redirect_stderr(io.StringIO()):\n"
    typo += (
        "    assert main(['evalute']) == 2\n"  # click's "No such command ... Did you mean 'evaluate'?" needs them all
    )
    assert _command_modules_after(typo) == sorted(COMMAND_MODULES)


def test_python_m_receval_help_loads_no_heavy_library():
    code = (
        "import contextlib, io, runpy, sys\n"
        "sys.argv = ['receval', '--help']\n"
        "with contextlib.redirect_stdout(io.StringIO()), contextlib.suppress(SystemExit):\n"
        "    runpy.run_module('receval', run_name='__main__')\n"
    )
    assert _loaded_after(code) == []


@pytest.mark.parametrize("kind", ["tsv", "trec"])
def test_evaluate_loads_only_its_own_path(tmp_path, kind):
    if kind == "tsv":
        truth, recs = tmp_path / "t.tsv", tmp_path / "r.tsv"
        truth.write_text("user\titem\trating\n1\ta\t5\n1\tb\t2\n2\ta\t4\n")
        recs.write_text("user\titem\tscore\n1\tb\t0.9\n1\ta\t0.1\n2\ta\t0.5\n")
    else:
        truth, recs = tmp_path / "t.qrels", tmp_path / "r.trec"
        truth.write_text("1 0 a 5\n1 0 b 2\n2 0 a 4\n")
        recs.write_text("1 Q0 b 1 0.9 x\n1 Q0 a 2 0.1 x\n2 Q0 a 1 0.5 x\n")
    code = (
        "import contextlib, io, json, math\n"
        "from receval.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    status = main(['evaluate', '--truth', {str(truth)!r}, '--recs', {str(recs)!r},"
        " '--metrics', 'ndcg@10,precision@1', '--threshold', '4', '--json'])\n"
        "got = json.loads(out.getvalue())\n"
        # user 1 ranks its one relevant item second (DCG 1/log2(3)), user 2 first: nDCG (1/log2(3) + 1) / 2
        "assert status == 0 and got['precision@1'] == 0.5\n"
        "assert math.isclose(got['ndcg@10'], (1 / math.log2(3) + 1) / 2)\n"
    )
    loaded = _loaded_after(code)
    # ranking metrics need no compiled kernel (numba unimported) and no scipy (the truth's rows are
    # receval.data.csr.CSR: scipy.sparse's import is a sixth of the command); Arrow tables go to the metrics
    # without pandas
    assert not {"pandas", "numba", "scipy", "matplotlib", "sklearn", "implicit", "rich"} & set(loaded), loaded
    assert "pyarrow" in loaded  # the check above is not vacuous: the files were read, and the values are right


def test_evaluate_per_user_table_still_writes(tmp_path):
    """The per-user table is a DataFrame built on demand: asking for it loads pandas and writes it."""
    truth, recs, out = tmp_path / "t.tsv", tmp_path / "r.tsv", tmp_path / "per_user.csv"
    truth.write_text("user\titem\trating\n1\ta\t5\n2\ta\t4\n")
    recs.write_text("user\titem\tscore\n1\ta\t0.9\n2\tb\t0.5\n")
    code = (
        "import contextlib, io\n"
        "from receval.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['evaluate', '--truth', {str(truth)!r}, '--recs', {str(recs)!r},"
        f" '--metrics', 'precision@1', '--per-user', {str(out)!r}]) == 0\n"
    )
    assert "pandas" in _loaded_after(code)
    assert out.read_text().splitlines() == ["user,precision@1", "1,1.0", "2,0.0"]


def test_loading_ratings_infers_the_scale_without_numpy_ma(tmp_path):
    """The rating scale comes from a sort of the ratings: ``np.unique`` would import numpy.ma (25-35 ms of a
    50 ms load) for its NaN handling, and the reader has already refused non-finite ratings."""
    (tmp_path / "r.tsv").write_text("user\titem\trating\n1\t1\t4.5\n1\t2\t1\n2\t1\t3\n")
    code = (
        "import sys\n"
        "from receval.data.loaders import load\n"
        f"scale = load({str(tmp_path / 'r.tsv')!r}).scale\n"
        "print(scale.low, scale.high, scale.step, 'numpy.ma' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    assert result.stdout.split() == ["1.0", "4.5", "0.5", "False"]


def test_predict_on_number_ids_loads_no_pandas(tmp_path):
    """Numbers in, numbers out: the numeric reader, the kNN kernels and the writer need no pandas."""
    rows = [(u, i, 1 + (u * i) % 5) for u in range(1, 9) for i in range(1, 7) if (u + i) % 3]
    (tmp_path / "train.tsv").write_text("user\titem\trating\n" + "".join(f"{u}\t{i}\t{r}\n" for u, i, r in rows))
    (tmp_path / "test.tsv").write_text("user\titem\trating\n1\t3\t4\n2\t2\t5\n")
    out = tmp_path / "pred.tsv"
    code = (
        "import contextlib, io\n"
        "from receval.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    assert main(['predict', '--train', {str(tmp_path / 'train.tsv')!r}, '--test',"
        f" {str(tmp_path / 'test.tsv')!r}, '--algorithm', 'item-knn', '--param', 'k=3', '--out', {str(out)!r}]) == 0\n"
    )
    loaded = _loaded_after(code)
    # small: the similarities and predictions of numpy (the same bits as the kernels), no numba, no scipy
    assert not {"pandas", "numba", "scipy"} & set(loaded), loaded
    lines = out.read_text().splitlines()
    assert lines[0] == "user\titem\trating\tprediction" and [line.split("\t")[:3] for line in lines[1:]] == [
        ["1", "3", "4.0"],
        ["2", "2", "5.0"],
    ]


_MALLINFO = """
import atexit, ctypes, json, os, sys
import numpy as np

REPORT = sys.argv[1]

class Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
                                                       "fsmblks", "uordblks", "fordblks", "keepcost")]

def report():
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = Mallinfo2
    before = libc.mallinfo2().hblkhd
    block = np.ones(1 << 20)  # 8 MB: glibc's default maps it on its own; tuned, it comes from the heap
    mapped = libc.mallinfo2().hblkhd - before
    with open(REPORT, "w") as out:
        json.dump({"mapped": mapped, "block": block.nbytes, "environ": dict(os.environ)}, out)

atexit.register(report)  # runs after entry()'s sys.exit
sys.argv = ["receval", *sys.argv[2:]]  # sys.argv[1] is the report's file
from receval.cli.app import entry
entry()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator statistics")
@pytest.mark.parametrize(
    ("args", "tuned"),
    [
        (["-q", "evaluate", "--truth", "missing.csv", "--recs", "r.csv", "--metrics", "mrr"], True),
        (["data", "stats", "missing.csv", "--format", "csv"], False),
        (["run", "missing.toml"], False),
    ],
)
@pytest.mark.parametrize("opt_out", [False, True])
def test_only_tuned_commands_get_the_allocator_tuning_and_no_environment_changes(tmp_path, args, tuned, opt_out):
    env = {key: value for key, value in os.environ.items() if key != "NUMPY_MADVISE_HUGEPAGE"}
    if opt_out:
        env["RECEVAL_MALLOC_TUNING"] = "0"
    out = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-c", _MALLINFO, str(out), *args], env=env, capture_output=True, text=True,
                          cwd=tmp_path, timeout=300)  # fmt: skip
    assert done.returncode == 2, done.stderr  # each command fails on its missing file, after the tuning
    report = json.loads(out.read_text())
    assert report["environ"] == env  # nothing set that a worker would inherit
    expect_heap = tuned and not opt_out
    assert (report["mapped"] == 0) is expect_heap, report["mapped"]
    if not expect_heap:
        assert report["mapped"] >= report["block"]


_THRESHOLDS = """
import atexit, gc, json, sys
before = gc.get_threshold()  # the interpreter's defaults
atexit.register(lambda: print(json.dumps([before, gc.get_threshold()]), file=sys.stderr))  # after entry()'s exit
sys.argv = ["receval", *sys.argv[1:]]
from receval.cli.app import entry
entry()
"""


@pytest.mark.parametrize(
    ("args", "tuned"),
    [
        (["-q", "evaluate", "--truth", "missing.csv", "--recs", "r.csv", "--metrics", "mrr"], True),
        (["predict", "--train", "missing.tsv", "--test", "t.tsv", "--algorithm", "item-knn", "--out", "p.tsv"], True),
        (["data", "stats", "missing.csv", "--format", "csv"], False),
        (["run", "missing.toml"], False),
    ],
)
def test_only_one_shot_commands_get_the_collector_tuning(tmp_path, args, tuned):
    from receval.cli._process import COLLECTOR_THRESHOLDS

    done = subprocess.run([sys.executable, "-c", _THRESHOLDS, *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=300)  # fmt: skip
    assert done.returncode == 2, done.stderr  # each command fails on its missing file, after the tuning
    before, after = (tuple(t) for t in json.loads(done.stderr.strip().splitlines()[-1]))
    assert before != COLLECTOR_THRESHOLDS  # the check below can fail
    assert after == (COLLECTOR_THRESHOLDS if tuned else before), (before, after)


@pytest.mark.parametrize(("fmt", "force", "rich"), [("table", None, False), ("tsv", None, False),
                                                     ("table", "1", True)])  # fmt: skip
def test_a_table_printed_to_a_pipe_does_not_import_rich(tmp_path, monkeypatch, fmt, force, rich):
    """Boxes are drawn on terminals only: elsewhere the text is written as is, without rich (20 ms to import)."""
    data = tmp_path / "r.csv"
    data.write_text("user,item,rating\n1,a,5\n1,b,2\n2,a,4\n")
    code = (
        "import contextlib, io\n"
        "from receval.cli.app import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        f"    status = main(['data', 'stats', {str(data)!r}, '--output', {fmt!r}])\n"
        "assert status == 0 and 'users' in out.getvalue(), out.getvalue()\n"
    )
    monkeypatch.delenv("TTY_COMPATIBLE", raising=False)
    if force is None:
        monkeypatch.delenv("FORCE_COLOR", raising=False)
    else:  # rich draws for a forced terminal: it is imported then
        monkeypatch.setenv("FORCE_COLOR", force)
    assert ("rich" in _loaded_after(code)) is rich


def test_experiment_commands_load_scipy_statistics_only_for_a_study_that_needs_them(tmp_path):
    """A refused ``receval run`` (its configuration missing) and ``receval check`` of a one-shot grid import the
    runner and its validation, but not scipy.stats or scipy.optimize (a second of start-up): only the sampled
    study's checks and the comparisons at a run's end use them."""
    config = tmp_path / "exp.toml"
    config.write_text(
        'name = "x"\nseeds = 5\nmetrics = ["precision@5"]\n[datasets.d]\npath = "ratings.csv"\nformat = "csv"\n'
        '[split]\nmethod = "holdout"\n[protocol]\nname = "one-shot"\ncold_start = "empty"\n'
        '[recommenders.pop]\nalgorithm = "popularity"\n'
    )
    (tmp_path / "ratings.csv").write_text(
        "user,item,rating\n" + "".join(f"{u},{i},{1 + (u * i) % 5}\n" for u in range(20) for i in range(8))
    )
    code = (
        "import contextlib, io, sys\n"
        "from receval.cli.app import main\n"
        "with contextlib.redirect_stderr(io.StringIO()) as err, contextlib.redirect_stdout(io.StringIO()):\n"
        f"    refused = main(['run', {str(tmp_path / 'missing.toml')!r}])\n"
        f"    checked = main(['check', {str(config)!r}])\n"
        "assert (refused, checked) == (2, 0), (refused, checked, err.getvalue())\n"
        "assert 'receval.experiment.validation' in sys.modules\n"
        "print([m for m in ('scipy.stats', 'scipy.optimize') if m in sys.modules])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"
