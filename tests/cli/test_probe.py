"""`judgelab probe` writes a probe benchmark that `judgelab judge` then runs like any other."""

from __future__ import annotations

from judgelab.analyses import probes
from judgelab.cli import judge as cli_judge
from judgelab.cli import probe as cli_probe
from judgelab.core import paths, tables
from judgelab.data import catalog

SAMPLE = "sample:contextualjudgebench"
NAME = "contextualjudgebench_sample+probes"


def test_probe_then_judge_then_analyse(capsys):
    args = ["--benchmark", SAMPLE, "--probes", "authority,verbosity", "--seed", "1"]
    assert cli_probe.main(args) == 0
    out = capsys.readouterr().out
    path = paths.items() / f"{NAME}.parquet"
    assert str(path) in out and f"--benchmark {NAME}" in out
    items = tables.read_items(path)
    n = len(catalog.load_items(SAMPLE))
    assert len(items) == n * (1 + 2 * 2) and set(items["benchmark"]) == {NAME}
    judge = ["--judge", "offline-prefer-longer", "--benchmark", NAME, "--no-progress"]
    assert cli_judge.main(judge) == 0
    loaded = catalog.load_source(NAME)
    assert not loaded.is_sample and len(loaded.judgments) == 2 * len(items)
    pairs = probes.probe_pairs(loaded.judgments, loaded.items)
    eff = probes.probe_effects(pairs, n_boot=50).set_index(["probe", "metric"])
    assert eff.loc[("verbosity", "pull"), "value"] > 0  # padding pulls prefer-longer
    # the same command again: the same table (deterministic), accepted
    assert cli_probe.main(args) == 0
    # other variants while judgments refer to the old ones: refused unless --force
    capsys.readouterr()
    assert cli_probe.main([*args[:-1], "2"]) == 2
    assert "--force" in capsys.readouterr().err
    assert tables.read_items(path).equals(items)
    assert cli_probe.main([*args[:-1], "2", "--force"]) == 0


def test_list_and_bad_input(capsys):
    assert cli_probe.main(["--list"]) == 0
    listed = capsys.readouterr().out
    assert all(p in listed for p in probes.PROBES) and "isolates" in listed
    assert cli_probe.main(["--benchmark", SAMPLE, "--probes", "flattery"]) == 2
    assert "probe must be one of" in capsys.readouterr().err
    assert cli_probe.main([]) == 2
    assert cli_probe.main(["--benchmark", SAMPLE, "--split", "nope"]) == 2
    assert "unknown split" in capsys.readouterr().err
    assert cli_probe.main(["--benchmark", "sample:nfl_correctness"]) == 2  # pointwise only
    assert "no pairwise item" in capsys.readouterr().err
    assert not paths.items().exists() or not list(paths.items().glob("*+probes.parquet"))
