"""The order of layers (``receval._layers.LAYERS``) holds, and no module imports itself back.

Every module under ``src/receval`` is parsed with :mod:`ast`; its imports are read
wherever they are (module level, inside functions and methods, under ``try``):
``import receval.x``, ``from receval import x``, ``from receval.x import y``, relative
imports, and modules named by string constants in a module that calls
``importlib.import_module`` (the registries that load their built-ins by name). Imports
under ``if TYPE_CHECKING:`` are annotations only: they obey the layers but never run,
so they do not form cycles.

Two rules, each with a self-test on planted sources:

- a module imports only from its own unit and from lower layers (siblings in one layer
  never import each other);
- the import graph has no cycle (a lazy function-level import that hides one still
  counts).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from receval._layers import LAYERS, layer_of

SRC = Path(__file__).resolve().parents[1] / "src"

# Known violations left to their owners. Each entry names the owner; the test fails when
# an entry is no longer a violation, so that the list only shrinks. The goal is an empty list.
ALLOWED: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Import:
    source: str
    target: str
    line: int
    typing_only: bool


def read_package(root: Path = SRC / "receval") -> dict[str, tuple[str, bool]]:
    """Module name -> (source text, is a package ``__init__``) for every ``.py`` under ``root``."""
    modules = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root.parent).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        modules[name] = (path.read_text(encoding="utf-8"), is_package)
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _resolve(name: str, known: Iterable[str]) -> str | None:
    """The longest known module that ``name`` (a dotted name) is or lies inside."""
    parts = name.split(".")
    known = set(known)
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in known:
            return candidate
    return None


def imports_of(module: str, source: str, is_package: bool, known: set[str]) -> list[Import]:
    """Every import of a receval module in ``source`` (the module ``module``)."""
    tree = ast.parse(source, filename=module)
    found: list[Import] = []
    dynamic = any(
        isinstance(node, ast.Call)
        and (getattr(node.func, "attr", None) or getattr(node.func, "id", None)) in ("import_module", "__import__")
        for node in ast.walk(tree)
    )

    def add(target: str | None, node: ast.AST, typing_only: bool) -> None:
        if target is not None and target != module:
            found.append(Import(module, target, node.lineno, typing_only))

    def visit(node: ast.AST, typing_only: bool) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, True)
            for child in node.orelse:
                visit(child, typing_only)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                add(_resolve(alias.name, known), node, typing_only)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                add(sub if sub in known else _resolve(base, known), node, typing_only)
        elif dynamic and isinstance(node, ast.Constant) and isinstance(node.value, str):
            name = node.value.split(":")[0]
            if name in known and node.value.count(":") <= 1:
                add(name, node, typing_only)
        for child in ast.iter_child_nodes(node):
            visit(child, typing_only)

    visit(tree, False)
    return found


def unit_of(module: str) -> str:
    """``receval.metrics.ranking`` -> ``metrics``; the root package is the unit ``receval``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def layer_violations(imports: Iterable[Import], layer=layer_of) -> set[str]:
    """``"a -> b"`` for each import of a module in a higher layer or a sibling unit."""
    bad = set()
    for imp in imports:
        src, dst = unit_of(imp.source), unit_of(imp.target)
        if src != dst and layer(dst) >= layer(src):
            bad.add(f"{imp.source} -> {imp.target}")
    return bad


