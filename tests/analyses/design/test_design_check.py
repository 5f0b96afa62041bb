"""The planner against the simulator (a fast smoke; `make calibrate` runs the full check)."""

from __future__ import annotations

from judgelab.reporting import design_check


def test_position_bias_plan_reaches_its_power_in_simulation_smoke():
    out = design_check.position_bias_check(0.1, reps=25, pilot_clusters=150, seed=1)
    assert out["design"].tolist() == ["one random order", "both orders"]
    both = out.set_index("design").loc["both orders"]
    one = out.set_index("design").loc["one random order"]
    assert both["n_items"] < one["n_items"]  # both orders need fewer items
    # 25 replicates: power 0.8 planned; the smoke only refuses gross disagreement
    assert (out["simulated_power"] >= 0.5).all() and (out["type1"] <= 0.25).all()


def test_rate_plan_with_clusters_reaches_its_width_smoke():
    out = design_check.rate_width_check(0.2, reps=20, pilot_clusters=150, seed=2)
    clustered = out.iloc[1]
    assert abs(clustered["simulated_width"] - 0.2) < 0.03
    assert (
        out.iloc[0]["simulated_width"] > clustered["simulated_width"]
    )  # ignoring clusters under-plans
