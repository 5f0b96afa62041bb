"""The Jupyter notebook stack (papermill, nbformat), imported without jsonschema's IRI grammar.

nbformat validates notebooks with jsonschema, whose `format` checkers import
`rfc3987_syntax` when it is installed (the lock has it, through jupyter-events); that
module compiles a Lark grammar as it is imported: 0.73 s and 16 MB in every process that
runs a notebook, before its kernel starts (measured: `import papermill` 0.99 -> 0.27 s).
Its one use is jsonschema's optional "iri" format check, which no notebook schema asks
for, so the grammar is kept out while jsonschema loads (`prepare`); the module itself stays
importable afterwards.
"""

from __future__ import annotations

import sys

GRAMMAR = "rfc3987_syntax"


def prepare() -> None:
    """Import jsonschema (once per process) without compiling the IRI grammar."""
    if "jsonschema._format" in sys.modules:
        return
    blocked = GRAMMAR not in sys.modules
    if blocked:
        sys.modules[GRAMMAR] = None  # type: ignore[assignment]  # import -> ImportError
    try:
        import jsonschema._format  # noqa: F401
    finally:
        if blocked and sys.modules.get(GRAMMAR, 0) is None:
            del sys.modules[GRAMMAR]