def cycles(imports: Iterable[Import]) -> set[str]:
    """``"cycle through a, b, c: a -> b -> a"`` for each strongly connected set of modules (runtime imports)."""
    graph: dict[str, set[str]] = {}
    for imp in imports:
        if not imp.typing_only:
            graph.setdefault(imp.source, set()).add(imp.target)
            graph.setdefault(imp.target, set())
    # Tarjan's strongly connected components, iterative
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(component)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(graph[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return {f"cycle through {', '.join(sorted(c))}: " + " -> ".join(_one_cycle(sorted(c), graph)) for c in components}


def _one_cycle(component: list[str], graph: Mapping[str, set[str]]) -> list[str]:
    """A shortest cycle through the first member of a strongly connected component."""
    members = set(component)
    start = component[0]
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    return paths[node] + [start]
                if child not in paths:
                    paths[child] = paths[node] + [child]
                    nxt.append(child)
        frontier = nxt
    raise AssertionError(f"not a cycle: {component}")  # a strongly connected component always has one


def check(modules: Mapping[str, tuple[str, bool]], layer=layer_of) -> set[str]:
    """All violations of both rules in ``modules`` (name -> (source, is package))."""
    known = set(modules)
    imports = [imp for name, (src, pkg) in modules.items() for imp in imports_of(name, src, pkg, known)]
    return layer_violations(imports, layer) | cycles(imports)


# ------------------------------------------------------------------ the real package


def test_every_unit_has_a_layer():
    units = {unit_of(name) for name in read_package()}
    listed = [u for layer in LAYERS for u in layer]
    assert len(listed) == len(set(listed)), "a unit listed twice in LAYERS"
    assert units - set(listed) == set(), "units missing from receval._layers.LAYERS"
    assert set(listed) - units == set(), "LAYERS names units that do not exist"


def test_layers_hold_and_no_cycles():
    found = check(read_package())
    new = found - ALLOWED
    assert not new, "imports against receval._layers.LAYERS or import cycles:\n" + "\n".join(sorted(new))
    stale = ALLOWED - found
    assert not stale, "fixed, remove from ALLOWED in tests/test_layers.py:\n" + "\n".join(sorted(stale))


# ------------------------------------------------------------------ the checker itself

_PLANTED = {
    "receval": ("from receval.evaluation import evaluate\n", True),
    "receval.errors": ("", False),
    "receval.data": ("from .interactions import Interactions\n", True),
    "receval.data.interactions": ("from receval.errors import DataError\n", False),
    "receval.recommenders": ("", True),
    "receval.recommenders.knn": ("import numpy as np\nfrom receval.data import interactions\n", False),
    "receval.metrics": ("from . import ranking\n", True),
    "receval.metrics.ranking": ("from receval.data.interactions import Interactions\n", False),
    "receval.evaluation": ("from receval.metrics.ranking import ndcg\n", False),
}


def _planted(**changes: str) -> dict[str, tuple[str, bool]]:
    modules = dict(_PLANTED)
    for name, source in changes.items():
        dotted = name.replace("__", ".")
        modules[dotted] = (source, modules.get(dotted, ("", False))[1])
    return modules


def test_checker_clean_planted_package():
    assert check(_PLANTED) == set()


@pytest.mark.parametrize(
    "source",
    [
        "from receval.recommenders.knn import ItemKNN\n",  # a sibling, module level
        "import receval.recommenders.knn\n",
        "from receval import recommenders\n",
        "from ..recommenders import knn\n",  # relative
        "def f():\n    from receval.evaluation import evaluate\n",  # higher layer, function level
        "class M:\n    def f(self):\n        import receval.evaluation as e\n",
        "try:\n    from receval.evaluation import evaluate\nexcept ImportError:\n    pass\n",
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from receval.evaluation import evaluate\n",
    ],
)
def test_checker_catches_an_import_from_above(source):
    found = check(_planted(receval__metrics__ranking=source))
    assert any(v.startswith("receval.metrics.ranking -> ") for v in found), found


def test_checker_catches_a_lazy_cycle_within_a_unit():
    source = "def f():\n    from receval.metrics import ndcg\n"  # metrics/__init__ imports ranking
    found = check(_planted(receval__metrics__ranking=source))
    assert found == {
        "cycle through receval.metrics, receval.metrics.ranking: "
        "receval.metrics -> receval.metrics.ranking -> receval.metrics"
    }


def test_checker_catches_a_cycle_through_import_module():
    registry = (
        "import importlib\n"
        "BUILTIN = ('receval.metrics.ranking',)\n"
        "def load():\n"
        "    importlib.import_module(BUILTIN[0])\n"
    )
    ranking = "from receval.metrics.registry import register\n"
    modules = _planted(receval__metrics__registry=registry, receval__metrics__ranking=ranking)
    modules["receval.metrics"] = ("", True)
    assert check(modules) == {
        "cycle through receval.metrics.ranking, receval.metrics.registry: "
        "receval.metrics.ranking -> receval.metrics.registry -> receval.metrics.ranking"
    }


def test_checker_ignores_annotation_only_cycles_and_names_a_unit_without_layer():
    typed = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from receval.metrics import ranking\n"
    assert check(_planted(receval__metrics__ranking=typed)) == set()
    with pytest.raises(KeyError, match="'plugins' is in no layer"):
        check(_planted(receval__plugins="from receval.errors import DataError\n"))


def test_checker_layers_order_is_strict():
    # evaluation above metrics in the real order; a made-up order with metrics on top flips it
    flipped = {"evaluation": 1, "metrics": 2, "recommenders": 2, "data": 0, "errors": 0, "receval": 3}
    found = check(_PLANTED, layer=flipped.__getitem__)
    assert "receval.evaluation -> receval.metrics.ranking" in found
