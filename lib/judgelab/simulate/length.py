"""Planted-truth generators of the length family: length bias, context-length trends, LC win rate.

Every draw is shaped by a `base.Design` (`design.realise(rng)`: unequal cluster sizes when
`size_spread` > 0, a latent intra-cluster correlation `icc`, and planted effects that vary
by cluster with SD `effect_sd`, `base.cluster_slopes`):

- `pairwise_lengths`: pairs with heavy-tailed length *ratios* (log2 ratio ~ Student t₃, or
  normal), a share of pairs where the longer response is the gold positive, judged in both
  orders by a judge with a position bias, a skill with question (cluster) and item effects,
  a length bias that varies by question around its mean (bounded `log_ratio` form, or
  `linear`), ties, and invalid outputs missing NOT at random: more often when the verdict
  is wrong and when the pair is long;
- `context_lengths`: documents (clusters) with heavy-tailed context lengths, summaries
  judged pointwise, a trend in log2 context that varies by document, invalid outputs more
  often when the judgment is wrong and when the summary is long;
- `lc_winrate`: AlpacaEval-style single-order comparisons of a model (neg slot) that writes
  longer answers than a baseline (pos slot), an instruction-cluster effect, a length
  preference that varies by cluster, invalid outputs more often for long answers.

Truths (`Simulation.truth`) are super-population values computed from one very large,
fixed-seed draw of the same generator (`POP_CLUSTERS` clusters of 10), by direct
computation on that draw — never from the sample, and not by the estimators' code:

- ``p_longer_balanced`` — P(picks longer) among valid decisive verdicts, the mean of the
  "longer is better" and "longer is worse" rates (ratios of expected counts);
- ``length_coef`` — the coefficient of the log2-ratio term of the logistic working model of
  `analyses.length.length_regression` (chose A ~ 1 + log2 ratio + gold) fitted to the large
  draw's valid decisive verdicts (the pseudo-true value): with slopes and latent effects
  varying it is not the planted mean bias;
- ``context_slope`` — likewise, correct ~ 1 + log2(context) on the valid judgments;
  ``long_context_accuracy`` — accuracy of valid judgments on contexts of at least
  `LONG_CONTEXT` × the median;
- ``lc_winrate`` — expit(intercept) of the win-rate GLM (preference ~ 1 + tanh(Δlength /
  SD)) fitted to the large draw.

The large draw uses exact expectations over the last coins of each verdict (probabilities,
not 0/1 draws; both outcomes of "the longer response is gold") and mirrored twins (a pair
with the other response longer, a document with the mirrored log context, each with the
mirrored slope 2·mean − b: draws of the same distribution), which the generator's symmetry
allows: a null effect is then
exactly null in the population (`length_coef` = `context_slope` = 0, `p_longer_balanced` =
0.5) as long as the length ratio is independent of which response is gold
(`p_longer_better` = 0.5). With a gold/length confound *and* slopes that vary by cluster the
logistic working model's population length coefficient is not 0 under a null mean bias
(about −0.005 at a 60 % confound, SD 0.5): non-collapsibility, reported, not hidden.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from judgelab.simulate import base
from judgelab.simulate.base import Design, Simulation, sigmoid

#: Words of length difference per unit of the `linear` (unbounded) bias form.
LINEAR_SCALE = 100.0
#: Bias forms of `pairwise_lengths`.
FORMS = ("log_ratio", "linear")
#: Distributions of the log2 length ratio (`t`: Student t₃, heavy-tailed; `lognormal`:
#: normal log ratio).
KINDS = ("t", "lognormal")
#: `long_context_accuracy` covers contexts of at least this multiple of the median.
LONG_CONTEXT = 1.5
#: SD of the latent item effect (shared by the two orders of an item / by an item's rows).
ITEM_SD = 0.8
#: Largest |log2 length ratio| (a response 64 × longer than the other).
MAX_LOG_RATIO = 6.0
#: Pair length (words, both responses) at which the invalid-output rate is its base rate.
PAIR_REFERENCE = 300.0
#: Summary / answer length (words) at which the invalid-output rate is its base rate.
RESPONSE_REFERENCE = 60.0
#: Clusters of the population draw behind the truths.
POP_CLUSTERS = 4_000
_POP_PER = 10
#: The default design: 60 clusters of 5 items, latent ICC 0.3.
DESIGN = Design()


def _logit(p: float) -> float:
    return float(np.log(p / (1.0 - p)))


def _pseudo_true(p: np.ndarray, X: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Coefficients of the logistic working model fitted to population probabilities `p`.

    `weights` are the rows' probabilities of being observed (valid): the population score
    equation Σ w x (p − μ) = 0.
    """
    import statsmodels.api as sm

    model = sm.GLM(p, X, family=sm.families.Binomial(), var_weights=weights)
    return np.asarray(model.fit(tol=1e-12, maxiter=200).params)


