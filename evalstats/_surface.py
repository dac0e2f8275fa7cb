"""The one way a package of evalstats resolves its public names on first use (PEP 562).

``__all__, __getattr__, __dir__ = lazy_surface(__name__, {".rates": ["win_rates"]})``: the
table is the package's whole surface (docs/reference.md and tests/test_layering.py read it).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_surface"]


def lazy_surface(
    package: str, table: Mapping[str, Sequence[str]], *, submodules: Sequence[str] = ()
) -> tuple[list[str], Callable[[str], Any], Callable[[], list[str]]]:
    """``__all__``, ``__getattr__`` and ``__dir__`` of a package whose names load on first use.

    ``table`` maps a relative submodule to the names it defines; ``submodules`` are public
    names themselves. ``ValueError`` for a name listed twice or one that is a submodule's
    (importing the submodule would bind it over the name).

    >>> names, getattr_, _ = lazy_surface("evalstats", {".errors": ["DataError"]})
    >>> names, getattr_("DataError").__name__
    (['DataError'], 'DataError')
    """
    where: dict[str, str] = {}
    for module, names in table.items():
        for name in names:
            if name in where or name in submodules:
                raise ValueError(f"{package}: {name!r} is listed twice")
            where[name] = module
    modules = {m.lstrip(".").split(".")[0] for m in table} | set(submodules)
    clash = sorted(set(where) & modules)
    if clash:
        raise ValueError(
            f"{package}: public name(s) {clash} are also submodule names; rename the module"
        )
    public = sorted([*where, *submodules])

    def __getattr__(name: str) -> Any:
        if name in where:
            return getattr(importlib.import_module(where[name], package), name)
        if name in submodules:
            return importlib.import_module(f".{name}", package)
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *public})

    return public, __getattr__, __dir__
