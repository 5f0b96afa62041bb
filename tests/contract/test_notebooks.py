"""The notebook contract (static checks) and the execution of every notebook."""

import ast
import importlib
import json
import types
from pathlib import Path

import papermill
import pytest
import yaml

from judgelab.reporting import pipeline

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
FORBIDDEN_NAMES = ("sys.path", "%cd", "os.chdir")


def code_cells(nb_path: Path) -> list[dict]:
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def source(cell: dict) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def test_there_are_notebooks():
    assert NOTEBOOKS, "no notebooks found"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_name_and_no_outputs(nb: Path):
    assert pipeline.NOTEBOOK_RE.match(nb.stem), f"{nb.name}: name must be NN_topic"
    for cell in code_cells(nb):
        assert cell.get("outputs", []) == [], f"{nb.name}: committed with outputs"
        assert cell.get("execution_count") is None, f"{nb.name}: committed with execution counts"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_one_literal_parameters_cell(nb: Path):
    cells = code_cells(nb)
    tagged = [c for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    assert len(tagged) == 1, f"{nb.name}: {len(tagged)} cells tagged 'parameters'"
    tree = ast.parse(source(tagged[0]))
    names = []
    for node in tree.body:
        assert isinstance(node, (ast.Assign, ast.AnnAssign)), (
            f"{nb.name}: parameters cell may hold only assignments, found {type(node).__name__}"
        )
        ast.literal_eval(node.value)  # raises if a value is not a literal
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        assert isinstance(target, ast.Name)
        names.append(target.id)
    assert "run" in names, f"{nb.name}: every notebook declares `run`"
    assert len(names) == len(set(names)), f"{nb.name}: a parameter is assigned twice"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_no_logic_in_notebooks(nb: Path):
    for cell in code_cells(nb):
        src = source(cell)
        for bad in FORBIDDEN_NAMES:
            assert bad not in src, f"{nb.name}: notebook code uses {bad}"
        lines = [ln for ln in src.splitlines() if not ln.lstrip().startswith(("%", "!"))]
        tree = ast.parse("\n".join(lines))
        for node in ast.walk(tree):
            assert not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)), (
                f"{nb.name}: define functions/classes in lib/judgelab, not in notebooks"
            )
            if isinstance(node, ast.ImportFrom):
                assert all(a.name != "*" for a in node.names), f"{nb.name}: import *"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_params_files_only_use_declared_keys(nb: Path):
    declared = papermill.inspect_notebook(str(nb))
    files = sorted((ROOT / "params" / nb.stem).glob("*.yaml"))
    assert (ROOT / "params" / nb.stem / "default.yaml") in files, f"{nb.stem}: no default.yaml"
    for f in files:
        data = yaml.safe_load(f.read_text(encoding="utf-8")) or {}
        unknown = set(data) - set(declared)
        assert not unknown, f"{f}: keys not declared by the notebook: {sorted(unknown)}"


def test_every_params_folder_has_a_notebook():
    stems = {p.stem for p in NOTEBOOKS}
    for folder in (ROOT / "params").iterdir():
        if folder.is_dir() and pipeline.NOTEBOOK_RE.match(folder.name):
            assert folder.name in stems, f"params/{folder.name} has no notebook"


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_executes_offline_on_samples(nb: Path, sample_run):
    """Every notebook runs with its default params (conftest's SMOKE_OVERRIDES aside) offline.

    The run is the session's shared one (`sample_run`): tests of a report's reading, browser
    and leaderboard read the same executed notebook instead of running it again.
    """
    result = sample_run(nb.stem)
    assert result.ok, result.error
    home = Path(result.ipynb).parents[2]
    assert home.name == nb.stem and Path(result.html).exists()
    for f in result.figures:
        assert Path(f).is_relative_to(home)


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_i34_2_no_machine_path_in_a_run_s_outputs(nb: Path, sample_run):
    """Neither the page nor the executed notebook names the machine's folders (issue 34, 2).

    Seen on real runs: a cell ending in `out.table(...)` showed `PosixPath('/home/…/rates.csv')`,
    a scipy warning printed its site-packages path, papermill recorded the absolute input and
    temporary output paths.
    """
    result = sample_run(nb.stem)
    home = Path(result.ipynb).parents[2]
    for written in (Path(result.ipynb), Path(result.html)):
        text = written.read_text(encoding="utf-8")
        for machine in (str(home), str(ROOT)):
            assert machine not in text, f"{written.name} names {machine}"
        assert "PosixPath(" not in text


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_parameter_is_inspectable_with_help(nb: Path):
    """papermill sees every assigned name, each with its `# help` comment.

    papermill's inspector silently drops a line it cannot parse (e.g. an `=` inside the help
    comment); such a parameter could then not be set from a params file.
    """
    cells = code_cells(nb)
    tagged = next(c for c in cells if "parameters" in c.get("metadata", {}).get("tags", []))
    names = []
    for node in ast.parse(source(tagged)).body:
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        names.append(target.id)
    declared = papermill.inspect_notebook(str(nb))
    assert sorted(declared) == sorted(names), f"{nb.name}: papermill sees {sorted(declared)}"
    missing_help = [n for n, d in declared.items() if not (d.get("help") or "").strip()]
    assert not missing_help, f"{nb.name}: parameters without a # help comment: {missing_help}"


FACES = {
    "judgelab.core",
    "judgelab.data",
    "judgelab.judges",
    "judgelab.analyses",
    "judgelab.reporting",
}


def judgelab_imports(nb_path: Path) -> list[tuple[str, list[str]]]:
    """Return (module, names) of every `judgelab` import in the notebook's code cells."""
    found = []
    for cell in code_cells(nb_path):
        for node in ast.walk(ast.parse(source(cell))):
            if isinstance(node, ast.Import):
                found += [(a.name, []) for a in node.names if a.name.startswith("judgelab")]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("judgelab"):
                found.append((node.module, [a.name for a in node.names]))
    return found


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebooks_import_package_faces_only(nb: Path):
    for module, names in judgelab_imports(nb):
        assert module in FACES, (
            f"{nb.name}: imports {module}; import a wing's face instead "
            "(e.g. `from judgelab.analyses import length`)"
        )
        face = importlib.import_module(module)
        for name in names:
            assert name in getattr(face, "__all__", ()), (
                f"{nb.name}: `from {module} import {name}`: {name} is not in {module}.__all__"
            )
            target = getattr(face, name, None) or importlib.import_module(f"{module}.{name}")
            assert isinstance(target, types.ModuleType), (
                f"{nb.name}: `from {module} import {name}` should name a package or module"
            )


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_outputs_go_through_one_object_per_run(nb: Path):
    text = "\n".join(source(c) for c in code_cells(nb))
    for banned in ("notebook=", "run=run", "save_table(", "figures.save("):
        assert banned not in text, (
            f"{nb.name}: `{banned}`: write through `out = notebook.outputs(...)`"
        )
    if "out.table(" in text or "out.figure(" in text:
        assert text.count(f'notebook.outputs("{nb.stem}", run)') == 1, (
            f'{nb.name}: one `out = notebook.outputs("{nb.stem}", run)` per notebook'
        )


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.stem)
def test_every_cell_has_an_id(nb: Path):
    """nbformat warns (MissingIDFieldWarning) on every read of a cell without an id."""
    cells = json.loads(nb.read_text(encoding="utf-8"))["cells"]
    missing = [i for i, c in enumerate(cells) if not c.get("id")]
    assert not missing, f"{nb.name}: cells without an id: {missing}"
