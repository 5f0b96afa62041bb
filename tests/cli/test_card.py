"""The `judgelab card` command: its arguments and the run name of a judge key."""

import argparse

from judgelab.cli import card as cli_card


def test_cli_card_registers_and_names_runs():
    parser = argparse.ArgumentParser()
    cli_card.register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["card", "faithbench:gpt_4o.faithbench", "-p", "n_boot=10"])
    assert args.judge == "faithbench:gpt_4o.faithbench" and args.p == ["n_boot=10"]
    assert cli_card.run_name("sample:length_bias:illustrative-detector") == (
        "sample_length_bias__illustrative-detector"
    )
