"""Batch back-ends: the online runner's requests through batch APIs, into the same cache.

- `formats`: batch input lines (OpenAI / vLLM, Anthropic) and reading their output lines
  into the cache record the online loop stores;
- `export`: plan exactly what the online runner would request (minus what is cached or in
  flight), write it as sharded JSONL, price it at batch rates (`estimate`);
- `registry`: the persisted record of submitted batches (survives kill -9 and restarts;
  a broken batch is reported and kept until collected or abandoned);
- `ingest`: output files into the request cache, idempotently, errors counted;
- `openai_batches`: submit / poll / cancel / collect through the `openai` SDK;
- `anthropic_batches`: the same for Anthropic Message Batches (optional `anthropic` SDK);
- `backend`: `submit_missing`, `collect`, `run_batch` (`judgelab judge --backend batch`);
- `ray_run`: exported shards through Ray Data's LLM processor (optional `judgelab[ray]`).
"""

from __future__ import annotations

from judgelab.judges.batch.backend import collect, run_batch, submit_missing, write_table
from judgelab.judges.batch.export import estimate, pending, plan_requests, write_shards
from judgelab.judges.batch.formats import BatchFormatError
from judgelab.judges.batch.ingest import IngestReport, ingest_file, requests_of_input
from judgelab.judges.batch_registry import Entry, Registry

__all__ = [
    "BatchFormatError",
    "Entry",
    "IngestReport",
    "Registry",
    "collect",
    "estimate",
    "ingest_file",
    "pending",
    "plan_requests",
    "requests_of_input",
    "run_batch",
    "submit_missing",
    "write_shards",
    "write_table",
]
