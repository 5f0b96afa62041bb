"""pyproject.toml, environment.yml, the Makefile, README and CI agree with each other."""

import re
import subprocess
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
REQUIRED = {
    "jupyterlab",
    "papermill",
    "nbconvert",
    "ipykernel",
    "pandas",
    "polars",
    "pyarrow",
    "matplotlib",
    "seaborn",
    "statsmodels",
    "scipy",
    "krippendorff",
    "openai",
    "tqdm",
    "pyyaml",
}


def pins(specs: list[str]) -> dict[str, str]:
    out = {}
    for spec in specs:
        m = re.fullmatch(r"([A-Za-z0-9_.-]+)\s*>=\s*([0-9][0-9a-z.]*)", spec.strip())
        assert m, f"{spec!r}: every dependency needs a lower bound written as name>=version"
        out[m.group(1).lower()] = m.group(2)
    return out


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_pyproject_pins_every_required_dependency():
    deps = pins(project()["dependencies"])
    assert REQUIRED <= set(deps), f"missing lower bounds for {sorted(REQUIRED - set(deps))}"
    dev = pins(project()["optional-dependencies"]["dev"])
    assert {"pytest", "ruff"} <= set(dev)
    assert project()["scripts"]["judgelab"] == "judgelab.cli.main:main"


def test_environment_yml_matches_pyproject():
    env = yaml.safe_load((ROOT / "environment.yml").read_text())
    conda = [d for d in env["dependencies"] if isinstance(d, str)]
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    assert "python=3.11" in conda
    assert pip == ["-e .[dev]"]
    env_pins = pins([d for d in conda if d not in ("python=3.11", "pip")])
    py_pins = pins(project()["dependencies"] + project()["optional-dependencies"]["dev"])
    assert env_pins == py_pins, "environment.yml and pyproject.toml pins drifted"
    assert project()["requires-python"] == ">=3.11"


def test_readme_leads_with_the_two_commands():
    readme = (ROOT / "README.md").read_text()
    first = readme[: readme.index("## A five-minute tour")]
    assert "make figures" in first and "make test" in first


def test_ci_runs_make_test():
    ci = (ROOT / ".ci" / "run").read_text()
    assert "make test" in ci


def test_plain_make_prints_targets():
    out = subprocess.run(
        ["make", "-s", "-C", str(ROOT)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0
    for target in ("figures", "test", "lint", "bench", "clean"):
        assert re.search(rf"make {target}\s+\S", out.stdout), f"`make` does not list {target}"


def test_layout_exists():
    for name in (
        "README.md",
        "environment.yml",
        "pyproject.toml",
        "Makefile",
        "lib/judgelab",
        "notebooks",
        "params",
        "data/samples",
        "tests",
        ".ci/run",
    ):
        assert (ROOT / name).exists(), name
    ignored = (ROOT / ".gitignore").read_text()
    assert "/reports/*" in ignored and "/data/benchmarks/" in ignored
