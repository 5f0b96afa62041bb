"""`judgelab plan`: stated assumptions and pilots from the labelled samples."""

from __future__ import annotations

from judgelab.cli import main as cli


def test_plan_position_bias_from_a_sample_pilot(capsys):
    rc = cli.main(
        ["plan", "position-bias", "--pilot", "sample:contextualjudgebench", "--delta", "0.1",
         "--reps", "20"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0
    assert "order_corr" in out and "both orders" in out and "one random order" in out
    assert "decisive_share" in out and "size_cv" in out


def test_inf2_4_plan_prints_the_verified_power_beside_the_closed_form(capsys):
    rc = cli.main(
        ["plan", "position-bias", "--pilot", "sample:contextualjudgebench",
         "--judge", "sample-judge-3-mostly-right", "--delta", "0.1", "--reps", "40"]
    )  # fmt: skip
    captured = capsys.readouterr()
    out = captured.out
    assert rc == 0, captured.err
    lines = [ln for ln in out.splitlines() if "verified by 40 replays" in ln]
    assert len(lines) == 2 and all("achieved power" in ln and "±" in ln for ln in lines)
    assert "closed-form power" in lines[0] and "type-I error" in lines[0]
    assert "verified_power" in out and "deff_floor=1" in out
    rc = cli.main(["plan", "position-bias", "--delta", "0.1", "--icc", "0.05",
                   "--cluster-size", "10", "--deff-floor", "0.5"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0 and "not verified (closed form only" in out and "deff_floor=0.5" in out


def test_plan_rate_with_stated_assumptions(capsys):
    rc = cli.main(
        ["plan", "rate", "--width", "0.1", "--p", "0.5", "--icc", "0.25", "--cluster-size", "5"]
    )
    out = capsys.readouterr().out
    assert rc == 0
    # 385 independent items; deff 2 with clusters of 5 at ICC 0.25 -> 769 items, 154 clusters
    assert " 385 " in out and " 769 " in out and " 154" in out


def test_plan_labels_from_a_sample_and_bad_input(capsys):
    rc = cli.main(
        [
            "plan",
            "labels",
            "--pilot",
            "sample:nfl_correctness",
            "--judge",
            "GPT-4.umass",
            "--width",
            "0.2",
        ]
    )
    out = capsys.readouterr().out
    assert rc == 0 and "PPI with 1000 judge labels" in out and "Cohen's κ" in out
    rc = cli.main(["plan", "labels", "--pilot", "sample:nfl_correctness", "--judge", "nobody"])
    assert rc == 2 and "no judge 'nobody'" in capsys.readouterr().err


def test_plan_length_and_self_preference(capsys):
    assert cli.main(["plan", "length", "--slope", "0.2"]) == 0
    assert " 785 " in capsys.readouterr().out  # (1.96 + 0.8416)² / (0.25 · 0.04) = 784.9
    assert cli.main(["plan", "self-preference"]) == 0
    assert "self_preference" in capsys.readouterr().out


def test_i35_3_plan_trials_reads_a_pilot_with_repeated_samples(capsys, monkeypatch):
    import types

    import numpy as np
    import pandas as pd

    from judgelab.data import catalog

    rng = np.random.default_rng(0)
    rows = []
    for judge, q in (("steady", 1.0), ("coin", 0.6)):
        for sample in range(5):
            picks = np.where(rng.random(200) < q, "pos", "neg")
            rows += [
                dict(benchmark="b", split="s", item_id=f"i{i}", judge=judge, model=judge,
                     prompt="p", order=0, sample=sample, valid=True, chosen=c, verdict=c,
                     cluster=f"c{i % 40}")
                for i, c in enumerate(picks)
            ]  # fmt: skip
    loaded = types.SimpleNamespace(judgments=pd.DataFrame(rows), items=None)
    monkeypatch.setattr(catalog, "load_source", lambda name, **_: loaded)
    rc = cli.main(["plan", "trials", "--pilot", "repeats", "--agree", "0.9"])
    out = capsys.readouterr().out
    assert rc == 0
    steady = next(ln for ln in out.splitlines() if ln.strip().startswith("steady:"))
    coin = next(ln for ln in out.splitlines() if ln.strip().startswith("coin:"))
    assert steady.split()[-7] == "1.0"  # one trial settles a judge that never changes
    assert "True" in coin.split() or float(coin.split()[-7]) >= 15  # q = .6: k >= 41
    assert rc == 0 and "extrapolated from the fitted Beta" in out
    monkeypatch.setattr(catalog, "load_source", lambda name, **_: loaded)
    assert cli.main(["plan", "trials"]) == 2
    assert "sampled several times per item" in capsys.readouterr().err


def test_i35_3_the_position_bias_plan_gains_a_trials_per_item_line(capsys, monkeypatch):
    rc = cli.main(["plan", "position-bias", "--delta", "0.1", "--icc", "0.05",
                   "--cluster-size", "10"])  # fmt: skip
    out = capsys.readouterr().out
    assert rc == 0 and "trials per item: 1 (no pilot judge sampled several times" in out
    rc = cli.main(
        ["plan", "position-bias", "--pilot", "sample:contextualjudgebench", "--delta", "0.1",
         "--reps", "20"]
    )  # fmt: skip
    out = capsys.readouterr().out
    # the sample's judges were sampled several times: one line per judge, with its interval
    lines = [ln for ln in out.splitlines() if ln.startswith("trials per item (")]
    assert rc == 0 and len(lines) >= 2 and all("many-trial majority" in ln for ln in lines)
    assert not any("nan" in ln for ln in lines)
