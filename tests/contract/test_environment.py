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
        spec = spec.split(";")[0]  # an environment marker (e.g. no uvloop on Windows)
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


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _locked_project() -> dict:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    return next(p for p in lock["package"] if p["name"] == "judgelab")


def test_uv_lock_matches_pyproject():
    """uv.lock was made from today's pyproject.toml (else `make lock` was forgotten)."""
    locked = {
        (_norm(d["name"]), tuple(d.get("extras", ())), d.get("specifier", ""), d.get("marker", ""))
        for d in _locked_project()["metadata"]["requires-dist"]
    }
    wanted = set()
    groups = {None: project()["dependencies"], **project()["optional-dependencies"]}
    for extra, specs in groups.items():
        for spec in specs:
            req, _, marker = (part.strip() for part in spec.partition(";"))
            name, extras, bound = re.fullmatch(
                r"([A-Za-z0-9_.-]+)(?:\[([^\]]*)\])?\s*(>=.*)", req
            ).groups()
            extras = tuple(e.strip() for e in extras.split(",")) if extras else ()
            marker = " and ".join(m for m in (marker, extra and f"extra == '{extra}'") if m)
            wanted.add((_norm(name), extras, bound, marker))
    assert locked == wanted, (
        "uv.lock is stale: run `make lock` and commit it "
        f"(only in lock: {sorted(locked - wanted)}; only in pyproject: {sorted(wanted - locked)})"
    )
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    assert lock["requires-python"] == project()["requires-python"]


def test_uv_lock_pins_every_installed_package():
    """Every package of the locked graph has one exact version from a public index."""
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    for pkg in lock["package"]:
        if pkg["name"] == "judgelab":
            continue
        assert re.fullmatch(r"[0-9][0-9A-Za-z.+!-]*", pkg["version"]), pkg["name"]
        source = pkg["source"]
        assert "registry" in source, f"{pkg['name']} is locked to {source}, not an index"
        assert not source["registry"].startswith("file:"), f"{pkg['name']}: local index"


def test_make_env_installs_the_lock():
    make = (ROOT / "Makefile").read_text()
    assert "sync --frozen" in make, "make env must install exactly the locked versions"
    assert re.search(r"^\$\(STAMP\): pyproject\.toml uv\.lock", make, re.M)
    assert re.search(r"^lock:", make, re.M), "`make lock` refreshes uv.lock"


def test_i34_6_make_env_compiles_the_venv_to_bytecode():
    """Without bytecode (uv's default) and with PYTHONDONTWRITEBYTECODE set, every process and
    every notebook kernel compiles pandas, scipy, matplotlib ... from source again."""
    make = (ROOT / "Makefile").read_text()
    sync = next(line for line in make.splitlines() if "$(UV) sync --frozen" in line)
    assert "--compile-bytecode" in sync
    assert "--no-compile" not in make  # the pip fallback compiles by default


def test_version_constant_matches_pyproject():
    import judgelab

    assert judgelab.__version__ == project()["version"]
