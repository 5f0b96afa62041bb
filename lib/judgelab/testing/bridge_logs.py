"""Make small real logs with Inspect AI, promptfoo and lm-eval against the loopback server.

The bridges' fixtures (`tests/data/fixtures/bridges/`) are logs the real tools wrote while
their model *and* their grader were the fake OpenAI-compatible server
(`judgelab.testing.openai_server`) answering with `grader_responder`: a grading prompt gets a
grade in the format the tool asks for (chosen from a hash of the prompt, so the same prompt
always gets the same grade), any other prompt a short answer. Run, e.g.::

    python -m judgelab.testing.bridge_logs inspect OUT_DIR     # .eval and .json logs
    python -m judgelab.testing.bridge_logs promptfoo OUT_DIR   # needs npx promptfoo

Each maker returns the paths it wrote; the tests compare the imported verdicts with the
tool's own summary figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from judgelab.testing.answers import hash_int
from judgelab.testing.openai_server import OpenAIServer

#: Questions and reference answers of the small evaluations (the model answers from ANSWERS).
QUESTIONS = (
    ("q1", "What is the capital of France?", "Paris"),
    ("q2", "How many legs does a spider have?", "Eight"),
    ("q3", "What gas do plants absorb from the air?", "Carbon dioxide"),
    ("q4", "Who wrote Hamlet?", "William Shakespeare"),
    ("q5", "What is the boiling point of water at sea level in Celsius?", "100"),
    ("q6", "Which planet is called the red planet?", "Mars"),
)
ANSWERS = ("Paris", "Eight", "Oxygen", "Shakespeare", "90 degrees", "Mars", "I am not sure")
GRADER_MODEL = "grader-model"
CANDIDATE_MODEL = "test-model"


def _prompt_text(body: dict[str, Any]) -> str:
    parts = []
    for m in body.get("messages") or []:
        content = m.get("content", "")
        if isinstance(content, list):
            content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        parts.append(str(content))
    return "\n".join(parts)


def grader_responder(body: dict[str, Any]) -> str:
    """Answer a grading prompt with a grade in its tool's format; anything else briefly.

    Inspect's model-graded scorers ask for `GRADE: C` / `GRADE: I`; promptfoo's
    `llm-rubric` for a JSON object `{reason, pass, score}` and its `select-best` for the
    0-based index of the best output. The grade is chosen from a hash of the prompt.
    """
    text = _prompt_text(body)
    h = hash_int(text + str(body.get("model")))
    if "GRADE: C" in text or "GRADE: I" in text:
        grade = "C" if h % 3 else "I"
        return f"The submission was compared with the criterion.\n\nGRADE: {grade}"
    if '"pass"' in text and '"score"' in text:
        score = round((h % 11) / 10, 1)
        passed = score >= 0.5
        reason = "meets the rubric" if passed else "misses the rubric"
        return json.dumps({"reason": reason, "pass": passed, "score": score})
    if "Output 0" in text or "<Output index=" in text or "index of the" in text.lower():
        n = max(2, text.count("<Output index="), text.count("Output "))
        return str(h % min(n, 2))
    return ANSWERS[h % len(ANSWERS)]


def _env(server: OpenAIServer) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        OPENAI_BASE_URL=server.url,
        OPENAI_API_BASE=server.url,
        OPENAI_API_KEY="sk-test",
        INSPECT_DISPLAY="none",
        PROMPTFOO_DISABLE_TELEMETRY="1",
        PROMPTFOO_DISABLE_UPDATE="1",
        PROMPTFOO_CACHE_ENABLED="false",
    )
    return env


INSPECT_TASK = '''\
"""A small QA task graded by a model (judgelab's bridge fixture)."""

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.model import get_model
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate

QUESTIONS = {questions!r}


@task
def bridge_qa():
    return Task(
        dataset=[Sample(id=i, input=q, target=t) for i, q, t in QUESTIONS],
        solver=generate(),
        # the loopback server speaks chat completions, not the Responses API
        scorer=model_graded_qa(model=get_model("openai/{grader}", responses_api=False)),
        epochs=2,
    )
'''


def _run(
    cmd: list[str], env: dict[str, str], *, ok: tuple[int, ...] = (0,), cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """Run a tool; an exit status outside `ok` raises with the tool's own output."""
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=300)
    if done.returncode not in ok:
        raise RuntimeError(
            f"{' '.join(cmd[:3])} exited {done.returncode}:\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def _inspect_cli() -> str:
    found = shutil.which("inspect") or str(Path(sys.executable).parent / "inspect")
    return found


def make_inspect(out: Path) -> list[Path]:
    """Run the small Inspect task twice (`.eval` and `.json` logs) into `out`."""
    out.mkdir(parents=True, exist_ok=True)
    task = out / "bridge_qa.py"
    task.write_text(
        INSPECT_TASK.format(questions=QUESTIONS, grader=GRADER_MODEL), encoding="utf-8"
    )
    written: list[Path] = []
    with OpenAIServer(responder=grader_responder, models=(CANDIDATE_MODEL, GRADER_MODEL)) as s:
        for fmt in ("eval", "json"):
            logs = out / f"logs_{fmt}"
            _run(
                [
                    _inspect_cli(),
                    "eval",
                    task.name,
                    "--model",
                    f"openai/{CANDIDATE_MODEL}",
                    "-M",
                    "responses_api=false",
                    "--log-dir",
                    str(logs),
                    "--log-format",
                    fmt,
                    "--no-log-realtime",
                ],
                _env(s),
                cwd=out,
            )
            (log,) = sorted(logs.glob(f"*.{fmt}"))
            if (
                fmt == "json"
                and json.loads(log.read_text(encoding="utf-8"))["status"] != "success"
            ):
                raise RuntimeError(f"the Inspect eval did not succeed: {log}")
            target = out / f"inspect_bridge_qa.{fmt}"
            log.replace(target)
            shutil.rmtree(logs)
            written.append(target)
    return written


PROMPTFOO_CONFIG = textwrap.dedent(
    """\
    description: judgelab bridge fixture
    prompts:
      - "Answer briefly: {{{{question}}}}"
    providers:
      - id: openai:chat:{candidate}
        config: {{apiBaseUrl: "{url}"}}
      - id: openai:chat:{other}
        config: {{apiBaseUrl: "{url}"}}
    defaultTest:
      options:
        provider:
          id: openai:chat:{grader}
          config: {{apiBaseUrl: "{url}"}}
    tests:
    {tests}
    """
)


def _promptfoo_tests() -> str:
    lines = []
    for i, (qid, q, ref) in enumerate(QUESTIONS):
        lines += [
            f"  - description: {qid}",
            f"    vars: {{question: {json.dumps(q)}}}",
            "    assert:",
            "      - type: llm-rubric",
            f"        value: {json.dumps('The answer is ' + ref)}",
        ]
        if i % 2 == 0:
            lines += [
                "      - type: select-best",
                '        value: "the most correct answer"',
            ]
    return "\n".join(lines)


def make_promptfoo(out: Path, promptfoo: tuple[str, ...] = ("npx", "promptfoo")) -> list[Path]:
    """Run a small promptfoo eval (`llm-rubric`, `select-best`) into `out`.

    `promptfoo`: the command that runs promptfoo (e.g. `node_modules/.bin/promptfoo`).
    """
    out.mkdir(parents=True, exist_ok=True)
    with OpenAIServer(
        responder=grader_responder, models=(CANDIDATE_MODEL, "other-model", GRADER_MODEL)
    ) as s:
        config = out / "promptfooconfig.yaml"
        config.write_text(
            PROMPTFOO_CONFIG.format(
                candidate=CANDIDATE_MODEL,
                other="other-model",
                grader=GRADER_MODEL,
                url=s.url,
                tests=_promptfoo_tests(),
            ),
            encoding="utf-8",
        )
        target = out / "promptfoo_results.json"
        _run(
            [*promptfoo, "eval", "-c", str(config), "-o", str(target), "--no-cache"],
            {**_env(s), "PROMPTFOO_CONFIG_DIR": str(out / ".promptfoo")},
            ok=(0, 100),  # 100: some test failed; the file is written all the same
            cwd=out,
        )
        if not target.exists():
            raise RuntimeError(f"promptfoo wrote no {target}")
    return [target]


LM_EVAL_TASK = """\
task: bridge_qa
dataset_path: json
dataset_kwargs:
  data_files: {{test: {data}}}
test_split: test
output_type: generate_until
doc_to_text: "Answer briefly: {{{{question}}}}"
doc_to_target: "{{{{answer}}}}"
generation_kwargs: {{until: ["\\n\\n"], max_gen_toks: 32}}
process_results: !function judge_utils.judge
metric_list:
  - metric: judge_correct
    aggregation: mean
    higher_is_better: true
"""

LM_EVAL_JUDGE = '''\
"""A metric given by a grader model (judgelab's bridge fixture): GRADE: C / GRADE: I."""

import json
import os
import re
import urllib.request


def judge(doc, results):
    prompt = (
        f"[Task]: {doc['question']}\\n[Submission]: {results[0]}\\n"
        f"[Criterion]: {doc['answer']}\\nReply GRADE: C (correct) or GRADE: I (incorrect)."
    )
    body = {"model": "grader-model", "messages": [{"role": "user", "content": prompt}]}
    request = urllib.request.Request(
        os.environ["OPENAI_BASE_URL"] + "/chat/completions",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json", "Authorization": "Bearer sk-test"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        text = json.load(answer)["choices"][0]["message"]["content"]
    grade = re.search(r"GRADE: ([CI])", text)
    return {"judge_correct": 1.0 if grade and grade.group(1) == "C" else 0.0}
'''


def make_lm_eval(out: Path, lm_eval: tuple[str, ...] = ("lm_eval",)) -> list[Path]:
    """Run a small lm-eval task whose metric a grader model gives, with `--log_samples`.

    `lm_eval`: the command that runs lm-evaluation-harness. Returns the samples file and
    the results file lm-eval wrote (in `out`).
    """
    out.mkdir(parents=True, exist_ok=True)
    tasks = out / "tasks"
    tasks.mkdir(exist_ok=True)
    data = tasks / "questions.jsonl"
    data.write_text(
        "".join(json.dumps({"question": q, "answer": a}) + "\n" for _, q, a in QUESTIONS),
        encoding="utf-8",
    )
    (tasks / "bridge_qa.yaml").write_text(LM_EVAL_TASK.format(data=data), encoding="utf-8")
    (tasks / "judge_utils.py").write_text(LM_EVAL_JUDGE, encoding="utf-8")
    logs = out / "logs"
    with OpenAIServer(responder=grader_responder, models=(CANDIDATE_MODEL, GRADER_MODEL)) as s:
        _run(
            [
                *lm_eval,
                "--model",
                "local-chat-completions",
                "--model_args",
                f"model={CANDIDATE_MODEL},base_url={s.url}/chat/completions,num_concurrent=1",
                "--tasks",
                "bridge_qa",
                "--include_path",
                str(tasks),
                "--apply_chat_template",
                "--log_samples",
                "--output_path",
                str(logs),
            ],
            {**_env(s), "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1"},
            cwd=out,
        )
    made = sorted(logs.rglob("samples_bridge_qa_*.jsonl")) + sorted(logs.rglob("results_*.json"))
    if len(made) != 2:
        raise RuntimeError(f"lm-eval wrote {made} in {logs}")
    return made


def main(argv: list[str] | None = None) -> int:
    """`python -m judgelab.testing.bridge_logs TOOL OUT_DIR`."""
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("tool", choices=["inspect", "promptfoo", "lm-eval"])
    p.add_argument("out", type=Path)
    args = p.parse_args(argv)
    makers = {"inspect": make_inspect, "promptfoo": make_promptfoo, "lm-eval": make_lm_eval}
    made = makers[args.tool](args.out)
    for path in made:
        print(path)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
