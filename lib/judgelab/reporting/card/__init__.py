"""A judge's report card: every trust measure its data support, on one page.

The card's unit is a **judge key** `<source>:<judge id>` (e.g. `llmbar:GPT-4.Vanilla`,
`umass_llm_eval_triviaqa:GPT-4.umass`, `faithbench:gpt-4-turbo.faithbench`). The same model
appears under different ids in different sources (LLMBar "GPT-4.Vanilla", UMass "GPT-4",
FaithBench "gpt-4-turbo" — different prompts, model versions and tasks), so a key never
merges sources: each (source, judge id) gets its own card and its own row.

The measures are a registry (`judgelab.analyses.registry`): each analysis family registers
the card measures its data support in its `measures.py`, computed by its own public functions
(nothing is re-implemented here); `composite` holds the two that no single family owns.

Measures (family → applies to):

- `ca` per split and pooled, `consistency`, `pos_a_rate` + sign-test p (pairwise): pairwise,
  both orders (and gold for `ca`);
- `p_longer`, `length_coef` (length): pairwise; `context_trend` (length): items with a context
  text and gold;
- `kappa_human`, `agreement_human`, `fpr`, `fnr` (correctness; `pairwise_kappa` for pairwise
  judges): gold labels; `self_gap`: correctness judges with a model family;
  `kappa_answered`, `answered_gap`: judges that were also exam-takers;
- `kappa_reference` (reference conditions × correctness kappa): a model run with and without
  a reference;
- `alpha_peers` (juries): at least 2 other judges with the same prompt;
- `invalid_rate`, `cost_per_1k`, `latency_per_1k` (`stats.wilson_interval`,
  `stats.bootstrap_mean`): every judge.

Every row carries a value, an interval and n, or `status = "n/a"` and a `note` saying why
(e.g. "no two-order data"). `traffic_lights` grades the headline of each bias against
thresholds; `comparison_table` / `comparison_html` lay the headlines side by side (an
evaluator leaderboard in the spirit of alpaca_eval's), sortable in the exported HTML.

Modules: `sources` (keys, loading, banners), `measures` (running the registry), `lights`
(traffic lights), `html` (views), `items` (the items behind each leaderboard number),
`plots` (figures), `composite` (cross-family measures).
"""

from judgelab.reporting.card import plots as plots
from judgelab.reporting.card.finding import from_card as from_card
from judgelab.reporting.card.html import COMPARISON_MEASURES as COMPARISON_MEASURES
from judgelab.reporting.card.html import Html as Html
from judgelab.reporting.card.html import comparison_html as comparison_html
from judgelab.reporting.card.html import comparison_table as comparison_table
from judgelab.reporting.card.html import lights_view as lights_view
from judgelab.reporting.card.items import ITEM_MEASURES as ITEM_MEASURES
from judgelab.reporting.card.items import csv_link as csv_link
from judgelab.reporting.card.items import items_behind as items_behind
from judgelab.reporting.card.items import items_reason as items_reason
from judgelab.reporting.card.items import items_view as items_view
from judgelab.reporting.card.items import judge_items as judge_items
from judgelab.reporting.card.lights import DEFAULT_THRESHOLDS as DEFAULT_THRESHOLDS
from judgelab.reporting.card.lights import LIGHT_COLOURS as LIGHT_COLOURS
from judgelab.reporting.card.lights import LIGHTS as LIGHTS
from judgelab.reporting.card.lights import threshold_table as threshold_table
from judgelab.reporting.card.lights import traffic_light as traffic_light
from judgelab.reporting.card.lights import traffic_lights as traffic_lights
from judgelab.reporting.card.measures import COLUMNS as COLUMNS
from judgelab.reporting.card.measures import MEASURES as MEASURES
from judgelab.reporting.card.measures import ORDER as ORDER
from judgelab.reporting.card.measures import CardContext as CardContext
from judgelab.reporting.card.measures import CardOptions as CardOptions
from judgelab.reporting.card.measures import card_measures as card_measures
from judgelab.reporting.card.measures import collect as collect
from judgelab.reporting.card.measures import collect_measures as collect_measures
from judgelab.reporting.card.measures import headlines as headlines
from judgelab.reporting.card.measures import measures_view as measures_view
from judgelab.reporting.card.sources import CardKey as CardKey
from judgelab.reporting.card.sources import CardSource as CardSource
from judgelab.reporting.card.sources import card_keys as card_keys
from judgelab.reporting.card.sources import judges_overview as judges_overview
from judgelab.reporting.card.sources import load_sources as load_sources
from judgelab.reporting.card.sources import parse_key as parse_key
from judgelab.reporting.card.sources import show_banners as show_banners
from judgelab.reporting.card.sources import title as title

__all__ = [
    "from_card",
    "COLUMNS",
    "COMPARISON_MEASURES",
    "ITEM_MEASURES",
    "DEFAULT_THRESHOLDS",
    "LIGHTS",
    "LIGHT_COLOURS",
    "MEASURES",
    "ORDER",
    "CardContext",
    "CardKey",
    "CardOptions",
    "CardSource",
    "Html",
    "card_keys",
    "card_measures",
    "collect",
    "collect_measures",
    "comparison_html",
    "comparison_table",
    "csv_link",
    "headlines",
    "items_behind",
    "items_reason",
    "items_view",
    "judge_items",
    "judges_overview",
    "lights_view",
    "load_sources",
    "measures_view",
    "parse_key",
    "plots",
    "show_banners",
    "threshold_table",
    "title",
    "traffic_light",
    "traffic_lights",
]