def _population_design(icc: float, effect_sd: float) -> Design:
    return Design(n_clusters=POP_CLUSTERS, per_cluster=_POP_PER, icc=icc, effect_sd=effect_sd)


def _log_ratio(rng: np.random.Generator, n: int, kind: str, spread: float) -> np.ndarray:
    """|log2 length ratio| of n pairs: spread × |t₃| (`t`) or spread × |z| (`lognormal`)."""
    if kind == "t":
        r = rng.standard_t(3.0, size=n)
    elif kind == "lognormal":
        r = rng.standard_normal(n)
    else:
        raise ValueError(f"unknown length-ratio distribution {kind!r}; known: {list(KINDS)}")
    return np.minimum(np.abs(spread * r), MAX_LOG_RATIO)


def _invalid_prob(
    base_rate: float, wrong: np.ndarray, wrong_coef: float, log_len: np.ndarray, len_coef: float
) -> np.ndarray:
    """P(invalid output): base rate on the logit scale, raised by a wrong verdict and length."""
    if base_rate <= 0:
        return np.zeros(np.broadcast(wrong, log_len).shape)
    return sigmoid(_logit(base_rate) + wrong_coef * wrong + len_coef * log_len)


# ---------------------------------------------------------------- pairwise length bias


def _pair_lengths(
    rng: np.random.Generator, design: Design, kind: str, spread: float
) -> tuple[np.ndarray, np.ndarray]:
    """(longer, shorter) response lengths in words: question scale × item base × ratio."""
    c = base.cluster_index(design)
    scale = np.exp(rng.normal(0.0, 0.4, design.n_clusters))[c]
    mid = 150.0 * scale * np.exp(0.5 * rng.standard_normal(design.n_items))
    r = _log_ratio(rng, design.n_items, kind, spread)
    hi = np.maximum(1.0, np.round(mid * 2.0 ** (r / 2)))
    lo = np.maximum(1.0, np.round(mid * 2.0 ** (-r / 2)))
    return hi, lo


def _bias_term(len_a: np.ndarray, len_b: np.ndarray, form: str) -> np.ndarray:
    if form == "log_ratio":
        return np.log2((len_a + 1.0) / (len_b + 1.0))
    if form == "linear":
        return (len_a - len_b) / LINEAR_SCALE
    raise ValueError(f"unknown bias form {form!r}; known: {list(FORMS)}")


def _p_first(lp, ln, order, u, slope, *, form, position, skill):
    """P(chose the response shown first), its length term's lengths and the gold side g."""
    first_pos = order == 0
    la, lb = np.where(first_pos, lp, ln), np.where(first_pos, ln, lp)
    gold = np.where(first_pos, 0.5, -0.5)
    eta = position + (skill + u) * gold + slope * _bias_term(la, lb, form)
    return sigmoid(eta), la, lb, gold


