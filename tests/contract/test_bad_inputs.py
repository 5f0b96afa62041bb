"""The bad-input corpus: every entry point, malformed input, a clear error, nothing half-written.

`CASES` lists every case: its id, the entry point, what is wrong, and the fragments the error
message must contain (`{d}` is the folder holding the inputs). One parametrized test builds
each input in a temporary folder, runs the entry point (the `judgelab` CLI in-process, or a
library call), and checks that:

- it fails: a non-zero exit status, or an exception;
- the message names the file, the line/row and the column/key (the fragments) and stays
  readable (a 10 MB cell must not make a 10 MB message);
- nothing was written: no file appears or changes under the output root (data, cache,
  reports, figures) nor beside the inputs, except where the case says what a failure writes
  on purpose (a failed notebook run keeps its executed copy, record and index).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from judgelab.cli import main as cli
from judgelab.core import schema, tables
from judgelab.judges.batch import Entry, Registry
from judgelab.testing.notebooks import write_notebook

ROOT = Path(__file__).resolve().parents[2]
BIG = 10_000_000  # a 10 MB single field
MAX_MESSAGE = 4000

# id, entry point, what is wrong, expected message fragments
CASES: list[tuple[str, str, str, list[str]]] = [
    # --- items / judgments parquet (`judgelab data validate`, `tables.write`) ---
    ("items_missing_column", "data validate", "no `task` column",
     ["{d}/items.parquet", "column 'task'", "missing column"]),
    ("items_renamed_column", "data validate", "`item_id` renamed to `id`",
     ["{d}/items.parquet", "column 'item_id'", "missing column"]),
    ("items_extra_column", "data validate", "an extra `score` column",
     ["{d}/items.parquet", "column 'score'", "unexpected column"]),
    ("items_nan_key", "data validate", "item_id null in row 2",
     ["{d}/items.parquet", "column 'item_id'", "row 2", "null value"]),
    ("items_duplicate_key", "data validate", "row 3 repeats row 1's key",
     ["{d}/items.parquet", "row 3", "item_id='i1'", "duplicate key"]),
    ("items_bad_task", "data validate", "task 'ranking' outside the domain",
     ["{d}/items.parquet", "column 'task'", "row 1", "'ranking'"]),
    ("items_meta_not_json", "data validate", "meta is not JSON in row 1",
     ["{d}/items.parquet", "column 'meta'", "row 1", "invalid JSON"]),
    ("items_empty_file", "data validate", "a 0-byte parquet file",
     ["{d}/items.parquet", "not a readable parquet"]),
    ("items_10mb_task", "data validate", "a 10 MB task cell",
     ["{d}/items.parquet", "column 'task'", "row 0", "chars]"]),
    ("items_10mb_duplicate_key", "data validate", "a 10 MB item_id, twice",
     ["{d}/items.parquet", "row 1", "duplicate key", "chars]"]),
    ("judgments_order_as_text", "data validate", "order holds strings",
     ["{d}/judgments.parquet", "column 'order'", "row 0", "wrong dtype"]),
    ("judgments_fractional_sample", "data validate", "sample 0.5 in row 2",
     ["{d}/judgments.parquet", "column 'sample'", "row 2", "wrong dtype"]),
    ("judgments_chosen_domain", "data validate", "chosen 'left' in row 1",
     ["{d}/judgments.parquet", "column 'chosen'", "row 1", "'left'"]),
    ("judgments_chosen_on_invalid", "data validate", "chosen set where valid is false",
     ["{d}/judgments.parquet", "column 'chosen'", "row 2", "invalid judgment"]),
    ("judgments_negative_tokens", "data validate", "prompt_tokens -5 in row 1",
     ["{d}/judgments.parquet", "column 'prompt_tokens'", "row 1", "below minimum"]),
    ("judgments_truncated", "data validate", "a parquet file cut in half",
     ["{d}/judgments.parquet", "not a readable parquet"]),
    ("write_invalid_judgments", "tables.write", "valid is null in row 1",
     ["{d}/out/j.parquet", "column 'valid'", "row 1", "null value"]),
    # --- items JSONL (`judgelab judge --benchmark FILE.jsonl`) ---
    ("jsonl_line_cut_in_half", "judge --benchmark", "line 3 ends mid-object",
     ["{d}/items.jsonl", "line 3", "malformed JSON"]),
    ("jsonl_line_not_object", "judge --benchmark", "line 2 is a JSON list",
     ["{d}/items.jsonl", "line 2", "expected a JSON object"]),
    ("jsonl_latin1", "judge --benchmark", "a Latin-1 byte on line 2",
     ["{d}/items.jsonl", "line 2", "not UTF-8", "0xe9"]),
    ("jsonl_utf16_bom", "judge --benchmark", "UTF-16 with a BOM",
     ["{d}/items.jsonl", "line 1", "UTF-16"]),
    ("jsonl_bom_mid_file", "judge --benchmark", "a BOM at the start of line 2",
     ["{d}/items.jsonl", "line 2", "malformed JSON"]),
    ("jsonl_missing_key_field", "judge --benchmark", "record on line 2 has no item_id",
     ["{d}/items.jsonl", "column 'item_id'", "row 2", "null value"]),
    ("jsonl_duplicate_key", "judge --benchmark", "line 3 repeats line 1's key",
     ["{d}/items.jsonl", "row 3", "duplicate key", "item_id='i1'"]),
    ("jsonl_int_item_id", "judge --benchmark", "item_id is a number",
     ["{d}/items.jsonl", "column 'item_id'", "wrong dtype"]),
    ("jsonl_empty", "judge --benchmark", "an empty file",
     ["{d}/items.jsonl", "empty file"]),
    ("jsonl_10mb_line_cut", "judge --benchmark", "a 10 MB field on line 2, cut",
     ["{d}/items.jsonl", "line 2", "malformed JSON"]),
    # --- generic importer (`judgelab data import-file`) and its column mapping ---
    ("csv_missing_column", "data import-file", "mapped column 'winner' absent",
     ["{d}/j.csv", "column 'winner'", "mapping field 'verdict'"]),
    ("csv_renamed_column", "data import-file", "header says swop, mapping swap",
     ["{d}/j.csv", "column 'swap'", "mapping field 'swapped'"]),
    ("csv_empty_file", "data import-file", "a 0-byte CSV",
     ["{d}/j.csv", "empty file"]),
    ("csv_header_only", "data import-file", "header, no rows",
     ["{d}/j.csv", "empty file (no data rows)"]),
    ("csv_latin1", "data import-file", "a Latin-1 byte on line 3",
     ["{d}/j.csv", "line 3", "not UTF-8"]),
    ("csv_utf16_bom", "data import-file", "UTF-16 with a BOM",
     ["{d}/j.csv", "line 1", "UTF-16"]),
    ("csv_ragged_row", "data import-file", "line 3 has an extra field",
     ["{d}/j.csv", "line 3", "Expected 8 fields"]),
    ("csv_bad_flag", "data import-file", "swap 'perhaps' in row 2",
     ["{d}/j.csv", "row 2", "column 'swap'", "true/false"]),
    ("csv_empty_item_id", "data import-file", "no id in row 2",
     ["{d}/j.csv", "row 2", "column 'id'", "empty item id"]),
    ("csv_unmapped_gold", "data import-file", "label '3' not in the gold map",
     ["{d}/j.csv", "row 3", "column 'label'", "not in the map"]),
    ("csv_conflicting_item", "data import-file", "item q1 with other responses",
     ["{d}/j.csv", "row 2", "item 'q1'", "other responses"]),
    # issue 34 item 5: without an item_id column ids come from the content
    ("csv_repeated_content_no_id", "data import-file", "one judge, the same text twice, no id",
     ["{d}/j.csv", "row 2", "column 'q'", "question 'Why?'", "judged again by 'imported'"]),
    ("csv_negative_sample", "data import-file", "sample -1 in row 1",
     ["{d}/j.csv", "row 1", "column 'run'", "non-negative"]),
    ("csv_10mb_flag", "data import-file", "a 10 MB swap cell",
     ["{d}/j.csv", "row 1", "column 'swap'", "chars]"]),
    ("import_jsonl_line_cut", "data import-file", "line 2 cut in half",
     ["{d}/j.jsonl", "line 2", "malformed JSON"]),
    ("import_unsupported_type", "data import-file", "an .xlsx file",
     ["{d}/j.xlsx", "unsupported file type"]),
    ("mapping_unknown_field", "data import-file", "mapping key 'questoin'",
     ["{d}/m.yaml", "mapping key 'questoin'", "unknown field"]),
    ("mapping_missing_benchmark", "data import-file", "no benchmark",
     ["{d}/m.yaml", "mapping key 'benchmark'", "missing"]),
    ("mapping_broken_yaml", "data import-file", "unclosed bracket",
     ["{d}/m.yaml", "line 3", "not valid YAML"]),
    ("mapping_latin1", "data import-file", "a Latin-1 byte on line 2",
     ["{d}/m.yaml", "line 2", "not UTF-8"]),
    ("mapping_bad_verdict_map", "data import-file", "verdict maps to 'first'",
     ["{d}/m.yaml", "mapping key 'verdict'", "'first'"]),
    # --- judge specs (`judgelab judge --judge FILE`) ---
    ("spec_unknown_template", "judge --judge", "template cjb.nope",
     ["{d}/judge.yaml", "key 'template'", "unknown template 'cjb.nope'"]),
    # issue 34 item 5: without `id:` the id is model + template, refused when not a safe name
    ("spec_id_from_model_unsafe", "judge --judge", "model 'my model', no id",
     ["judge spec 'judge'", "no `id:` (set one)", "'my model__cjb.workflow__127.0.0.1:9'"]),
    ("spec_zero_concurrency", "judge --judge", "concurrency: 0",
     ["{d}/judge.yaml", "key 'concurrency'", "0 must be at least 1"]),
    ("spec_negative_concurrency", "judge --judge", "concurrency: -4",
     ["{d}/judge.yaml", "key 'concurrency'", "-4 must be at least 1"]),
    ("spec_text_concurrency", "judge --judge", "concurrency: many",
     ["{d}/judge.yaml", "key 'concurrency'", "expected a number"]),
    ("spec_unknown_key", "judge --judge", "a typo: temprature",
     ["{d}/judge.yaml", "key 'temprature'", "unknown key"]),
    ("spec_missing_model", "judge --judge", "no model",
     ["{d}/judge.yaml", "key 'model'", "missing"]),
    ("spec_literal_api_key", "judge --judge", "api_key: sk-...",
     ["{d}/judge.yaml", "key 'api_key'", "literal API key"]),
    ("spec_unknown_baseline", "judge --judge", "offline model nope",
     ["{d}/judge.yaml", "key 'model'", "unknown offline baseline 'nope'"]),
    ("spec_bad_orders", "judge --judge", "orders: [2]",
     ["{d}/judge.yaml", "key 'orders'", "[2]"]),
    ("spec_empty_file", "judge --judge", "an empty file",
     ["{d}/judge.yaml", "empty file"]),
    ("spec_broken_yaml", "judge --judge", "a tab-indented mapping",
     ["{d}/judge.yaml", "not valid YAML", "line 3"]),
    ("spec_latin1", "judge --judge", "a Latin-1 byte on line 2",
     ["{d}/judge.yaml, line 2", "not UTF-8"]),
    ("spec_unknown_name", "judge --judge", "no spec named nope",
     ["no judge spec named 'nope'"]),
    ("spec_client_streams", "judge --judge", "client: streams (removed in issue 32)",
     ["{d}/judge.yaml", "key 'client'", "'streams' was removed", "'aiohttp'", "'openai'"]),
    # issue 32 item 18: Azure Functions / API Management keys in a base_url query
    ("spec_base_url_azure_code", "judge --judge", "base_url ...?code=<function key>",
     ["{d}/judge.yaml", "key 'base_url'", "literal API key"]),
    ("spec_base_url_subscription_key", "judge --judge", "base_url ...?subscription-key=",
     ["{d}/judge.yaml", "key 'base_url'", "literal API key"]),
    ("spec_base_url_x_api_key", "judge --judge", "base_url ...?x-api-key=",
     ["{d}/judge.yaml", "key 'base_url'", "literal API key"]),
    # --- CLI arguments ---
    ("cli_unknown_split", "judge --split", "split nope",
     ["--split", "unknown split(s) ['nope']", "contextualjudgebench"]),
    ("cli_zero_limit", "judge --limit", "--limit 0", ["--limit", "got 0"]),
    ("cli_negative_limit", "judge --limit", "--limit -2", ["--limit", "got -2"]),
    ("cli_text_limit", "judge --limit", "--limit ten", ["--limit", "'ten'"]),
    ("cli_bad_order", "judge --order", "--order 2", ["--order", "invalid choice: 2"]),
    ("cli_unknown_benchmark", "judge --benchmark", "benchmark nobench",
     ["items source 'nobench'", "nobench.parquet"]),
    ("cli_unknown_condition", "judge --condition", "condition bogus=1",
     ["cjb.workflow", "condition key 'bogus'"]),
    ("cli_unknown_source", "data import", "source nope", ["unknown source 'nope'"]),
    # issue 35 item 4: `compare` names the benchmark and the judges it has
    ("cli_compare_unknown_judge", "compare", "judge B 'nope' is not in the benchmark",
     ["benchmark 'sample:contextualjudgebench'", "got 'nope'", "sample-judge-1-always-first"]),
    # issue 34 item 5: --judge is optional only with --list-templates
    ("cli_judge_missing", "judge --judge", "no --judge, no --list-templates",
     ["--judge is required"]),
    ("cli_bad_table_kind", "data validate --kind", "--kind votes",
     ["--kind", "invalid choice: 'votes'"]),
    # --- params YAML and notebook parameters (`judgelab run`) ---
    ("params_undeclared_key", "run --params", "colour is not a parameter",
     ["{d}/bad.yaml", "key 'colour'", "not a parameter of notebook 90_bad"]),
    ("params_broken_yaml", "run --params", "unclosed list on line 2",
     ["{d}/bad.yaml, line 3", "invalid YAML"]),
    ("params_not_mapping", "run --params", "a YAML list",
     ["{d}/bad.yaml", "expected a mapping"]),
    ("params_utf16_bom", "run --params", "UTF-16 with a BOM",
     ["{d}/bad.yaml, line 1", "UTF-16"]),
    ("params_latin1", "run --params", "a Latin-1 byte on line 2",
     ["{d}/bad.yaml, line 2", "not UTF-8"]),
    ("params_credential_key", "run --params", "api_key: ...",
     ["{d}/bad.yaml", "key 'api_key'", "credential"]),
    ("params_secret_value", "run --params", "the key's value under `source`",
     ["{d}/bad.yaml", "key 'source'", "secret"]),
    ("override_undeclared", "run -p", "-p colour=red",
     ["-p overrides", "key 'colour'", "not a parameter of notebook 90_bad"]),
    ("override_no_equals", "run -p", "-p splits", ["-p 'splits'", "key=value"]),
    ("override_bad_name", "run -p", "-p 1x=2", ["'1x' is not a valid parameter name"]),
    ("override_unknown_judge", "run -p", "-p judges=[nope]: the notebook raises",
     ["reports/90_bad/default.ipynb", "cell 2", "unknown judge(s) ['nope']"]),
    # --- issue 19: names as paths, YAML bombs, secret shapes, deep JSON ---
    ("run_name_dotdot", "run --run", "--run .. (deleted every figure)",
     ["run name '..'", "only of dots"]),
    ("run_name_slash", "run --run", "--run a/b", ["run name 'a/b'", "path separator"]),
    ("params_yaml_bomb", "run --params", "nine levels of YAML aliases",
     ["{d}/bad.yaml, line", "anchors and aliases"]),
    ("params_hf_token", "run --params", "a Hugging Face token as a value",
     ["{d}/bad.yaml", "key 'source'", "secret"]),
    ("spec_yaml_bomb", "judge --judge", "a spec with YAML aliases",
     ["{d}/judge.yaml", "anchors and aliases"]),
    ("spec_id_dotdot", "judge --judge", "id: ..", ["key 'id'", "only of dots"]),
    ("mapping_benchmark_escapes", "data import-file", "benchmark: ../outside",
     ["benchmark name '../outside'", "path separator"]),
    ("mapping_yaml_bomb", "data import-file", "a mapping with YAML aliases",
     ["{d}/m.yaml", "anchors and aliases"]),
    ("jsonl_nested_too_deep", "data import-file", "a JSON record nested 5,000 deep",
     ["{d}/j.jsonl", "line 1", "nested too deeply"]),
    # --- issue 21: the importer's shapes (paths, explode, file names, joins, meta) ---
    ("mapping_bad_path", "data import-file", "verdict path eval..verdict",
     ["{d}/m.yaml", "mapping key 'verdict'", "eval..verdict"]),
    ("path_absent_everywhere", "data import-file", "eval.verdikt in no record",
     ["{d}/j.jsonl", "column 'eval.verdikt'", "absent from every record", "verdict, why"]),
    ("explode_not_a_list", "data import-file", "judgments is an object on line 2",
     ["{d}/j.jsonl", "line 2", "column 'judgments'", "expected a list"]),
    ("filename_no_match", "data import-file", "judge=(.+) against j.jsonl",
     ["{d}/j.jsonl", "mapping key 'judge'", "does not match"]),
    ("filename_no_group", "data import-file", "a file-name pattern without a group",
     ["{d}/m.yaml", "mapping key 'judge'", "capture group"]),
    ("glob_no_match", "data import-file", "a pattern that matches no file",
     ["{d}/nope/*.jsonl", "no file matches"]),
    ("join_line_count", "data import-file", "an output file one line short",
     ["{d}/out_b.jsonl", "join by line", "1 records here but 2"]),
    ("join_unknown_key", "data import-file", "output key q9 is not an item",
     ["{d}/out_a.jsonl", "line 2", "column 'qid'", "join key 'q9'"]),
    ("join_duplicate_key", "data import-file", "output key q1 twice",
     ["{d}/out_a.jsonl", "line 2", "join key 'q1' repeats line 1"]),
    ("join_missing_file", "data import-file", "a joined file that is absent",
     ["{d}/out_b.jsonl", "file not found"]),
    ("join_bad_spec", "data import-file", "join.files is a list",
     ["{d}/m.yaml", "mapping key 'join'", "files must map a name"]),
    ("judgment_meta_not_paths", "data import-file", "judgment_meta: 5",
     ["{d}/m.yaml", "mapping key 'judgment_meta'"]),
    # issue 37 item 2: optional paths, path captures, column joins, .txt, named keys
    ("optional_not_a_flag", "data import-file", "optional: maybe",
     ["{d}/m.yaml", "mapping key 'verdict'", "optional must be true or false"]),
    ("path_capture_no_match", "data import-file", "evaluators/(..)/ against j.jsonl's path",
     ["{d}/j.jsonl", "mapping key 'judge'", "the file path does not match"]),
    ("join_columns_missing_row", "data import-file", "out_b.jsonl has no row for q2",
     ["{d}/items.jsonl", "line 2", "column 'id'", "out_b.jsonl has no row with join key 'q2'"]),
    ("join_adds_unknown", "data import-file", "join adds: both",
     ["{d}/m.yaml", "mapping key 'join.adds'", "'both'"]),
    # --- issue 38 item 2: shapes the column-wise importer now reads (it declines, the record
    # path names the place) ---
    ("parquet_bad_flag", "data import-file", "a parquet file, swap 'perhaps' in row 2",
     ["{d}/j.parquet", "row 2", "column 'swap'", "true/false"]),
    ("nested_conflicting_item", "data import-file", "item q1's nested question differs",
     ["{d}/j.jsonl", "line 2", "column 'input.q'", "differs"]),
    ("exploded_index_unmapped", "data import-file", "a third judgment, _index 2 unmapped",
     ["{d}/j.jsonl", "line 1", "judgments[2]", "column '_index'", "not in the map"]),
    ("joined_bad_flag", "data import-file", "out_b.jsonl line 2: s 'perhaps'",
     ["{d}/items.jsonl", "line 2", "out_b.jsonl line 2", "column 'joined.s'", "true/false"]),
    ("txt_without_column", "data import-file", "a .txt data file, no txt_column",
     ["{d}/labels.txt", "txt_column: NAME"]),
    ("explode_key_absent", "data import-file", "line 2 has no 'swap = True'",
     ["{d}/j.jsonl", "line 2", "column 'results[-1]'", "key 'swap = True' is absent"]),
    ("explode_keys_not_a_list", "data import-file", "explode keys: a string",
     ["{d}/m.yaml", "mapping key 'explode'", "keys: [KEY, ...]"]),
    ("all_verdicts_invalid", "data import-file", "every verdict outside the map",
     ["{d}/j.csv", "column 'winner'", "all 3 verdicts are invalid", "'A'", "'B'",
      "--allow-invalid"]),
    ("item_question_differs", "data import-file", "q1's question differs in row 2",
     ["{d}/j.csv", "row 2", "column 'instruction'", "differs from", "row 1"]),
    ("item_meta_differs", "data import-file", "a per-judgment value mapped as item meta",
     ["{d}/j.csv", "row 2", "meta.judge", "judgment_meta"]),
    # issue 37 item 1: the bridges (`data import-file LOG --from inspect|promptfoo|lm-eval`)
    ("bridge_unknown_reader", "data import-file", "reader: langsmith",
     ["{d}/m.yaml", "mapping key 'reader'", "unknown reader 'langsmith'", "inspect"]),
    ("bridge_inspect_not_a_log", "data import-file --from", "a text file named run.eval",
     ["{d}/run.eval", "not an Inspect eval log"]),
    ("bridge_inspect_no_samples", "data import-file --from", "a real .json log, samples cut",
     ["{d}/log.json", "the log holds no samples", "log_samples"]),
    ("bridge_promptfoo_not_results", "data import-file --from", "a JSON list, not -o output",
     ["{d}/results.json", "not a promptfoo results file"]),
    ("bridge_select_best_three", "data import-file --from", "select-best over 3 outputs",
     ["{d}/results.json", "test 0: select-best over 3 outputs", "two-way"]),
    ("bridge_lm_eval_misnamed", "data import-file --from", "an lm-eval file renamed out.jsonl",
     ["{d}/out.jsonl", "samples_<task>_<timestamp>.jsonl"]),
    ("bridge_reader_conflict", "data import-file --from", "--from inspect, reader: promptfoo",
     ["{d}/m.yaml", "mapping key 'reader'", "conflicts with --from inspect"]),
    ("import_file_no_mapping", "data import-file", "neither --mapping nor --from",
     ["--mapping", "--from TOOL"]),
    ("bridge_unknown_tool", "data import-file --from", "--from langsmith",
     ["--from must be one of", "'inspect'", "'langsmith'"]),
    # --- issue 32: batch registry ids, export prefixes, abandon (`judgelab batch ...`) ---
    ("batch_registry_id_escapes", "batch status --offline", "b1.json says local_id ../../x",
     ["batches/b1.json", "batch id '../../x'", "does not match its file name"]),
    ("batch_registry_unsafe_file", "batch status --offline", "a registry file 'b x.json'",
     ["batches/b x.json", "batch id name 'b x'"]),
    ("batch_export_prefix_glob", "batch export --prefix", "--prefix '*' (deleted shards)",
     ["--prefix", "shard prefix name '*'"]),
    ("batch_export_prefix_escapes", "batch export --prefix", "--prefix ../up",
     ["--prefix", "shard prefix name '../up'", "path separator"]),
    ("batch_abandon_healthy", "batch abandon", "a batch in progress, no --force",
     ["batch batch_000007", "not broken", "--force"]),
    ("batch_abandon_unknown", "batch abandon", "an id no batch has",
     ["no batch 'batch_nope'"]),
    # --- issue 32: imports sharing tables (joined files, judge names, another import's rows) ---
    ("join_file_dotdot", "data import-file", "join.files a: ../out_a.jsonl",
     ["{d}/m.yaml", "mapping key 'join.files.a'", "stay inside the folder"]),
    ("join_file_absolute", "data import-file", "join.files a: an absolute path",
     ["{d}/m.yaml", "mapping key 'join.files.a'", "stay inside the folder"]),
    ("join_file_symlink", "data import-file", "out_a.jsonl links to a file outside",
     ["{d}/data/out_a.jsonl", "mapping key 'join.files.a'", "outside the data file's folder"]),
    ("judge_name_non_ascii", "data import-file", "judge jugé in row 2",
     ["{d}/j.csv", "row 2", "column 'judge'", "judge name 'jugé'", "U+00E9"]),
    ("judge_name_nfd", "data import-file", "judge jugé (NFD) in row 1",
     ["{d}/j.csv", "row 1", "column 'judge'", "U+0301", "never rewritten"]),
    ("judge_name_case_only", "data import-file", "GPT-4 where gpt-4 was imported",
     ["{d}/two.csv", "judge name 'GPT-4'", "only by case", "'gpt-4'"]),
    ("import_rows_clash", "data import-file", "the same file, verdicts mapped backwards",
     ["{d}/j.csv", "3 judgments rows of", "different content", "{d}/m.yaml",
      "--replace"]),
    # --- issue 33: inference options of the library calls the notebooks make ---
    ("self_vs_others_inference", "correctness.self_vs_others", "inference='normal'",
     ["inference must be one of ('wild', 'bootstrap')", "got 'normal'"]),
    ("compare_conditions_test", "reference.compare_conditions", "test='wald'",
     ["test must be one of ('wild', 'bootstrap', 'mcnemar')", "got 'wald'"]),
    # --- issue 33: inference options of the juries / prompting / faithfulness analyses ---
    ("alpha_unknown_interval", "juries.alpha_table", "interval='bootstrap'",
     ["interval must be one of", "'jackknife'", "got 'bootstrap'"]),
    ("jury_wild_reselect", "juries.jury_table", "the wild interval with a re-selected member",
     ["best_member='reselect'", "'basic' or 'percentile'"]),
    ("strategy_unknown_test", "prompting.strategy_comparison", "test='t'",
     ["test must be one of", "'wild'", "got 't'"]),
    # --- issue 33: grounding estimands and study plans ---
    ("ppi_unknown_target", "grounding.estimates", "target='sample'",
     ["target must be one of ('population', 'items')", "'sample'"]),
    ("ppi_cluster_labels_partial", "grounding.estimates",
     "labels_by='cluster' with cluster c0 half labelled",
     ["labels_by='cluster'", "cluster 'c0'", "2 of 4 items labelled", "labels_by='item'"]),
    ("ppi_unknown_strata_combine", "grounding.estimates", "strata_combine='pooled'",
     ["strata_combine must be one of ('mover', 'joint')", "got 'pooled'"]),
    ("plan_negative_deff_floor", "plan position-bias --deff-floor", "--deff-floor -1",
     ["deff_floor must be >= 0", "-1"]),
    # --- issue 36: the transport audit and the judge choice (grounding) ---
    ("transport_unknown_train_slice", "grounding.transport.audit", "train=['gpt-5'] not a slice",
     ["train slices ['gpt-5']", "not among the slices of 'group'"]),
    ("transport_zero_margin", "grounding.transport.audit", "margin=0",
     ["margin must be > 0", "got 0"]),
    ("choice_one_judge", "grounding.choice.rank_judges", "a single judge to rank",
     ["rank_judges needs at least 2 judges", "['A']"]),
    ("confidence_score_not_probability", "grounding.confidence.scores", "a score of 7 (a rating)",
     ["probabilities in [0, 1]", "1 scores are not", "row 2: 7.0", "rescale"]),
    ("allocate_budget_too_small", "grounding.budget.allocate", "3 labels for 2 strata of 3",
     ["label budget 3 outside [4, 4]", "2 strata need 2 labels each"]),
    ("slices_unknown_judge", "grounding.slices.study", "judge 'GPT-5' not in the table",
     ["judge 'GPT-5' not in the table", "judges: ['A']"]),
    ("certificate_unknown_criterion", "reporting.certificate.check_margins",
     "a margin for 'posiiton' (misspelt)",
     ["certificate_margins: unknown criteria ['posiiton']", "known: ['agreement'"]),
    ("certificate_negative_margin", "reporting.certificate.check_margins", "length margin -0.05",
     ["certificate_margins: a margin must be > 0", "'length': -0.05"]),
    # --- issue 34: the finding a notebook declares (`out.finding`) ---
    ("finding_unnamed_measure", "notebook.Outputs.finding", "measure='value'",
     ["finding measure 'value'", "name the measure"]),
    ("finding_self_pairs_only", "notebook.Outputs.finding", "kappa of judges with themselves",
     ["finding \"Cohen's kappa\"", "no row with a 'kappa' left"]),
    ("finding_missing_column", "notebook.Outputs.finding", "value='ca' in a long table",
     ["no column(s) ['ca']", "it has ['judge', 'metric', 'value']"]),
    # --- issue 34 item 4: the card tables the index's leaderboard reads ---
    ("leaderboard_missing_column", "leaderboard.read_table", "traffic lights without `light`",
     ["{d}/traffic_lights.csv", "missing column(s) ['light']"]),
    ("leaderboard_text_in_a_number", "leaderboard.read_table", "value '0.8 [0.7, 0.9]'",
     ["{d}/measures.csv, row 3, column 'value'", "'0.8 [0.7, 0.9]' is not a number"]),
]  # fmt: skip

# What a failure writes on purpose (globs under the output root), by case.
ALLOWED_OUTPUTS = {
    # the failed run's page and the style sheet it links (shared by every page)
    "override_unknown_judge": ["reports/90_bad/*", "reports/index.html", "reports/_shared/*"],
    # the locks held while the import read the tables (and refused) record their holder
    "import_rows_clash": ["*.lock"],
}

BUILDERS: dict[str, Callable[[Path], list[str] | Callable[[], object]]] = {}


def builds(name):
    def register(fn):
        BUILDERS[name] = fn
        return fn

    return register


# ---------------------------------------------------------------- issue 33 (library calls)


@builds("self_vs_others_inference")
def _(d):
    from judgelab.analyses import correctness

    marked = pd.DataFrame(columns=["judge", "candidate_is_judge", "human", "verdict"])
    return lambda: correctness.self_vs_others(marked, inference="normal")


@builds("compare_conditions_test")
def _(d):
    from judgelab.analyses import reference

    return lambda: reference.compare_conditions(pd.DataFrame(), test="wald")


# ---------------------------------------------------------------- tables


def _items(n: int = 4) -> pd.DataFrame:
    return schema.new_items(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": f"i{k}",
                "task": "pairwise",
                "question": "q",
                "response_pos": "p",
                "response_neg": "n",
                "gold": "pos",
            }
            for k in range(n)
        ]
    )


def _judgments(n: int = 4) -> pd.DataFrame:
    return schema.new_judgments(
        [
            {
                "benchmark": "b",
                "split": "s",
                "item_id": f"i{k}",
                "judge": "j",
                "output": "[[A]]",
                "verdict": "A",
                "valid": True,
                "chosen": "pos",
                "correct": True,
                "prompt_tokens": 10,
            }
            for k in range(n)
        ]
    )


def _raw_parquet(df: pd.DataFrame, path: Path) -> Path:
    """Write `df` as parquet without validation (what a foreign tool might produce)."""
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    return path


def _validate(path: Path, kind: str) -> list[str]:
    return ["data", "validate", str(path), "--kind", kind]


def _items_case(mutate):
    def build(d: Path):
        df = _items().astype(object)
        df = mutate(df)
        return _validate(_raw_parquet(df, d / "items.parquet"), "items")

    return build


def _judgments_case(mutate):
    def build(d: Path):
        df = mutate(_judgments().astype(object))
        return _validate(_raw_parquet(df, d / "judgments.parquet"), "judgments")

    return build


def _set(df, row, col, value):
    df.loc[row, col] = value
    return df


BUILDERS["items_missing_column"] = _items_case(lambda df: df.drop(columns=["task"]))
BUILDERS["items_renamed_column"] = _items_case(lambda df: df.rename(columns={"item_id": "id"}))
BUILDERS["items_extra_column"] = _items_case(lambda df: df.assign(score=1.0))
BUILDERS["items_nan_key"] = _items_case(lambda df: _set(df, 2, "item_id", None))
BUILDERS["items_duplicate_key"] = _items_case(lambda df: _set(df, 3, "item_id", "i1"))
BUILDERS["items_bad_task"] = _items_case(lambda df: _set(df, 1, "task", "ranking"))
BUILDERS["items_meta_not_json"] = _items_case(lambda df: _set(df, 1, "meta", "{source: x"))
BUILDERS["items_10mb_task"] = _items_case(lambda df: _set(df, 0, "task", "x" * BIG))
BUILDERS["items_10mb_duplicate_key"] = _items_case(
    lambda df: _set(_set(df, 0, "item_id", "k" * BIG), 1, "item_id", "k" * BIG)
)
BUILDERS["judgments_order_as_text"] = _judgments_case(lambda df: df.assign(order="0"))
BUILDERS["judgments_fractional_sample"] = _judgments_case(
    lambda df: df.assign(sample=[0.0, 0.0, 0.5, 0.0])
)
BUILDERS["judgments_chosen_domain"] = _judgments_case(lambda df: _set(df, 1, "chosen", "left"))
BUILDERS["judgments_chosen_on_invalid"] = _judgments_case(lambda df: _set(df, 2, "valid", False))
BUILDERS["judgments_negative_tokens"] = _judgments_case(
    lambda df: df.assign(prompt_tokens=pd.array([10, -5, 10, 10], dtype="Int64"))
)


@builds("items_empty_file")
def _(d):
    (d / "items.parquet").write_bytes(b"")
    return _validate(d / "items.parquet", "items")


@builds("judgments_truncated")
def _(d):
    good = tables.write_judgments(_judgments(200), d / "good.parquet")
    data = good.read_bytes()
    good.unlink()
    (d / "judgments.parquet").write_bytes(data[: len(data) // 2])
    return _validate(d / "judgments.parquet", "judgments")


@builds("write_invalid_judgments")
def _(d):
    df = _judgments().astype(object)
    df.loc[1, "valid"] = None
    (d / "out").mkdir()
    return lambda: tables.write_judgments(df, d / "out" / "j.parquet")


# ---------------------------------------------------------------- items JSONL


def _item_line(k, **kw) -> str:
    row = {
        "benchmark": "b",
        "split": "s",
        "item_id": f"i{k}",
        "task": "pairwise",
        "question": "q",
        "context": "c",
        "response_pos": "p",
        "response_neg": "n",
        "gold": "pos",
        **kw,
    }
    return json.dumps({k: v for k, v in row.items() if v is not ...}, ensure_ascii=False)


def _judge_on(d: Path, benchmark: str, *extra: str) -> list[str]:
    spec = d / "offline.yaml"
    if not spec.exists():
        spec.write_text("endpoint: offline\nmodel: prefer_longer\n")
    return ["judge", "--judge", str(spec), "--benchmark", benchmark, "--no-progress", *extra]


def _jsonl_case(lines_or_bytes):
    def build(d: Path):
        p = d / "items.jsonl"
        content = lines_or_bytes() if callable(lines_or_bytes) else lines_or_bytes
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text("\n".join(content) + "\n", encoding="utf-8")
        return _judge_on(d, str(p))

    return build


BUILDERS["jsonl_line_cut_in_half"] = _jsonl_case(
    lambda: [_item_line(0), _item_line(1), _item_line(2)[:40], _item_line(3)]
)
BUILDERS["jsonl_line_not_object"] = _jsonl_case(lambda: [_item_line(0), "[1, 2]"])
BUILDERS["jsonl_latin1"] = _jsonl_case(
    lambda: (_item_line(0) + "\n" + _item_line(1, question="café") + "\n").encode("latin-1")
)
BUILDERS["jsonl_utf16_bom"] = _jsonl_case(
    lambda: (_item_line(0) + "\n" + _item_line(1) + "\n").encode("utf-16")
)
BUILDERS["jsonl_bom_mid_file"] = _jsonl_case(
    lambda: [_item_line(0), "\ufeff" + _item_line(1), _item_line(2)]
)
BUILDERS["jsonl_missing_key_field"] = _jsonl_case(
    lambda: [_item_line(0), _item_line(1, item_id=...), _item_line(2)]
)
BUILDERS["jsonl_duplicate_key"] = _jsonl_case(
    lambda: [_item_line(0), _item_line(1), _item_line(1)]
)
BUILDERS["jsonl_int_item_id"] = _jsonl_case(lambda: [_item_line(0, item_id=7)])
BUILDERS["jsonl_empty"] = _jsonl_case(b"")
BUILDERS["jsonl_10mb_line_cut"] = _jsonl_case(
    lambda: [_item_line(0), _item_line(1, context="z" * BIG)[: BIG // 2]]
)


# ---------------------------------------------------------------- mapped import

PAIR_CSV = (
    "id,instruction,out1,out2,label,swap,winner,judge\n"
    "q1,Say hi,Hello!,Go away.,1,false,[[A]],gpt-4\n"
    "q1,Say hi,Hello!,Go away.,1,true,[[A]],gpt-4\n"
    "q2,Add 2+2,5,4,2,false,[[B]],gpt-4\n"
)
PAIR_MAPPING = (
    "benchmark: demo\n"
    "item_id: id\n"
    "question: instruction\n"
    "response_1: out1\n"
    "response_2: out2\n"
    "gold: {column: label, map: {'1': '1', '2': '2', tie: tie}}\n"
    "swapped: swap\n"
    "verdict: {column: winner, map: {'[[A]]': A, '[[B]]': B, '[[C]]': tie}}\n"
    "judge: {column: judge}\n"
)


def _import_case(data: str | bytes | Callable[[], str | bytes], *, name="j.csv", mapping=None):
    def build(d: Path):
        p = d / name
        content = data() if callable(data) else data
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
        m = d / "m.yaml"
        mp = mapping if mapping is not None else PAIR_MAPPING
        if isinstance(mp, bytes):
            m.write_bytes(mp)
        else:
            m.write_text(mp, encoding="utf-8")
        return ["data", "import-file", str(p), "--mapping", str(m)]

    return build


def _csv_row(row: int, old: str, new: str) -> str:
    lines = PAIR_CSV.splitlines()
    lines[row] = lines[row].replace(old, new, 1)
    return "\n".join(lines) + "\n"


BUILDERS["csv_missing_column"] = _import_case(PAIR_CSV.replace(",winner,", ",verdict,"))
BUILDERS["csv_renamed_column"] = _import_case(PAIR_CSV.replace(",swap,", ",swop,"))
BUILDERS["csv_empty_file"] = _import_case("")
BUILDERS["csv_header_only"] = _import_case(PAIR_CSV.splitlines()[0] + "\n")
BUILDERS["csv_latin1"] = _import_case(_csv_row(2, "Hello!", "Café!").encode("latin-1"))
BUILDERS["csv_utf16_bom"] = _import_case(PAIR_CSV.encode("utf-16"))
BUILDERS["csv_ragged_row"] = _import_case(_csv_row(2, "gpt-4", "gpt-4,extra"))
BUILDERS["csv_bad_flag"] = _import_case(_csv_row(2, "true", "perhaps"))
BUILDERS["csv_empty_item_id"] = _import_case(_csv_row(2, "q1,", ","))
BUILDERS["csv_unmapped_gold"] = _import_case(_csv_row(3, ",2,false", ",3,false"))
BUILDERS["csv_conflicting_item"] = _import_case(_csv_row(2, "Go away.", "Leave."))
BUILDERS["csv_negative_sample"] = _import_case(
    "id,o1,o2,run,w\nq1,a,b,-1,A\n",
    mapping="benchmark: demo\nitem_id: id\nresponse_pos: o1\nresponse_neg: o2\n"
    "sample: run\nverdict: w\n",
)
BUILDERS["csv_repeated_content_no_id"] = _import_case(
    "q,o1,o2,w\nWhy?,a,b,A\nWhy?,a,b,B\n",
    mapping="benchmark: demo\nquestion: q\nresponse_pos: o1\nresponse_neg: o2\nverdict: w\n",
)
BUILDERS["csv_10mb_flag"] = _import_case(lambda: _csv_row(1, "false", "y" * BIG))
BUILDERS["import_jsonl_line_cut"] = _import_case(
    '{"id": "q1", "out1": "a", "out2": "b"}\n{"id": "q2", "out1": "a", "ou\n', name="j.jsonl"
)
BUILDERS["import_unsupported_type"] = _import_case(b"PK\x03\x04", name="j.xlsx")
BUILDERS["mapping_unknown_field"] = _import_case(
    PAIR_CSV, mapping=PAIR_MAPPING + "questoin: instruction\n"
)
BUILDERS["mapping_missing_benchmark"] = _import_case(
    PAIR_CSV, mapping=PAIR_MAPPING.replace("benchmark: demo\n", "")
)
BUILDERS["mapping_broken_yaml"] = _import_case(
    PAIR_CSV, mapping="benchmark: demo\nitem_id: id\nmeta: [a, b\nquestion: q\n"
)
BUILDERS["mapping_latin1"] = _import_case(
    PAIR_CSV, mapping="benchmark: demo\n# café\n".encode("latin-1")
)
BUILDERS["mapping_bad_verdict_map"] = _import_case(
    PAIR_CSV, mapping=PAIR_MAPPING.replace("'[[A]]': A", "'[[A]]': first")
)

# issue 21: the importer's shapes
NESTED = (
    '{"id": "q1", "r": ["a", "b"], "eval": {"verdict": "A", "why": "x"}, '
    '"judgments": [{"d": "A"}, {"d": "B"}]}\n'
    '{"id": "q2", "r": ["c", "d"], "eval": {"verdict": "B", "why": "y"}, '
    '"judgments": {"d": "A"}}\n'
)
NESTED_MAPPING = (
    "benchmark: demo\nitem_id: id\nresponse_1: r[0]\nresponse_2: r[1]\nverdict: eval.verdict\n"
)


def _files_case(files: dict[str, str], mapping: str, args: list[str]):
    def build(d: Path):
        for name, text in files.items():
            (d / name).parent.mkdir(parents=True, exist_ok=True)
            (d / name).write_text(text, encoding="utf-8")
        (d / "m.yaml").write_text(mapping, encoding="utf-8")
        return ["data", "import-file", *[str(d / a) for a in args], "--mapping", str(d / "m.yaml")]

    return build


ITEMS2 = '{"id": "q1", "r1": "a", "r2": "b"}\n{"id": "q2", "r1": "c", "r2": "d"}\n'
JOIN_MAPPING = (
    "benchmark: demo\nitem_id: id\nresponse_1: r1\nresponse_2: r2\n"
    "join: {files: {a: out_a.jsonl, b: out_b.jsonl}, on: line}\n"
    "swapped: {column: _join, map: {a: false, b: true}}\nverdict: joined.v\n"
)
KEYED = JOIN_MAPPING.replace("on: line", "on: {left: id, right: qid}")
OUT2 = '{"qid": "q1", "v": "A"}\n{"qid": "q2", "v": "B"}\n'

BUILDERS["mapping_bad_path"] = _import_case(
    NESTED, name="j.jsonl", mapping=NESTED_MAPPING.replace("eval.verdict", "eval..verdict")
)
BUILDERS["path_absent_everywhere"] = _import_case(
    NESTED, name="j.jsonl", mapping=NESTED_MAPPING.replace("eval.verdict", "eval.verdikt")
)
BUILDERS["explode_not_a_list"] = _import_case(
    NESTED,
    name="j.jsonl",
    mapping=NESTED_MAPPING.replace("eval.verdict", "judgments.d") + "explode: judgments\n",
)
BUILDERS["filename_no_match"] = _import_case(
    NESTED, name="j.jsonl", mapping=NESTED_MAPPING + "judge: {filename: 'judge=(.+)'}\n"
)
BUILDERS["filename_no_group"] = _import_case(
    NESTED, name="j.jsonl", mapping=NESTED_MAPPING + "judge: {filename: 'j.jsonl'}\n"
)
BUILDERS["glob_no_match"] = _files_case({}, NESTED_MAPPING, ["nope/*.jsonl"])
BUILDERS["join_line_count"] = _files_case(
    {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2, "out_b.jsonl": OUT2.splitlines()[0] + "\n"},
    JOIN_MAPPING,
    ["items.jsonl"],
)
BUILDERS["join_unknown_key"] = _files_case(
    {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2.replace("q2", "q9"), "out_b.jsonl": OUT2},
    KEYED,
    ["items.jsonl"],
)
BUILDERS["join_duplicate_key"] = _files_case(
    {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2.replace("q2", "q1"), "out_b.jsonl": OUT2},
    KEYED,
    ["items.jsonl"],
)
BUILDERS["join_missing_file"] = _files_case(
    {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2}, JOIN_MAPPING, ["items.jsonl"]
)
BUILDERS["join_bad_spec"] = _files_case(
    {"items.jsonl": ITEMS2},
    JOIN_MAPPING.replace("{a: out_a.jsonl, b: out_b.jsonl}", "[out_a.jsonl]"),
    ["items.jsonl"],
)
# issue 37 item 2
NAMED = (
    '{"id": "q1", "r": ["a", "b"], "results": [{"swap = False": {"w": "A"}, '
    '"swap = True": {"w": "B"}}]}\n'
    '{"id": "q2", "r": ["c", "d"], "results": [{"swap = False": {"w": "A"}}]}\n'
)
NAMED_MAPPING = (
    "benchmark: demo\nitem_id: id\nresponse_1: r[0]\nresponse_2: r[1]\n"
    'explode: {path: "results[-1]", keys: ["swap = False", "swap = True"]}\n'
    'swapped: {column: _key, map: {"swap = False": false, "swap = True": true}}\n'
    'verdict: "results[-1].w"\n'
)
BUILDERS["optional_not_a_flag"] = _import_case(
    NESTED,
    name="j.jsonl",
    mapping=NESTED_MAPPING.replace("eval.verdict", "{column: eval.verdict, optional: maybe}"),
)
BUILDERS["path_capture_no_match"] = _import_case(
    NESTED, name="j.jsonl", mapping=NESTED_MAPPING + "judge: {path: 'evaluators/([^/]+)/'}\n"
)
BUILDERS["join_columns_missing_row"] = _files_case(
    {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2, "out_b.jsonl": OUT2.splitlines()[0] + "\n"},
    KEYED.replace("on: {left: id, right: qid}", "on: {left: id, right: qid}, adds: columns")
    .replace("swapped: {column: _join, map: {a: false, b: true}}\n", "")
    .replace("verdict: joined.v", "verdict: joined.a.v"),
    ["items.jsonl"],
)
BUILDERS["join_adds_unknown"] = _files_case(
    {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2, "out_b.jsonl": OUT2},
    JOIN_MAPPING.replace("on: line", "on: line, adds: both"),
    ["items.jsonl"],
)


def _parquet_bad_flag(d: Path):
    frame = pd.read_csv(io.StringIO(_csv_row(2, "true", "perhaps")), dtype=str)
    frame.to_parquet(d / "j.parquet", index=False)
    (d / "m.yaml").write_text(PAIR_MAPPING, encoding="utf-8")
    return ["data", "import-file", str(d / "j.parquet"), "--mapping", str(d / "m.yaml")]


BUILDERS["parquet_bad_flag"] = _parquet_bad_flag
SHAPED = (
    '{"id": "q1", "input": {"q": "Hi?"}, "r1": "a", "r2": "b", '
    '"judgments": [{"v": "A", "s": "no"}, {"v": "B", "s": "yes"}]}\n'
    '{"id": "q1", "input": {"q": "Bye?"}, "r1": "a", "r2": "b", '
    '"judgments": [{"v": "A", "s": "no"}, {"v": "B", "s": "yes"}]}\n'
)
SHAPED_MAPPING = "benchmark: demo\nitem_id: id\nresponse_1: r1\nresponse_2: r2\n"
BUILDERS["nested_conflicting_item"] = _import_case(
    SHAPED, name="j.jsonl", mapping=SHAPED_MAPPING + "question: input.q\nverdict: judgments[0].v\n"
)
BUILDERS["exploded_index_unmapped"] = _import_case(
    SHAPED.replace('"Bye?"', '"Hi?"').replace('"s": "yes"}]', '"s": "yes"}, {"v": "A"}]', 1),
    name="j.jsonl",
    mapping=SHAPED_MAPPING
    + "explode: judgments\nverdict: judgments.v\n"
    + "swapped: {column: _index, map: {0: false, 1: true}}\n",
)
BUILDERS["joined_bad_flag"] = _files_case(
    {
        "items.jsonl": ITEMS2,
        "out_a.jsonl": '{"qid": "q1", "v": "A", "s": "no"}\n{"qid": "q2", "v": "B", "s": "no"}\n',
        "out_b.jsonl": '{"qid": "q1", "v": "A", "s": "yes"}\n'
        '{"qid": "q2", "v": "B", "s": "perhaps"}\n',
    },
    KEYED.replace("swapped: {column: _join, map: {a: false, b: true}}", "swapped: joined.s"),
    ["items.jsonl"],
)


BUILDERS["txt_without_column"] = _import_case(
    "correct\nincorrect\n",
    name="labels.txt",
    mapping="benchmark: demo\ntask: pointwise\ngold: label\n",
)
BUILDERS["explode_key_absent"] = _import_case(NAMED, name="j.jsonl", mapping=NAMED_MAPPING)
BUILDERS["explode_keys_not_a_list"] = _import_case(
    NAMED,
    name="j.jsonl",
    mapping=NAMED_MAPPING.replace('keys: ["swap = False", "swap = True"]', "keys: swap"),
)
BUILDERS["join_file_dotdot"] = _files_case(
    {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2, "out_b.jsonl": OUT2},
    JOIN_MAPPING.replace("a: out_a.jsonl", "a: ../out_a.jsonl"),
    ["items.jsonl"],
)


@builds("join_file_absolute")
def _join_absolute(d: Path):
    files = {"items.jsonl": ITEMS2, "out_a.jsonl": OUT2, "out_b.jsonl": OUT2}
    mapping = JOIN_MAPPING.replace("a: out_a.jsonl", f"a: {d / 'out_a.jsonl'}")
    return _files_case(files, mapping, ["items.jsonl"])(d)


@builds("join_file_symlink")
def _join_symlink(d: Path):
    (d / "data").mkdir()
    (d / "secret.jsonl").write_text(OUT2, encoding="utf-8")
    (d / "data" / "out_a.jsonl").symlink_to(d / "secret.jsonl")
    files = {"data/items.jsonl": ITEMS2, "data/out_b.jsonl": OUT2}
    return _files_case(files, JOIN_MAPPING, ["data/items.jsonl"])(d)


BUILDERS["judge_name_non_ascii"] = _import_case(
    PAIR_CSV.replace("true,[[A]],gpt-4", "true,[[A]],jugé")
)
BUILDERS["judge_name_nfd"] = _import_case(PAIR_CSV.replace("gpt-4", "juge\u0301"))


@builds("judge_name_case_only")
def _judge_case_only(d: Path):
    (d / "one.csv").write_text(PAIR_CSV, encoding="utf-8")
    (d / "two.csv").write_text(PAIR_CSV.replace("gpt-4", "GPT-4"), encoding="utf-8")
    (d / "m.yaml").write_text(PAIR_MAPPING, encoding="utf-8")
    assert (
        cli.main(["data", "import-file", str(d / "one.csv"), "--mapping", str(d / "m.yaml")]) == 0
    )
    return ["data", "import-file", str(d / "two.csv"), "--mapping", str(d / "m.yaml")]


@builds("import_rows_clash")
def _import_rows_clash(d: Path):
    (d / "j.csv").write_text(PAIR_CSV, encoding="utf-8")
    (d / "m.yaml").write_text(PAIR_MAPPING, encoding="utf-8")
    (d / "back.yaml").write_text(
        PAIR_MAPPING.replace("'[[A]]': A, '[[B]]': B", "'[[A]]': B, '[[B]]': A"), encoding="utf-8"
    )
    assert cli.main(["data", "import-file", str(d / "j.csv"), "--mapping", str(d / "m.yaml")]) == 0
    return ["data", "import-file", str(d / "j.csv"), "--mapping", str(d / "back.yaml")]


BUILDERS["judgment_meta_not_paths"] = _import_case(
    PAIR_CSV, mapping=PAIR_MAPPING + "judgment_meta: 5\n"
)
BUILDERS["all_verdicts_invalid"] = _import_case(
    PAIR_CSV.replace("[[A]]", "A").replace("[[B]]", "B")
)
BUILDERS["item_question_differs"] = _import_case(_csv_row(2, "Say hi", "Say hello"))
BUILDERS["item_meta_differs"] = _import_case(
    _csv_row(2, "gpt-4", "gpt-4o"), mapping=PAIR_MAPPING + "meta: [judge]\n"
)


# ---------------------------------------------------------------- judge specs

REMOTE = (
    "endpoint: openai-compatible\nmodel: m\nbase_url: http://127.0.0.1:9/v1\n"
    "api_key_env: JL_BAD_INPUT_KEY\ntemplate: cjb.workflow\n"
)


def _spec_case(text: str | bytes):
    def build(d: Path):
        p = d / "judge.yaml"
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        return _judge_on(d, "sample:contextualjudgebench", "--judge", str(p))

    return build


BUILDERS["spec_unknown_template"] = _spec_case(REMOTE.replace("cjb.workflow", "cjb.nope"))
BUILDERS["spec_id_from_model_unsafe"] = _spec_case(
    REMOTE.replace("model: m\n", "model: my model\n")
)
BUILDERS["spec_zero_concurrency"] = _spec_case(REMOTE + "concurrency: 0\n")
BUILDERS["spec_negative_concurrency"] = _spec_case(REMOTE + "concurrency: -4\n")
BUILDERS["spec_text_concurrency"] = _spec_case(REMOTE + "concurrency: many\n")
BUILDERS["spec_unknown_key"] = _spec_case(REMOTE + "temprature: 0.5\n")
BUILDERS["spec_missing_model"] = _spec_case(REMOTE.replace("model: m\n", ""))
BUILDERS["spec_literal_api_key"] = _spec_case(REMOTE + "api_key: sk-abcdefghijklmnop\n")
BUILDERS["spec_unknown_baseline"] = _spec_case("endpoint: offline\nmodel: nope\n")
BUILDERS["spec_bad_orders"] = _spec_case(REMOTE + "orders: [2]\n")
BUILDERS["spec_empty_file"] = _spec_case("")
BUILDERS["spec_broken_yaml"] = _spec_case(
    "endpoint: offline\nmodel: prefer_longer\n\toptions: 1\n"
)
BUILDERS["spec_latin1"] = _spec_case("endpoint: offline\n# café\n".encode("latin-1"))
BUILDERS["spec_client_streams"] = _spec_case(REMOTE + "client: streams\n")
for _case, _query in (
    ("spec_base_url_azure_code", "code=Zm9vYmFyMTIzNDU2"),
    ("spec_base_url_subscription_key", "subscription-key=0123456789abcdef"),
    ("spec_base_url_x_api_key", "api-version=1&x-api-key=0123456789abcdef"),
):
    BUILDERS[_case] = _spec_case(
        REMOTE.replace("http://127.0.0.1:9/v1", f"https://fn.example.net/api?{_query}")
    )


@builds("spec_unknown_name")
def _(d):
    return ["judge", "--judge", "nope", "--benchmark", "sample:contextualjudgebench"]


# ---------------------------------------------------------------- CLI arguments

BUILDERS["cli_unknown_split"] = lambda d: _judge_on(
    d, "sample:contextualjudgebench", "--split", "nope"
)
BUILDERS["cli_zero_limit"] = lambda d: _judge_on(d, "sample:contextualjudgebench", "--limit", "0")
BUILDERS["cli_negative_limit"] = lambda d: _judge_on(
    d, "sample:contextualjudgebench", "--limit", "-2"
)
BUILDERS["cli_text_limit"] = lambda d: _judge_on(
    d, "sample:contextualjudgebench", "--limit", "ten"
)
BUILDERS["cli_judge_missing"] = lambda d: ["judge", "--benchmark", "sample:contextualjudgebench"]
BUILDERS["cli_bad_order"] = lambda d: _judge_on(d, "sample:contextualjudgebench", "--order", "2")
BUILDERS["cli_unknown_benchmark"] = lambda d: _judge_on(d, "nobench")
BUILDERS["cli_unknown_source"] = lambda d: ["data", "import", "nope"]
BUILDERS["cli_compare_unknown_judge"] = lambda d: [
    "compare", "sample-judge-1-always-first", "nope", "--benchmark", "sample:contextualjudgebench",
]  # fmt: skip


@builds("cli_unknown_condition")
def _(d):
    (d / "remote.yaml").write_text(REMOTE)
    return _judge_on(
        d,
        "sample:contextualjudgebench",
        "--judge",
        str(d / "remote.yaml"),
        "--condition",
        "bogus=1",
    )


@builds("cli_bad_table_kind")
def _(d):
    tables.write_items(_items(), d / "items.parquet")
    return ["data", "validate", str(d / "items.parquet"), "--kind", "votes"]


# ---------------------------------------------------------------- params and notebooks


def _params_case(text: str | bytes):
    def build(d: Path):
        p = d / "bad.yaml"
        if isinstance(text, bytes):
            p.write_bytes(text)
        else:
            p.write_text(text, encoding="utf-8")
        return ["run", "90_bad", "--params", str(p)]

    return build


SECRET = "dummy-bad-input-secret-0123456789"
BUILDERS["params_undeclared_key"] = _params_case("splits: []\ncolour: red\n")
BUILDERS["params_broken_yaml"] = _params_case("judges: []\nsplits: [a, b\nsource: x\n")
BUILDERS["params_not_mapping"] = _params_case("- a\n- b\n")
BUILDERS["params_utf16_bom"] = _params_case("splits: []\n".encode("utf-16"))
BUILDERS["params_latin1"] = _params_case("splits: []\n# café\n".encode("latin-1"))
BUILDERS["params_credential_key"] = _params_case("api_key: abc\n")
BUILDERS["params_secret_value"] = _params_case(f"source: {SECRET}\n")
BUILDERS["override_undeclared"] = lambda d: ["run", "90_bad", "-p", "colour=red"]
BUILDERS["override_no_equals"] = lambda d: ["run", "90_bad", "-p", "splits"]
BUILDERS["override_bad_name"] = lambda d: ["run", "90_bad", "-p", "1x=2"]
BUILDERS["override_unknown_judge"] = lambda d: ["run", "90_bad", "-p", "judges=[nope]"]

NOTEBOOK_PARAMS = (
    'source: str = "sample:contextualjudgebench"  # items + judgments source\n'
    "judges: list[str] = []  # judge ids; empty: all\n"
    "splits: list[str] = []  # splits; empty: all\n"
    'run: str = "default"  # run name'
)
NOTEBOOK_BODY = (
    "from judgelab.data import catalog\n"
    "loaded = catalog.load_source(source)\n"
    "df = catalog.select(loaded, judges=judges, splits=splits)\n"
    "print(len(df))"
)


# ---------------------------------------------------------------- issue 19

YAML_BOMB = "a: &a [x, x]\nb: &b [*a, *a]\nc: &c [*b, *b]\nd: &d [*c, *c]\ne: [*d, *d]\n"
BUILDERS["run_name_dotdot"] = lambda d: ["run", "90_bad", "--run", ".."]
BUILDERS["run_name_slash"] = lambda d: ["run", "90_bad", "--run", "a/b"]
BUILDERS["params_yaml_bomb"] = _params_case(YAML_BOMB)
BUILDERS["params_hf_token"] = _params_case("source: hf_" + "Ab1" * 12 + "\n")
BUILDERS["spec_yaml_bomb"] = _spec_case(REMOTE + YAML_BOMB.replace("a:", "x_a:"))
BUILDERS["spec_id_dotdot"] = _spec_case(REMOTE + "id: '..'\n")
BUILDERS["mapping_benchmark_escapes"] = _import_case(
    PAIR_CSV, mapping=PAIR_MAPPING.replace("benchmark: demo", "benchmark: ../outside")
)
BUILDERS["mapping_yaml_bomb"] = _import_case(PAIR_CSV, mapping=PAIR_MAPPING + YAML_BOMB)
BUILDERS["jsonl_nested_too_deep"] = _import_case("[" * 5000 + "]" * 5000 + "\n", name="j.jsonl")


# ---------------------------------------------------------------- issue 33 (inference)


def _labelled_judgments() -> pd.DataFrame:
    """Two judges, both orders, one pool: the smallest input the juries analyses accept."""
    rows = [
        {
            "benchmark": "b", "split": "s", "item_id": f"i{k}", "judge": j, "model": j,
            "prompt": "p", "order": o, "valid": True, "chosen": "pos", "correct": True,
        }
        for k in range(3) for j in ("J1", "J2") for o in (0, 1)
    ]  # fmt: skip
    return schema.new_judgments(rows)


@builds("alpha_unknown_interval")
def _(d):
    from judgelab.analyses import juries

    return lambda: juries.alpha_table(_labelled_judgments(), interval="bootstrap")


@builds("jury_wild_reselect")
def _(d):
    from judgelab.analyses import juries

    return lambda: juries.jury_table(_labelled_judgments(), size=2, best_member="reselect")


@builds("strategy_unknown_test")
def _(d):
    from judgelab.analyses import prompting

    return lambda: prompting.strategy_comparison(_labelled_judgments(), test="t")


# ---------------------------------------------------------------- issue 32 (batch)


def _registry_file(name: str, **changes) -> Path:
    """Write one batch registry entry file, `<name>.json`, with `changes` to its fields."""
    root = Registry().root
    root.mkdir(parents=True, exist_ok=True)
    entry = Entry("b1", "openai", "j", "http://127.0.0.1:9/v1", ["k" * 64], state="in_progress")
    entry.batch_id = "batch_000007"
    path = root / f"{name}.json"
    path.write_text(json.dumps(asdict(entry) | changes))
    return path


def _batch_status(d: Path) -> list[str]:
    (d / "remote.yaml").write_text(REMOTE)
    return ["batch", "status", "--judge", str(d / "remote.yaml"), "--offline"]


def _batch_export(d: Path, prefix: str) -> list[str]:
    (d / "remote.yaml").write_text(REMOTE)
    spec = ["--judge", str(d / "remote.yaml"), "--benchmark", "sample:contextualjudgebench"]
    return ["batch", "export", *spec, "--out", str(d / "out"), "--prefix", prefix]


@builds("batch_registry_id_escapes")
def _(d):
    _registry_file("b1", local_id="../../x")
    return _batch_status(d)


@builds("batch_registry_unsafe_file")
def _(d):
    _registry_file("b x", local_id="b x")
    return _batch_status(d)


BUILDERS["batch_export_prefix_glob"] = lambda d: _batch_export(d, "*")
BUILDERS["batch_export_prefix_escapes"] = lambda d: _batch_export(d, "../up")


@builds("batch_abandon_healthy")
def _(d):
    _registry_file("b1")
    return ["batch", "abandon", "batch_000007"]


BUILDERS["batch_abandon_unknown"] = lambda d: ["batch", "abandon", "batch_nope"]


@pytest.fixture()
def project(tmp_path_factory, monkeypatch) -> Path:
    """A project holding one notebook, `90_bad`, that reads a sample and filters it."""
    root = tmp_path_factory.mktemp("proj")
    write_notebook(root / "notebooks" / "90_bad.ipynb", NOTEBOOK_PARAMS, [NOTEBOOK_BODY])
    (root / "params" / "judges").mkdir(parents=True)
    monkeypatch.setenv("JUDGELAB_PROJECT", str(root))
    monkeypatch.setenv("JUDGELAB_SAMPLES", str(ROOT / "data" / "samples"))
    monkeypatch.setenv("JL_BAD_INPUT_KEY", SECRET)
    return root


def _snapshot(root: Path) -> dict[str, tuple[int, int]]:
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
        for p in root.rglob("*")
        if p.is_file()
    }


def test_the_table_covers_every_entry_point_and_has_a_builder():
    ids = [c[0] for c in CASES]
    assert len(ids) == len(set(ids)) >= 40
    assert set(ids) == set(BUILDERS)
    entry_points = {c[1].split()[0] for c in CASES}
    assert {"data", "judge", "run", "tables.write"} <= entry_points
    assert all(c[3] for c in CASES)  # every case expects at least one fragment


@pytest.mark.parametrize(("case", "entry", "what", "fragments"), CASES, ids=[c[0] for c in CASES])
def test_bad_input(case, entry, what, fragments, tmp_path, judgelab_home, project, capsys):
    inputs = tmp_path / "inputs"
    inputs.mkdir()
    call = BUILDERS[case](inputs)
    before_home, before_inputs = _snapshot(judgelab_home), _snapshot(inputs)
    before_project = _snapshot(project)
    capsys.readouterr()

    if callable(call):
        with pytest.raises(Exception) as info:  # noqa: B017 - the message is what is checked
            call()
        message = str(info.value)
    else:
        try:
            rc = cli.main(call)
        except SystemExit as exc:  # argparse rejects bad arguments itself
            rc = exc.code
        captured = capsys.readouterr()
        message = captured.err + captured.out  # `run` prints the report path on stdout
        assert rc not in (0, None), f"{case}: exit status {rc}, stdout {captured.out[-500:]}"

    expected = [f.replace("{d}", str(inputs)) for f in fragments]
    missing = [f for f in expected if f not in message]
    assert not missing, f"{case}: {missing} not in message {message[:1500]!r}"
    assert len(message) < MAX_MESSAGE, f"{case}: a {len(message)}-character message"

    # Nothing half-written: no new or changed file under the output root, the inputs or the
    # project, beyond what the case says a failure writes on purpose.
    allowed = ALLOWED_OUTPUTS.get(case, [])
    after_home = _snapshot(judgelab_home)
    changed = {p for p in after_home if after_home[p] != before_home.get(p)}
    changed = {p for p in changed if not any(Path(p).match(g) for g in allowed)}
    assert not changed, f"{case}: wrote {sorted(changed)}"
    assert _snapshot(inputs) == before_inputs
    assert _snapshot(project) == before_project
    if any(g.startswith("reports/") for g in allowed):  # the failed run is recorded as failed
        index = (judgelab_home / "reports" / "index.html").read_text()
        assert "1 runs, 1 failed" in index


# ---------------------------------------------------------------- issue 33


@builds("ppi_unknown_target")
def _ppi_unknown_target(d: Path):
    from judgelab.analyses import grounding

    judge, human = [1.0, 0.0, 1.0, 1.0], [1.0, 0.0, float("nan"), float("nan")]
    return lambda: grounding.estimates(judge, human, target="sample")


@builds("ppi_cluster_labels_partial")
def _ppi_cluster_labels_partial(d: Path):
    from judgelab.analyses import grounding

    judge = [1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0]
    human = [1.0, 0.0, float("nan"), float("nan"), 0.0, 1.0, 1.0, 1.0]
    cluster = ["c0"] * 4 + ["c1"] * 4
    return lambda: grounding.estimates(
        judge, human, cluster=cluster, target="items", labels_by="cluster"
    )


@builds("ppi_unknown_strata_combine")
def _ppi_unknown_strata_combine(d: Path):
    from judgelab.analyses import grounding

    judge, human = [1.0, 0.0, 1.0, 1.0], [1.0, 0.0, float("nan"), 1.0]
    return lambda: grounding.estimates(
        judge, human, cluster=[0, 0, 1, 1], stratum=["a", "a", "b", "b"], strata_combine="pooled"
    )


def _transport_table() -> pd.DataFrame:
    labels = {"judge_label": [1.0, 0.0, 1.0, 1.0], "human_label": [1.0, 0.0, 0.0, 1.0]}
    return pd.DataFrame({"group": ["a", "a", "b", "b"], "cluster": [0, 1, 0, 1], **labels})


@builds("transport_unknown_train_slice")
def _transport_unknown_train_slice(d: Path):
    from judgelab.analyses.grounding import transport

    return lambda: transport.audit(_transport_table(), train=["gpt-5"])


@builds("transport_zero_margin")
def _transport_zero_margin(d: Path):
    from judgelab.analyses.grounding import transport

    return lambda: transport.audit(_transport_table(), margin=0)


@builds("choice_one_judge")
def _choice_one_judge(d: Path):
    from judgelab.analyses.grounding import choice

    t = _transport_table().assign(
        judge="A", benchmark="b", split="s", item_id=["1", "2", "3", "4"]
    )
    return lambda: choice.rank_judges(t)


@builds("confidence_score_not_probability")
def _confidence_score_not_probability(d: Path):
    from judgelab.analyses.grounding import confidence

    return lambda: confidence.scores([0.2, 0.9, 7.0, 0.5], [0, 1, 1, 0])


@builds("allocate_budget_too_small")
def _allocate_budget_too_small(d: Path):
    from judgelab.analyses.grounding import budget

    t = _transport_table()
    f, y = t["judge_label"].tolist() + [1.0, 0.0], t["human_label"].tolist() + [None, None]
    return lambda: budget.allocate(f, [float("nan") if v is None else v for v in y],
                                   ["a", "a", "b", "b", "a", "b"], 3)  # fmt: skip


@builds("slices_unknown_judge")
def _slices_unknown_judge(d: Path):
    from judgelab.analyses.grounding import slices

    return lambda: slices.study(_transport_table().assign(judge="A"), judge="GPT-5", budget=4)


@builds("certificate_unknown_criterion")
def _certificate_unknown_criterion(d: Path):
    from judgelab.reporting import certificate

    return lambda: certificate.check_margins({"posiiton": 0.05})


@builds("certificate_negative_margin")
def _certificate_negative_margin(d: Path):
    from judgelab.reporting import certificate

    return lambda: certificate.check_margins({"length": -0.05})


@builds("finding_unnamed_measure")
def _finding_unnamed_measure(d: Path):
    from judgelab.reporting import notebook

    return lambda: notebook.Outputs("90_bad").finding(measure="value", subject="A", estimate=1)


@builds("finding_self_pairs_only")
def _finding_self_pairs_only(d: Path):
    from judgelab.reporting import notebook

    kappa = pd.DataFrame({"judge_1": ["A", "B"], "judge_2": ["A", "B"], "kappa": [1.0, 1.0]})
    return lambda: notebook.Outputs("90_bad").finding(
        kappa, measure="Cohen's kappa", value="kappa", subject=("judge_1", "judge_2"), source="x"
    )


@builds("finding_missing_column")
def _finding_missing_column(d: Path):
    from judgelab.reporting import notebook

    rates = pd.DataFrame({"judge": ["A"], "metric": ["ca"], "value": [0.5]})
    return lambda: notebook.Outputs("90_bad").finding(rates, measure="ca", value="ca", source="x")


@builds("leaderboard_missing_column")
def _leaderboard_missing_column(d: Path):
    from judgelab.reporting import leaderboard

    p = d / "traffic_lights.csv"
    p.write_text("source,judge,bias,note\nllmbar,A,Position bias,\n", encoding="utf-8")
    return lambda: leaderboard.read_table(p, leaderboard.LIGHT_COLUMNS)


@builds("leaderboard_text_in_a_number")
def _leaderboard_text_in_a_number(d: Path):
    from judgelab.reporting import leaderboard

    head = ",".join(leaderboard.MEASURE_COLUMNS)
    rows = ["llmbar:A,llmbar,A,ca,True,0.8,0.7,0.9,40,ok,",
            'llmbar:A,llmbar,A,kappa_human,True,"0.8 [0.7, 0.9]",,,40,ok,']  # fmt: skip
    p = d / "measures.csv"
    p.write_text("\n".join([head, *rows]) + "\n", encoding="utf-8")
    return lambda: leaderboard.read_table(p, leaderboard.MEASURE_COLUMNS)


@builds("plan_negative_deff_floor")
def _plan_negative_deff_floor(d: Path):
    return ["plan", "position-bias", "--delta", "0.1", "--deff-floor", "-1"]


# ---------------------------------------------------------------- issue 37 item 1 (bridges)

BRIDGES = ROOT / "tests" / "data" / "fixtures" / "bridges"


def _bridge_case(name: str, content: Callable[[], str], tool: str, mapping: str | None = None):
    def build(d: Path):
        (d / name).write_text(content(), encoding="utf-8")
        args = ["data", "import-file", str(d / name), "--from", tool]
        if mapping is not None:
            (d / "m.yaml").write_text(mapping, encoding="utf-8")
            args += ["--mapping", str(d / "m.yaml")]
        return args

    return build


def _promptfoo_three_outputs() -> str:
    data = json.loads((BRIDGES / "promptfoo_results.json").read_text(encoding="utf-8"))
    third = json.loads(json.dumps(data["results"]["results"][0]))
    third["provider"]["id"] = "openai:chat:third-model"
    data["results"]["results"].append(third)
    return json.dumps(data)


def _inspect_without_samples() -> str:
    data = json.loads((BRIDGES / "inspect_bridge_qa.json").read_text(encoding="utf-8"))
    del data["samples"]
    return json.dumps(data)


BUILDERS["bridge_unknown_reader"] = _import_case(
    NESTED, name="j.jsonl", mapping=NESTED_MAPPING + "reader: langsmith\n"
)
BUILDERS["bridge_inspect_not_a_log"] = _bridge_case("run.eval", lambda: "not a zip\n", "inspect")
BUILDERS["bridge_inspect_no_samples"] = _bridge_case(
    "log.json", _inspect_without_samples, "inspect"
)
BUILDERS["bridge_promptfoo_not_results"] = _bridge_case(
    "results.json", lambda: '[{"a": 1}]', "promptfoo"
)
BUILDERS["bridge_select_best_three"] = _bridge_case(
    "results.json", _promptfoo_three_outputs, "promptfoo-select-best"
)
BUILDERS["bridge_lm_eval_misnamed"] = _bridge_case(
    "out.jsonl",
    lambda: next(BRIDGES.glob("samples_*.jsonl")).read_text(encoding="utf-8"),
    "lm-eval",
)
BUILDERS["bridge_unknown_tool"] = _bridge_case("j.jsonl", lambda: NESTED, "langsmith")
BUILDERS["bridge_reader_conflict"] = _bridge_case(
    "log.json",
    lambda: (BRIDGES / "inspect_bridge_qa.json").read_text(encoding="utf-8"),
    "inspect",
    mapping="reader: promptfoo\n",
)


@builds("import_file_no_mapping")
def _(d: Path):
    (d / "j.jsonl").write_text(NESTED, encoding="utf-8")
    return ["data", "import-file", str(d / "j.jsonl")]
