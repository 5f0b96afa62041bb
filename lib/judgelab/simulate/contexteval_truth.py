"""The ContextEval generators' planted constants and their super-population truths.

Truths are computed from the planted parameters, never from the simulated sample and never
through the estimators: the win rates, margins and agreement as ratios of expected counts
(`pairwise_truth`: the judges' votes are independent given the shared latent and the
refusal propensity, which quadrature integrates out), the gap as the expected within-query
gap and the expected rating of a value (`gap_truth`, `rating_truth`, closed form).
`tests/simulate` checks both against large draws of the generators (`simulate.contexteval`;
each query its own cluster: expectations do not depend on how queries group, since cluster
sizes are drawn independently of the effects).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from judgelab.simulate import base

SETTINGS = ("NoCtxGen-NoCtxEval", "NoCtxGen-CtxEval")
JUDGE_BIAS = (-0.3, -0.15, 0.0, 0.15, 0.3)
#: The WEIRD-mapped attributes of spec 002 §2.7: values, and which are WEIRD-aligned.
ATTRIBUTES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "Cultural Context": (
        ("Western culture", "Eastern culture", "Indigenous culture", "Multicultural perspective"),
        ("Western culture",),
    ),
    "Economic Context": (
        ("Low-income", "Middle-income", "High-income", "Budget-conscious"),
        ("Middle-income", "High-income"),
    ),
    "Age Group": (
        ("Children", "Teenagers", "Young adults", "Middle-aged adults", "Seniors"),
        ("Young adults", "Middle-aged adults"),
    ),
    "Geographical / Regional Context": (
        ("North America", "Europe", "Asia", "Africa", "Latin America"),
        ("North America", "Europe"),
    ),
}
RATER_BIAS = (-0.2, -0.1, 0.0, 0.1, 0.2)
NOISE_SD = 0.8  # per-rating noise of the latent relevance
#: SD (log scale) of the per-cluster propensity of Invalid / unparsed outputs.
PROPENSITY_SD = 0.7


def _quadrature(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights of E[f(Z)], Z ~ N(0, 1) (Gauss–Hermite, probabilists')."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / w.sum()


def _count_distribution(probs: np.ndarray) -> np.ndarray:
    """Return P(n_C1 = a, n_C2 = b) (… × J+1 × J+1) of J independent 3-way votes.

    `probs` is (… × J × 3): per judge P(C1), P(C2), P(Tie).
    """
    J = probs.shape[-2]
    dist = np.zeros((*probs.shape[:-2], J + 1, J + 1))
    dist[..., 0, 0] = 1.0
    for j in range(J):
        p1, p2, p3 = (probs[..., j, k][..., None, None] for k in range(3))
        new = dist * p3
        new[..., 1:, :] += dist[..., :-1, :] * p1
        new[..., :, 1:] += dist[..., :, :-1] * p2
        dist = new
    return dist


@lru_cache(maxsize=64)
def pairwise_truth(
    quality: float,
    context_effect: float,
    icc: float,
    effect_sd: float,
    tie_band: float,
    query_sd: float,
    invalid: tuple[float, float],
    close_factor: float,
) -> dict[str, float]:
    """Return the planted win rates (percent), margins, agreement and their change by context.

    Super-population values as ratios of expected counts, computed by quadrature from the
    planted model: given the shared latent S = q_g + u_g + v_i + c_{g,s} (normal) and the
    conversation's Invalid propensity (log-normal), the judges vote independently, so the
    distribution of (n_C1, n_C2, n_Tie) — Invalid counted as Tie — is exact; S and the
    propensity are integrated out by Gauss–Hermite rules. `tests/simulate` checks it
    against a large draw of the generator.
    """
    from scipy.special import expit

    judges = np.asarray(JUDGE_BIAS)
    J = len(judges)
    sd = np.sqrt(2 * effect_sd**2 + base.cluster_sd(icc) ** 2 + query_sd**2)
    zs, ws = _quadrature(121)
    zp, wp = _quadrature(41)
    prop = np.exp(PROPENSITY_SD * zp - PROPENSITY_SD**2 / 2)
    a, b = np.meshgrid(np.arange(J + 1), np.arange(J + 1), indexing="ij")
    top = np.maximum(np.maximum(a, b), J - a - b)
    valid = a + b <= J
    out: dict[str, float] = {}
    for k, s in enumerate(SETTINGS):
        mean = quality + (context_effect if k else 0.0)
        S = (mean + sd * zs)[:, None, None] + judges[None, None, :]  # nodes × 1 × judges
        p1 = expit(S - tie_band)
        p2 = expit(-tie_band - S)
        rate = invalid[k] * prop[None, :, None]  # × propensity nodes
        keep = 1.0 - np.clip(rate, 0.0, 0.9)
        p1, p2 = p1 * keep, p2 * keep
        probs = np.stack(np.broadcast_arrays(p1, p2, 1.0 - p1 - p2), axis=-1)
        w = ws[:, None, None, None] * wp[None, :, None, None]
        dist = (_count_distribution(probs) * w).sum(axis=(0, 1)) * valid
        c1 = float(dist[2 * a > J].sum())
        c2 = float(dist[2 * b > J].sum())
        tie = float(dist[valid & (2 * (J - a - b) > J)].sum())
        n_m = c1 + c2 + tie
        out[f"{s}|wr_c1"] = 100 * c1 / n_m
        out[f"{s}|wr_c2"] = 100 * c2 / n_m
        out[f"{s}|wr_tie"] = 100 * tie / n_m
        out[f"{s}|margin"] = 100 * (c1 - c2) / n_m
        out[f"{s}|agreement"] = 100 * float((dist * top).sum()) / J
    out["delta_margin"] = out[f"{SETTINGS[1]}|margin"] - out[f"{SETTINGS[0]}|margin"]
    out["delta_agreement"] = out[f"{SETTINGS[1]}|agreement"] - out[f"{SETTINGS[0]}|agreement"]
    return out


def _level_sds(icc: float) -> tuple[float, float]:
    """SDs of the cluster level a_g and the query × value effect w (half the ICC variance each)."""
    var = icc / (1.0 - icc) * NOISE_SD**2
    return float(np.sqrt(var / 2)), float(np.sqrt(var / 2))


@lru_cache(maxsize=64)
def rating_truth(
    gaps: tuple[tuple[str, float], ...], icc: float, effect_sd: float = 0.0
) -> dict[str, float]:
    """Return the expected rating of every attribute value (`<attribute>|<value>`), 1–5.

    Averaged over the raters, in closed form: a latent rating is normal (mean 3 +
    gap·[WEIRD] + b_r; the variance of the cluster, cluster × value, query × value and
    noise terms), and E[clip(round(X), 1, 5)] = 1 + Σ_{k=1..4} P(X > k + ½).
    """
    from scipy.stats import norm

    sd_a, sd_w = _level_sds(icc)
    sd = np.sqrt(sd_a**2 + sd_w**2 + (effect_sd * NOISE_SD) ** 2 + NOISE_SD**2)
    cuts = np.arange(1, 5) + 0.5
    out = {}
    for attr, g in gaps:
        values, weird = ATTRIBUTES[attr]
        w = np.array([v in weird for v in values])
        mean = 3.0 + g * w[None, :] + np.asarray(RATER_BIAS)[:, None]  # raters × values
        expected = 1.0 + norm.sf((cuts[None, None, :] - mean[:, :, None]) / sd).sum(axis=2)
        for v, e in zip(values, expected.mean(axis=0), strict=True):
            out[f"{attr}|{v}"] = float(e)
    return out


def gap_truth(
    gaps: tuple[tuple[str, float], ...], icc: float, effect_sd: float = 0.0
) -> dict[str, float]:
    """Return the expected within-query WEIRD gap per attribute after rounding to 1–5.

    E[mean rating of the WEIRD values − of the others], averaged over the raters: the
    gap of the expected ratings (`rating_truth`, linear). `tests/simulate` checks it
    against a large draw of the generator.
    """
    per_value = rating_truth(gaps, icc, effect_sd)
    out = {}
    for attr, _ in gaps:
        values, weird = ATTRIBUTES[attr]
        w = [per_value[f"{attr}|{v}"] for v in values if v in weird]
        o = [per_value[f"{attr}|{v}"] for v in values if v not in weird]
        out[attr] = float(np.mean(w) - np.mean(o))
    return out
