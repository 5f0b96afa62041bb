"""The notebook stack loads without jsonschema's IRI grammar, and validates notebooks as before."""

from __future__ import annotations

import subprocess
import sys

import pytest

SCRIPT = """
import sys
from judgelab.reporting import notebook_stack
notebook_stack.prepare()
import nbformat, papermill  # noqa: F401
assert notebook_stack.GRAMMAR not in sys.modules, "the grammar was compiled"
nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
nbformat.validate(nb)
bad = nbformat.v4.new_notebook()
bad["cells"] = [{"cell_type": "code"}]
try:
    nbformat.validate(bad)
except nbformat.ValidationError:
    pass
else:
    raise AssertionError("an invalid notebook passed")
import importlib.util
if importlib.util.find_spec(notebook_stack.GRAMMAR) is not None:
    import rfc3987_syntax  # still importable by whoever wants it
print("ok")
"""


def test_papermill_and_nbformat_without_the_grammar():
    got = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "ok"


KEPT = """
import sys
import rfc3987_syntax
from judgelab.reporting import notebook_stack
notebook_stack.prepare()
assert sys.modules["rfc3987_syntax"] is rfc3987_syntax
import jsonschema
assert "iri" in jsonschema.FormatChecker.checkers  # imported first: its check stays
print("ok")
"""


def test_an_imported_grammar_is_left_alone():
    pytest.importorskip("rfc3987_syntax")
    got = subprocess.run([sys.executable, "-c", KEPT], capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip() == "ok"
