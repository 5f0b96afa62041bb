"""The data catalog: every loader, one place that finds, fetches and reads tables by name.

`core` holds the generic loaders (items and judgments of a registry source or sample, with
the labelled-sample fallback); one module per analysis family holds that family's loaders.
"""

from judgelab.data.catalog import contexteval, faithfulness, length, prompting
from judgelab.data.catalog.core import (
    SAMPLE_PREFIX,
    Loaded,
    SourceNotFound,
    is_sample,
    items_path,
    judgments_path,
    load_benchmark_items,
    load_items,
    load_judgments,
    load_or_none,
    load_source,
    read_records,
    sample_names,
    select,
    source_specific,
    strip_clusters,
    with_clusters,
)

__all__ = [
    "contexteval",
    "faithfulness",
    "length",
    "prompting",
    "Loaded",
    "SAMPLE_PREFIX",
    "SourceNotFound",
    "is_sample",
    "items_path",
    "judgments_path",
    "load_benchmark_items",
    "load_items",
    "load_judgments",
    "load_or_none",
    "load_source",
    "read_records",
    "sample_names",
    "select",
    "source_specific",
    "strip_clusters",
    "with_clusters",
]
