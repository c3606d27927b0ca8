"""Griffe extension for the API reference: Sphinx roles become links, bare doctests become code.

receval's docstrings are written for ``help()`` and for readers of reStructuredText:
``:func:`evaluate```, ``:class:`~receval.errors.DataError```. mkdocstrings renders
docstrings as Markdown, where such roles would show as raw text. After griffe has loaded
the package, this extension rewrites every role as an autorefs cross-reference, resolved
in the docstring's own scope as Sphinx resolves it: a link where the target is on the
site, the name in code elsewhere (an ``optional`` reference, never a broken link).
Doctest lines outside an ``Examples`` section are fenced as code, so that their output
(``[[8, -1], [9, 7]]``) is not read as Markdown (a reference, a list).

mkdocs.yml names this file in mkdocstrings' ``extensions`` option.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterator
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?P<role>func|class|meth|mod|attr|data|exc|obj|const):`(?P<body>[^`]+)`")
_TITLED = re.compile(r"^(?P<title>.+?)\s*<(?P<target>[^<>]+)>$")
_CALLABLE = {"func", "meth"}  # shown with "()" as Sphinx does
_RULE = re.compile(r"^\s*-{3,}\s*$")
_EXAMPLES = {"Example", "Examples"}  # griffe's numpy parser makes these sections' doctests code itself
_FENCE = "```"


def _reference(role: str, body: str, resolve: Callable[[str], str]) -> str:
    """The autorefs cross-reference of one role (``body`` is what is between the backticks)."""
    titled = _TITLED.match(body)
    if titled:
        title, target = titled["title"], titled["target"]
    else:
        target = body.lstrip("~!")
        title = target.rsplit(".", 1)[-1] if body.startswith("~") else target
        if role in _CALLABLE:
            title += "()"
    identifier = resolve(target)
    return f'<autoref identifier="{html.escape(identifier)}" optional><code>{html.escape(title)}</code></autoref>'


def roles_to_references(text: str, resolve: Callable[[str], str]) -> str:
    """``text`` with every Sphinx role made a cross-reference; ``resolve`` maps a name to its full path.

    Examples
    --------
    >>> full = {"DataError": "receval.errors.DataError"}
    >>> roles_to_references("Raises :class:`DataError`.", lambda name: full.get(name, name))
    'Raises <autoref identifier="receval.errors.DataError" optional><code>DataError</code></autoref>.'
    >>> roles_to_references(":func:`~receval.split.holdout`", str)
    '<autoref identifier="receval.split.holdout" optional><code>holdout()</code></autoref>'
    """
    return ROLE.sub(lambda m: _reference(m["role"], m["body"], resolve), text)


def fence_doctests(text: str) -> str:
    """``text`` with each run of doctest lines (``>>>`` to the next blank line) outside an Examples section fenced.

    Examples
    --------
    >>> fence_doctests("Pads with -1:\\n\\n>>> f()\\n[[1, -1]]\\n\\nThen more.").split("\\n")
    ['Pads with -1:', '', '```pycon', '>>> f()', '[[1, -1]]', '```', '', 'Then more.']
    """
    lines = text.split("\n")
    out: list[str] = []
    section, indent, fenced, in_doctest = "", "", False, False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not fenced and not in_doctest and i + 1 < len(lines) and _RULE.match(lines[i + 1]) and stripped:
            section = stripped
        if stripped.startswith(_FENCE):
            fenced = not fenced
        if in_doctest and not stripped:
            out.append(indent + _FENCE)
            in_doctest = False
        elif not in_doctest and not fenced and stripped.startswith(">>>") and section not in _EXAMPLES:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(indent + _FENCE + "pycon")
            in_doctest = True
        out.append(line)
    if in_doctest:
        out.append(indent + _FENCE)
    return "\n".join(out)


def _objects(obj: griffe.Object) -> Iterator[griffe.Object]:
    yield obj
    for member in obj.members.values():
        if not member.is_alias:
            yield from _objects(member)  # type: ignore[arg-type]


def _resolver(obj: griffe.Object, pkg: griffe.Module) -> Callable[[str], str]:
    """Name -> full path in ``obj``'s scope; a re-exported name gives the path where it is defined (and shown)."""

    def resolve(name: str) -> str:
        if name.startswith(f"{pkg.path}."):
            return canonical(name, pkg)
        head, _, rest = name.partition(".")
        try:
            full = obj.resolve(head)
        except griffe.NameResolutionError:
            return name
        full = f"{full}.{rest}" if rest else full
        return canonical(full, pkg)

    return resolve


def canonical(path: str, pkg: griffe.Module) -> str:
    """The path where the object ``path`` of ``pkg`` is defined (``path`` itself when it is not in ``pkg``)."""
    try:
        return pkg[path.removeprefix(f"{pkg.path}.")].canonical_path if path.startswith(f"{pkg.path}.") else path
    except (KeyError, griffe.AliasResolutionError, griffe.CyclicAliasError):
        return path


class SphinxRoles(griffe.Extension):
    """Rewrite the docstrings of a loaded package (see the module's description)."""

    def on_package(self, *, pkg: griffe.Module, **kwargs: Any) -> None:
        """Each object's docstring, once the whole package is loaded (so that every name resolves)."""
        for obj in _objects(pkg):
            if obj.docstring is not None:
                resolve = _resolver(obj, pkg)
                obj.docstring.value = fence_doctests(roles_to_references(obj.docstring.value, resolve))
