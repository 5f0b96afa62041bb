"""Modules readable in one sitting (issue 18): no module over 500 lines, no function over 80.

Declarative tables (prompt templates, the source registry) are exempt from the module limit;
a function's docstring does not count against its limit.
"""

import ast
from pathlib import Path

import pytest

LIB = Path(__file__).resolve().parents[2] / "lib" / "judgelab"
MODULE_LINES = 500
FUNCTION_LINES = 80
DECLARATIVE = ("judges/templates/",)
MODULES = sorted(p for p in LIB.rglob("*.py") if "testing" not in p.relative_to(LIB).parts)


def _rel(path: Path) -> str:
    return path.relative_to(LIB).as_posix()


def _body_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    first = node.body[0]
    docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    start = node.body[1].lineno if docstring and len(node.body) > 1 else first.lineno
    return node.end_lineno - start + 1


@pytest.mark.parametrize("module", MODULES, ids=_rel)
def test_module_is_readable_in_one_sitting(module: Path):
    text = module.read_text(encoding="utf-8")
    if not _rel(module).startswith(DECLARATIVE):
        assert text.count("\n") <= MODULE_LINES, f"{_rel(module)}: split it by responsibility"
    long = [
        f"{node.name} (line {node.lineno}: {_body_lines(node)} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and _body_lines(node) > FUNCTION_LINES
    ]
    assert not long, f"{_rel(module)}: functions over {FUNCTION_LINES} lines: {long}"


def test_the_size_check_sees_the_library():
    assert len(MODULES) > 50
    assert any(_rel(m) == "errors.py" for m in MODULES)
