"""The texts of a simulated dataset: tasks' subjects and questions, transcripts, judge output.

The judge outputs imitate real model output (bare JSON, fenced, with a preamble, varied label
spellings, a few broken on purpose); every draw comes from the caller's generator, in the
order the simulation has always drawn them, so a seed gives the same files.
"""

from __future__ import annotations

import json

import numpy as np

from .._schema import BLIND_DIMENSIONS

_SUBSYSTEMS = [
    ("retry policy for outgoing HTTP calls", "internal/http/retry.go", "RetryPolicy"),
    ("cache invalidation after a schema migration", "internal/cache/invalidate.go", "Invalidate"),
    ("authentication middleware ordering", "internal/auth/middleware.go", "Chain"),
    ("rate limiter used by the public API", "internal/api/ratelimit.go", "TokenBucket"),
    ("configuration loading precedence", "internal/config/load.go", "Load"),
    ("background job scheduler", "internal/jobs/scheduler.go", "Scheduler"),
    ("database connection pool sizing", "internal/db/pool.go", "NewPool"),
    ("feature-flag evaluation", "internal/flags/eval.go", "Evaluate"),
    ("metrics exporter registration", "internal/metrics/export.go", "Register"),
    ("graceful shutdown sequence", "cmd/server/main.go", "shutdown"),
    ("request tracing propagation", "internal/trace/propagate.go", "Inject"),
    ("symbol index rebuild", "internal/index/rebuild.go", "Rebuild"),
    ("plugin discovery", "internal/plugins/discover.go", "Discover"),
    ("error wrapping conventions", "internal/errors/wrap.go", "Wrap"),
    ("websocket heartbeat handling", "internal/ws/heartbeat.go", "Heartbeat"),
]
_QUESTIONS = [
    "Where is the {what} implemented, and which call sites depend on {sym}?",
    "Explain how the {what} works end to end; cite the files and symbols involved.",
    "Which code paths reach {sym}, and what would break if its signature changed?",
]
_FILLER = (
    "read_file grep_search list_dir open symbol reference callers definition line "
    "result match function struct package import return error context value "
    "handler config retry cache index token request response test"
).split()


def _words(gen: np.random.Generator, n: int) -> str:
    picks = gen.integers(0, len(_FILLER), size=max(int(n), 1))
    words = np.asarray(_FILLER)[picks]
    lines = [" ".join(words[i : i + 12]) for i in range(0, len(words), 12)]
    return "\n".join(lines)


def _fence(gen: np.random.Generator, body: str) -> str:
    style = gen.random()
    if style < 0.55:
        return body
    if style < 0.8:
        return f"```json\n{body}\n```"
    return f"Here is my evaluation of the two answers.\n\n```json\n{body}\n```\n"


def _break(gen: np.random.Generator, body: str) -> str:
    kind = gen.integers(0, 3)
    if kind == 0:
        return body[: len(body) // 2]  # truncated output (max_tokens hit)
    if kind == 1:
        return "I cannot decide between the two answers without running the code."
    return body.replace('"label": "', '"label": "(a) or (b) ', 1).replace(
        '"verdict": "', '"verdict": "a_wins or b_wins ', 1
    )


def _ww_raw(gen, outcome: int, tokens_with: int, tokens_without: int) -> str:
    label = ("(c)", "(b)", "(a)")[outcome]
    spelled = gen.choice(
        [
            label,
            label,
            label[1],
            label[1].upper(),
            {
                "(a)": "(a) WITH was better",
                "(b)": "(b) roughly equivalent",
                "(c)": "(c) WITH was worse",
            }[label],
        ]
    )
    reasons = {
        "(a)": "WITH cites the exact files and symbols and matches the canonical answer; "
        "WITHOUT misses one call site.",
        "(b)": "Both answers identify the same code paths with similar accuracy.",
        "(c)": "WITH drifts into unrelated files surfaced by the tool and misses the main path.",
    }
    body = {
        "label": str(spelled),
        "reasoning": reasons[label],
        "facts_correct_with": f"{int(gen.integers(2, 6))}/5",
        "facts_correct_without": f"{int(gen.integers(2, 6))}/5",
        "hallucinations_with": str(int(gen.integers(0, 2))),
        "hallucinations_without": str(int(gen.integers(0, 3))),
        "cost_ratio": f"{tokens_with / max(tokens_without, 1):.2f}",
        "uncertainty": str(gen.choice(["low", "medium", "medium", "high"])),
    }
    return _fence(gen, json.dumps(body, indent=2))


def _blind_raw(gen, outcome_a: int, scores_a: np.ndarray, scores_b: np.ndarray) -> str:
    """Blind-pair output; ``outcome_a`` is from Agent A's point of view (2 = A wins).

    ``scores_a`` / ``scores_b`` are the 1–5 scores (in ``BLIND_DIMENSIONS`` order) drawn from
    the dimension stream; ``gen`` is the main stream.
    """
    verdict = ("b_wins", "tie", "a_wins")[outcome_a]
    # A draw the scores once took from the main stream: kept (unused) so that every later draw
    # of the main stream -- verdicts, fences, timestamps, latencies -- stays what it was.
    gen.integers(2, 5, size=4)
    as_str = gen.random() < 0.1  # some judges quote numbers

    def block(s, note):
        d = {
            k: (str(int(v)) if as_str else int(v)) for k, v in zip(BLIND_DIMENSIONS, s, strict=True)
        }
        d["notes"] = note
        return d

    body = {
        "agent_a": block(scores_a, "Cites the relevant files with line ranges."),
        "agent_b": block(scores_b, "Covers the main path but is vague about call sites."),
        "verdict": verdict,
        "verdict_reasoning": "The deciding factor was specificity of the cited symbols.",
    }
    return _fence(gen, json.dumps(body, indent=2))