@lru_cache(maxsize=64)
def _pairwise_truth(key: tuple[Any, ...]) -> dict[str, float]:
    """Population truths of `pairwise_lengths` for parameters `key` (see `_pairwise_key`)."""
    (
        bias,
        form,
        position,
        skill,
        p_better,
        kind,
        spread,
        ties,
        invalid,
        inv_wrong,
        inv_long,
        icc,
        effect_sd,
    ) = key
    rng = np.random.default_rng(20_240_520)
    design = _population_design(icc, effect_sd)
    hi, lo = _pair_lengths(rng, design, kind, spread)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, design.n_items)
    slope = base.cluster_slopes(rng, design, bias)
    log_pair = np.log2((hi + lo) / PAIR_REFERENCE)
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("p", "w", "x", "g", "longer_a", "lp")}
    # every pair both ways (the longer response gold or not; weighted by the coin's odds),
    # the second way with the mirrored slope 2·bias − b (the same distribution): under a
    # null mean bias each row has a twin with the opposite length term and the same P
    for longer_pos, coin, b in (
        (True, p_better, slope),
        (False, 1.0 - p_better, 2 * bias - slope),
    ):
        lp, ln = (hi, lo) if longer_pos else (lo, hi)
        for order in (0, 1):
            o = np.full(lp.size, order)
            p, la, lb, gold = _p_first(lp, ln, o, u, b, form=form, position=position, skill=skill)
            a_wrong = (gold < 0).astype(float)  # choosing A is wrong when A is the negative
            q_a = _invalid_prob(invalid, a_wrong, inv_wrong, log_pair, inv_long)
            q_b = _invalid_prob(invalid, 1.0 - a_wrong, inv_wrong, log_pair, inv_long)
            k_a, k_b = (1 - ties) * p * (1 - q_a), (1 - ties) * (1 - p) * (1 - q_b)
            cols["p"].append(k_a / (k_a + k_b))
            cols["w"].append(coin * (k_a + k_b))
            cols["x"].append(np.log2((la + 1.0) / (lb + 1.0)))
            cols["g"].append(gold)
            cols["longer_a"].append(la > lb)
            cols["lp"].append(np.full(lp.size, longer_pos))
    p, w, x, g = (np.concatenate(cols[k]) for k in ("p", "w", "x", "g"))
    longer_a, better = np.concatenate(cols["longer_a"]), np.concatenate(cols["lp"])
    unequal = np.tile(hi != lo, 4)
    picked_longer = np.where(longer_a, p, 1.0 - p)
    rates = []
    for sel in (unequal & better, unequal & ~better):
        rates.append(float(np.sum(w[sel] * picked_longer[sel]) / np.sum(w[sel])))
    X = np.column_stack([np.ones(x.size), x, g])
    coef = float(_pseudo_true(p, X, w)[1])
    return {"p_longer_balanced": float(np.mean(rates)), "length_coef": coef}


def _verdicts(rng, p_first, order, log_pair, *, ties, invalid, inv_wrong, inv_long):
    """Draw verdicts A/B (tie, invalid, MNAR) from P(chose the first shown)."""
    n = p_first.size
    first = rng.random(n) < p_first
    shown_pos = order == 0
    chosen = np.where(first == shown_pos, "pos", "neg").astype(object)
    verdict = np.where(first, "A", "B").astype(object)
    tie = rng.random(n) < ties
    chosen[tie], verdict[tie] = "tie", "tie"
    wrong = ((chosen == "neg") & ~tie).astype(float)
    bad = rng.random(n) < _invalid_prob(invalid, wrong, inv_wrong, log_pair, inv_long)
    chosen[bad], verdict[bad] = None, None
    correct = pd.array(np.where(bad, None, chosen == "pos"), dtype="boolean")
    return {"chosen": chosen, "verdict": verdict, "correct": correct}


