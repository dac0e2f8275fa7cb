"""The module class of a package whose public names resolve on first use (PEP 562).

Importing a submodule binds it on its package (``pkg.simulate = <module>``) after it has
run; where a public name of the package's ``_LAZY`` table is also a submodule's name
(``evalstats.audit``, ``evalstats.simulate``, ``evalstats.stats.summarize``), the public
object is bound instead, as an eager ``from .simulate import simulate`` did.
"""

from __future__ import annotations

import types
from typing import Any

__all__ = ["LazySurface"]


class LazySurface(types.ModuleType):
    """Set as ``sys.modules[__name__].__class__`` by a package with a ``_LAZY`` table."""

    def __setattr__(self, name: str, value: Any) -> None:
        lazy = self.__dict__.get("_LAZY", {})
        if (
            name in lazy
            and isinstance(value, types.ModuleType)
            and value.__name__ == f"{self.__name__}.{name}"
        ):
            value = getattr(value, name)
        super().__setattr__(name, value)
