"""Package faces that import their submodules on first use.

A family's face (`judgelab.analyses.probes`, `judgelab.analyses.design`) re-exports names
from its submodules; importing them all at once pulls in scipy and matplotlib, which a
listing command (`judgelab probe --list`, `judgelab plan`) never needs. `face` returns the
module-level `__getattr__` (PEP 562) that imports the submodule holding a name when the name
is first read, and keeps it on the package, so `from family import name` works unchanged.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def face(package: str, where: Mapping[str, str]) -> Callable[[str], object]:
    """Return a module `__getattr__` for `package`: name -> the submodule that defines it.

    A name that is its own submodule (`where["plots"] == "plots"`) is that module.

    >>> getattr_ = face("json", {"decoder": "decoder", "JSONDecoder": "decoder"})
    >>> getattr_("JSONDecoder").__name__
    'JSONDecoder'
    """

    def __getattr__(name: str) -> object:
        module_name = where.get(name)
        if module_name is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module = importlib.import_module(f"{package}.{module_name}")
        value = module if module_name == name else getattr(module, name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__


class _ScipyStats:
    """`scipy.stats`, imported on first use (its import costs 1-3 s of a process)."""

    def __getattr__(self, name: str) -> Any:
        from scipy import stats

        return getattr(stats, name)


#: `scipy.stats` on first use (`from judgelab.core.lazy import scipy_stats as sps`).
scipy_stats: Any = _ScipyStats()

__all__ = ["face", "scipy_stats"]