def pairwise_lengths(
    rng: np.random.Generator,
    design: Design = DESIGN,
    *,
    bias: float = 0.0,
    form: str = "log_ratio",
    position: float = 0.3,
    skill: float = 1.5,
    p_longer_better: float = 0.6,
    length_kind: str = "t",
    ratio_spread: float = 1.0,
    ties: float = 0.03,
    invalid: float = 0.04,
    invalid_wrong: float = 1.2,
    invalid_long: float = 0.4,
    judge: str = "sim-judge",
) -> Simulation:
    """Return pairwise items judged in both orders by a judge with a planted length bias.

    P(chose A) = sigmoid(position + (skill + u_c + e_i) · g + b_c · f(len_A, len_B)), g =
    ±½ (A is / is not the gold positive), u_c the question effect (latent ICC
    `design.icc`), e_i an item effect (SD `ITEM_SD`), b_c the question's length bias
    (mean `bias`, SD `design.effect_sd`), f = log2((len_A+1)/(len_B+1)) (`log_ratio`) or
    (len_A − len_B) / `LINEAR_SCALE` (`linear`). Lengths: a question scale × an item's
    log-normal size × a log2 ratio of `ratio_spread` × |t₃| (`length_kind="t"`, heavy-tailed
    ratios, capped at `MAX_LOG_RATIO`) or × |z| (`lognormal`); the longer response is the
    gold positive with probability `p_longer_better`. A verdict is a tie with probability
    `ties`; it is invalid with probability sigmoid(logit(`invalid`) + `invalid_wrong` ·
    [the verdict is wrong] + `invalid_long` · log2(pair length / `PAIR_REFERENCE`)) —
    missing not at random.

    Items carry their lengths as `core.lengths.add_lengths` would (`len_*`, words) and no
    texts (texts of thousands of words would dominate a calibration replicate's time).

    Returns:
        A `Simulation` (items with `len_*` columns in words, judgments of `judge`; truths
        `p_longer_balanced`, `length_coef`; see the module docstring).
    """
    if form not in FORMS:
        raise ValueError(f"unknown bias form {form!r}; known: {list(FORMS)}")
    design = design.realise(rng)
    n = design.n_items
    hi, lo = _pair_lengths(rng, design, length_kind, ratio_spread)
    longer_pos = rng.random(n) < p_longer_better
    lp, ln = np.where(longer_pos, hi, lo), np.where(longer_pos, lo, hi)
    u = base.cluster_effects(rng, design) + rng.normal(0.0, ITEM_SD, n)
    slope = base.cluster_slopes(rng, design, bias)
    log_pair = np.log2((lp + ln) / PAIR_REFERENCE)
    items = base.items_table(
        design,
        "pairwise",
        {
            "gold": "pos",
            "len_pos": lp,
            "len_neg": ln,
            "len_context": 0.0,
            "len_response": np.nan,
            "len_unit": "words",
        },
    )
    draws = dict(ties=ties, invalid=invalid, inv_wrong=invalid_wrong, inv_long=invalid_long)
    parts = []
    for order in (0, 1):
        o = np.full(n, order)
        p = _p_first(lp, ln, o, u, slope, form=form, position=position, skill=skill)[0]
        v = _verdicts(rng, p, o, log_pair, **draws)
        parts.append(pd.DataFrame({"item_id": items["item_id"], "order": order, **v}))
    judgments = _judgments(items, pd.concat(parts, ignore_index=True), judge)
    key = (
        bias,
        form,
        position,
        skill,
        p_longer_better,
        length_kind,
        ratio_spread,
        ties,
        invalid,
        invalid_wrong,
        invalid_long,
        design.icc,
        design.effect_sd,
    )
    truth = _pairwise_truth(key)
    params = dict(
        bias=bias,
        form=form,
        position=position,
        skill=skill,
        p_longer_better=p_longer_better,
        length_kind=length_kind,
        design=design,
    )
    return Simulation(items, judgments, dict(truth), params)


def _judgments(items: pd.DataFrame, rows: pd.DataFrame, judge: str) -> pd.DataFrame:
    keys = items[["benchmark", "split", "item_id", "cluster"]]
    rows = rows.merge(keys, on="item_id", how="left")
    out = base.judgments_table(
        {
            "benchmark": rows["benchmark"],
            "split": rows["split"],
            "item_id": rows["item_id"],
            "judge": judge,
            "condition": "",
            "order": rows["order"].astype(int),
            "sample": 0,
            "verdict": rows["verdict"],
            "chosen": rows["chosen"],
            "correct": rows["correct"],
        }
    )
    out["cluster"] = rows["cluster"].to_numpy()
    return out


# ---------------------------------------------------------------- context length


__all__ = [
    "FORMS",
    "KINDS",
    "LINEAR_SCALE",
    "LONG_CONTEXT",
    "pairwise_lengths",
]
