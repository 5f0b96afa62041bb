"""Judges: run any judge over any benchmark, cached, resumable and honest about failures.

- `spec`: `JudgeSpec` from YAML or a dict (`load`, `from_dict`, `resolve`); keys only from env.
- `templates`: the prompt-template registry grouped by paper, each with its verdict parser.
- `parsers`: the verdict parsers, one module per paper (never guess: no verdict →
  `valid=False`, raw output kept).
- `baselines`: the offline baselines by name, with their options; `offline`: their rules
  (prefer-longer, always-A, lexical grounding, reference similarity) and engine.
- `resolved`: `Resolved`, a judge resolved once (spec + template or baseline + conditions).
- `table`: `plan` (the exact requests) and `build` (the judgment table as a pure function of
  items + spec + cached responses); `rows`: the judgment and diagnostics rows both engines
  write.
- `runner`: `run`, `dry_run`, `build_from_cache`; `requesting`: a run's request phase;
  `loop`: the request loop (retries, store-on-arrival) on `eventloop`'s loop; `workers`: one
  fetch over several processes (`spec.workers`), whose answers `prebuild` parses while they
  arrive; `store`: where the tables live and writing them; `summary`: what a run reports.
- `batch`: the same requests through batch APIs, vLLM `run-batch` and Ray, into the cache.
- `cache`: the SQLite request cache; `claims`: which run is fetching which key, so runs
  sharing a cache never pay twice; `clients`: the HTTP clients (aiohttp, the openai SDK) and
  their one error contract; `references`: reference texts per reference condition; `chain`:
  the ContextEval generation → rating chain.
"""

from __future__ import annotations

from judgelab.core.lazy import face

# Names are imported on first use: `judgelab judge --list-templates` reads `templates` only
# and must not load pandas, numpy or pyarrow (issue 34, item 6).
_WHERE = {
    **{m: m for m in ("resolved", "runner", "spec", "table")},
    "Resolved": "resolved",
    **{n: "runner" for n in ("Estimate", "JudgeRunError", "RunResult", "Summary")},
    **{n: "runner" for n in ("build_from_cache", "dry_run", "run")},
    **{n: "spec" for n in ("JudgeSpec", "JudgeSpecError", "from_dict", "load", "resolve")},
    **{n: "table" for n in ("Built", "Plan", "build", "plan")},
}
__getattr__ = face(__name__, _WHERE)

__all__ = [
    "Built",
    "Estimate",
    "JudgeRunError",
    "JudgeSpec",
    "JudgeSpecError",
    "Plan",
    "Resolved",
    "RunResult",
    "Summary",
    "build",
    "build_from_cache",
    "dry_run",
    "from_dict",
    "load",
    "plan",
    "resolve",
    "run",
]
