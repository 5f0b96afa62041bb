"""Building blocks of the planted-truth generators: clusters, heavy tails, schema tables.

A simulated benchmark is made of `Design.n_clusters` clusters (sources, documents,
questions) of `Design.per_cluster` items each. Judge behaviour lives on a latent logit
scale; a cluster adds a shared normal effect whose variance gives the requested latent
intra-cluster correlation (`cluster_effects`: σ² = icc / (1 − icc) · π² / 3, the logistic
variance). Lengths are heavy-tailed (`heavy_tailed`: log-normal, or |Student t|), so a few
extreme items exist as in real benchmarks.

Tables go through the real schema (`schema.new_items`, `schema.new_judgments`): every
analysis runs on a simulation unchanged. Population truths (`Simulation.truth`) are
computed from the planted parameters — in closed form, or by `expectation` over a large
independent draw of the latent variables — never from the simulated sample.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from judgelab.core import schema

#: Latent variance of the standard logistic distribution (π² / 3).
LOGISTIC_VAR = np.pi**2 / 3


@dataclass(frozen=True)
class Design:
    """How many clusters, how many items each, how strongly they hang together, how they vary.

    Equal sizes by default (`per_cluster` items in each of `n_clusters`). With
    `size_spread` > 0 sizes are unequal, as in real corpora: `realise(rng)` draws them as
    1 + Multinomial(n_items − G, w) with log-normal weights w ∝ exp(size_spread · z), so
    singletons sit next to a cluster holding a third or half of the items (`per_cluster` is
    then the mean size). `effect_sd` is the SD, on the latent (logit) scale, of effects that
    vary by cluster: each family draws its planted effect per cluster around its mean
    (`cluster_slopes`). A generator calls `realise` once per draw; `sizes` then holds the
    realised cluster sizes.
    """

    n_clusters: int = 60
    per_cluster: int = 5
    icc: float = 0.3
    benchmark: str = "sim"
    split: str = "test"
    size_spread: float = 0.0
    effect_sd: float = 0.0
    sizes: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.n_clusters < 1 or self.per_cluster < 1:
            raise ValueError(f"need >= 1 cluster and item per cluster, got {self}")
        if not 0.0 <= self.icc < 1.0:
            raise ValueError(f"icc must be in [0, 1), got {self.icc}")
        if self.size_spread < 0 or self.effect_sd < 0:
            raise ValueError(f"size_spread and effect_sd must be >= 0, got {self}")
        if self.sizes is not None and (len(self.sizes) != self.n_clusters or min(self.sizes) < 1):
            raise ValueError(f"need one size >= 1 per cluster, got {self.sizes}")

    @property
    def n_items(self) -> int:
        """Items in the benchmark (realised, or the planned total before `realise`)."""
        if self.sizes is not None:
            return int(sum(self.sizes))
        return self.n_clusters * self.per_cluster

    @property
    def cluster_sizes(self) -> np.ndarray:
        """Items per cluster (equal sizes unless realised unequal)."""
        if self.sizes is not None:
            return np.asarray(self.sizes, dtype=np.int64)
        return np.full(self.n_clusters, self.per_cluster, dtype=np.int64)

    def realise(self, rng: np.random.Generator) -> Design:
        """Return this design with its cluster sizes drawn (unchanged when sizes are equal)."""
        if self.sizes is not None or self.size_spread == 0:
            return self
        G, n = self.n_clusters, self.n_items
        w = np.exp(self.size_spread * rng.standard_normal(G))
        sizes = 1 + rng.multinomial(n - G, w / w.sum())
        return replace(self, sizes=tuple(int(x) for x in sizes))


@dataclass(frozen=True)
class Scenario:
    """One cell of the calibration grid: the shape of the data an estimator must survive."""

    sizes: str  # "balanced" | "unequal"
    effects: str  # "constant" | "varying"
    n_clusters: int
    n_items: int
    icc: float = 0.5

    @property
    def name(self) -> str:
        """A short label, e.g. `unequal/varying/G8/n48`."""
        return f"{self.sizes}/{self.effects}/G{self.n_clusters}/n{self.n_items}"

    def design(self, **overrides: Any) -> Design:
        """Return the `Design` of this scenario (keyword overrides: e.g. `benchmark`)."""
        per = max(1, round(self.n_items / self.n_clusters))
        base = Design(
            n_clusters=self.n_clusters,
            per_cluster=per,
            icc=self.icc,
            size_spread=SIZE_SPREAD if self.sizes == "unequal" else 0.0,
            effect_sd=EFFECT_SD if self.effects == "varying" else 0.0,
        )
        return replace(base, **overrides)


#: Log-normal spread of cluster weights in the unequal scenarios (one cluster often holds
#: a third to a half of the items when G is 8-15).
SIZE_SPREAD = 1.5
#: SD of cluster-varying effects (logit scale) in the varying scenarios.
EFFECT_SD = 0.5
#: Items per scenario: small (30-60 items, ~100 with 50 clusters) and moderate.
_N = {8: (48, 240), 15: (60, 240), 50: (100, 250)}
#: The calibration grid (DESIGN §9): balanced vs unequal sizes × constant vs cluster-varying
#: effects × {8, 15, 50} clusters × small and moderate n, intra-cluster correlation 0.5.
GRID: tuple[Scenario, ...] = tuple(
    Scenario(sizes, effects, g, n)
    for sizes in ("balanced", "unequal")
    for effects in ("constant", "varying")
    for g in (8, 15, 50)
    for n in _N[g]
)
#: The scenario of the project's earlier, balanced simulator (50 clusters of 5, ICC 0.3).
BALANCED = Scenario("balanced", "constant", 50, 250, icc=0.3)


def scenario(name: str) -> Scenario:
    """Return the grid scenario named `name` (`Scenario.name`), or `BALANCED` by "balanced"."""
    if name == "balanced":
        return BALANCED
    for s in GRID:
        if s.name == name:
            return s
    raise ValueError(f"unknown scenario {name!r}; known: {[s.name for s in GRID]}")


class Simulation(NamedTuple):
    """A simulated benchmark: its tables, the planted population truths and the parameters."""

    items: pd.DataFrame
    judgments: pd.DataFrame
    truth: dict[str, float]
    params: dict[str, Any]
    extra: Mapping[str, pd.DataFrame] | None = None  # other tables (ratings, human labels)


def sigmoid(x: np.ndarray | float) -> np.ndarray:
    """The logistic function."""
    return 1.0 / (1.0 + np.exp(-np.asarray(x, dtype=np.float64)))


def cluster_sd(icc: float) -> float:
    """Return the SD of a latent cluster effect giving intra-cluster correlation `icc`.

    >>> round(cluster_sd(0.0), 3), round(cluster_sd(0.5) ** 2 / LOGISTIC_VAR, 3)
    (0.0, 1.0)
    """
    return float(np.sqrt(icc / (1.0 - icc) * LOGISTIC_VAR))


def cluster_index(design: Design) -> np.ndarray:
    """Return the cluster number (0..n_clusters-1) of every item, items grouped by cluster."""
    return np.repeat(np.arange(design.n_clusters), design.cluster_sizes)


def cluster_effects(rng: np.random.Generator, design: Design) -> np.ndarray:
    """Return one latent effect per item, shared within its cluster (N(0, cluster_sd²))."""
    u = rng.normal(0.0, cluster_sd(design.icc), size=design.n_clusters)
    return u[cluster_index(design)]


def cluster_slopes(rng: np.random.Generator, design: Design, mean: float) -> np.ndarray:
    """Return a planted effect per item that varies by cluster: mean + N(0, effect_sd²).

    The effect is drawn once per cluster (a random slope); with `effect_sd` 0 it is `mean`
    everywhere. Symmetric around `mean`, so a null effect (mean 0) stays null on average.
    """
    e = mean + rng.normal(0.0, design.effect_sd, size=design.n_clusters)
    return e[cluster_index(design)]


def heavy_tailed(
    rng: np.random.Generator,
    n: int,
    *,
    median: float = 150.0,
    spread: float = 0.8,
    kind: str = "lognormal",
    df: float = 3.0,
) -> np.ndarray:
    """Return n positive integer lengths with a heavy right tail.

    `lognormal`: median · exp(spread · z); `t`: median · (1 + spread · |t_df|) — a Student-t
    tail (kurtosis undefined for df ≤ 4). Always ≥ 1.
    """
    if kind == "lognormal":
        x = median * np.exp(spread * rng.standard_normal(n))
    elif kind == "t":
        x = median * (1.0 + spread * np.abs(rng.standard_t(df, size=n)))
    else:
        raise ValueError(f"unknown length distribution {kind!r}; known: ['lognormal', 't']")
    return np.maximum(1, np.round(x)).astype(np.int64)


@lru_cache(maxsize=4096)
def words(n: int, token: str = "w") -> str:
    """Return a text of exactly n whitespace words (what `core.lengths` counts by default)."""
    return " ".join([token] * int(n))


def item_ids(design: Design) -> tuple[np.ndarray, np.ndarray]:
    """Return (item ids, cluster values) of a design: 'c007-i2' in cluster 'src-007'."""
    c = cluster_index(design)
    within = np.concatenate([np.arange(k) for k in design.cluster_sizes])
    ids = np.array([f"c{a:04d}-i{b}" for a, b in zip(c, within, strict=True)], dtype=object)
    clusters = np.array([f"src-{a:04d}" for a in c], dtype=object)
    return ids, clusters


def _table(rows: pd.DataFrame, spec: schema.TableSpec, validate: bool) -> pd.DataFrame:
    """Return rows as a table of `spec` in its canonical dtypes (validated when asked).

    Generators build thousands of tables in a calibration run; the checks of `schema.validate`
    are run by the simulator's tests (`validate=True`) rather than on every replicate.
    """
    for col in spec.columns:
        if col.required and col.name not in rows.columns:
            rows[col.name] = None
    ordered = rows[[c for c in spec.names if c in rows.columns]]
    if validate:
        schema.validate(ordered, spec)
    return schema.coerce(ordered, spec)


def items_table(
    design: Design, task: str, columns: Mapping[str, Any], *, validate: bool = False
) -> pd.DataFrame:
    """Return an items table of the design with `columns` (arrays or scalars), schema dtypes.

    Adds `benchmark`, `split`, `item_id`, `task` and `cluster` (the source of the item,
    prefixed like `core.clusters.derive`). Columns outside the schema are kept after it.
    """
    ids, clusters = item_ids(design)
    prefix = f"{design.benchmark}|meta|"
    rows = pd.DataFrame(
        {
            "benchmark": design.benchmark,
            "split": design.split,
            "item_id": ids,
            "task": task,
            "cluster": [prefix + c for c in clusters],
        }
    )
    for name, value in columns.items():
        rows[name] = value
    out = _table(rows.copy(), schema.ITEMS, validate)
    for name in columns:
        if name not in out.columns:
            out[name] = rows[name].to_numpy()
    return out


def judgments_table(
    columns: Mapping[str, Any], *, validate: bool = False, cluster: bool = True
) -> pd.DataFrame:
    """Return a judgments table from columns (arrays or scalars), in the schema's dtypes.

    Fills `condition` (""), `order`/`sample` (0), `model` from `judge`, `output` from `verdict`
    (an invalid verdict's raw output is the text "unparseable"), `valid` from `verdict` when
    not given. A `cluster` column given here is kept (what `data.catalog` attaches from the
    items: pass the item's cluster to save the join); `cluster=False` drops it.
    """
    df = pd.DataFrame(dict(columns))
    for name, default in (("condition", ""), ("order", 0), ("sample", 0)):
        if name not in df.columns:
            df[name] = default
    if "model" not in df.columns and "judge" in df.columns:
        df["model"] = df["judge"]
    if "valid" not in df.columns:
        df["valid"] = df["verdict"].notna()
    if "output" not in df.columns:
        df["output"] = df["verdict"].where(df["verdict"].notna(), "unparseable")
    out = _table(df.copy(), schema.JUDGMENTS, validate)
    if cluster and "cluster" in df.columns:
        out["cluster"] = df["cluster"].astype(str).to_numpy()
    return out


def expectation(
    fn: Callable[[np.random.Generator, int], np.ndarray], *, n: int = 400_000, seed: int = 12345
) -> float:
    """Return E[fn] estimated from one large independent draw (a population truth).

    `fn(rng, n)` returns n draws of the quantity; the seed is fixed so a truth is the same in
    every replicate (its own MC error, ~1/sqrt(n), is far below any interval's width).
    """
    return float(np.mean(fn(np.random.default_rng(seed), n)))


def missing_mask(
    rng: np.random.Generator,
    n: int,
    *,
    rate: float = 0.0,
    wrong: np.ndarray | None = None,
    rate_if_wrong: float | None = None,
) -> np.ndarray:
    """Return which of n verdicts are invalid.

    At `rate` for every verdict (missing at random), or, when `rate_if_wrong` is given, at
    that rate where `wrong` is True (missing not at random).
    """
    p = np.full(n, float(rate))
    if rate_if_wrong is not None:
        if wrong is None:
            raise ValueError("missing not at random needs `wrong`")
        p = np.where(np.asarray(wrong, dtype=bool), float(rate_if_wrong), p)
    return rng.random(n) < p
