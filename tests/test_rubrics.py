"""Rubrics: package data pinned to the seeds, rendering, and tolerant parsing."""

from __future__ import annotations

import hashlib
import re
from importlib import resources
from pathlib import Path

import pytest

from evalstats import rubrics
from evalstats.errors import ParseError
from evalstats.rubrics import RenderedPrompt, Rubric, Verdict, format_wall_clock

SHARED = Path(__file__).resolve().parents[2] / "shared"

# A changed word in a prompt changes these; bump the revision (new data file) when it does.
PINNED = {
    "with-without": (1, "ab998fa642ab41a227ac34689bcce9922ee89dde152d1541980245e651416f67"),
    "blind-pair": (1, "7d21434404cacdb83dba988702f9e09c2f61630445362b9cf04754a4bc732478"),
}
DATA_FILES = {
    "with-without": ("with-without.r1.txt",),
    "blind-pair": ("blind-pair.r1.txt", "blind-pair.r1.user.txt"),
}
SEEDS = {"with-without.r1.txt": "000_", "blind-pair.r1.txt": "001_"}


def _data(filename: str) -> bytes:
    return resources.files("evalstats.rubrics").joinpath("data", filename).read_bytes()


# --------------------------------------------------------------------------- identity


@pytest.mark.parametrize("name", sorted(PINNED))
def test_revision_and_sha256_pinned(name):
    r = rubrics.get(name)
    revision, sha = PINNED[name]
    assert isinstance(r, Rubric)
    assert (r.name, r.revision, r.sha256) == (name, revision, sha)
    # The pin is the sha256 of the files' bytes in order, computed independently here.
    h = hashlib.sha256(b"".join(_data(f) for f in DATA_FILES[name])).hexdigest()
    assert h == sha


@pytest.mark.parametrize("filename", sorted(SEEDS))
def test_data_files_are_the_seeds_byte_for_byte(filename):
    seeds = SHARED / "seeds"
    if not seeds.is_dir():
        pytest.skip(f"shared seeds not found at {seeds} (the repo is not next to shared/)")
    (seed,) = seeds.glob(SEEDS[filename] + "*.txt")
    assert _data(filename) == seed.read_bytes()


def test_names_get_and_unknown_name():
    assert rubrics.names() == ("blind-pair", "with-without")
    assert rubrics.get("blind-pair") is rubrics.get("blind-pair")
    with pytest.raises(KeyError, match="blind-pair, with-without"):
        rubrics.get("pairwise")
    with pytest.raises(KeyError):
        rubrics.get(None)


# The seed 001 dimensions, spelled out: a renamed dimension must fail here.
BLIND_DIMENSIONS = ("correctness", "specificity", "completeness", "hallucination_safety")


def test_rubric_attributes():
    ww, bp = rubrics.get("with-without"), rubrics.get("blind-pair")
    assert ww.dimensions == () and ww.needs_order is False
    assert bp.dimensions == BLIND_DIMENSIONS and bp.needs_order is True


def test_with_without_text_extracted_from_the_seed():
    ww = rubrics.get("with-without")
    seed = _data("with-without.r1.txt").decode()
    system = re.search(r"## System prompt\n\n```\n(.*?)\n```\n", seed, re.S).group(1)
    user = re.search(r"## User-message template\n\n```\n(.*?)\n```\n", seed, re.S).group(1)
    assert ww.system == system
    assert ww.user_template == user
    assert ww.system.startswith("You are evaluating two answers to the same software-engineering\n")
    assert ww.system.endswith("attempting to influence the headline.")
    assert ww.user_template.startswith("TASK:\n{task_prompt}\n")
    assert ww.user_template.endswith("\n\nLabel this comparison.")


def test_blind_pair_system_is_the_seed_after_its_header():
    bp = rubrics.get("blind-pair")
    seed = _data("blind-pair.r1.txt").decode()
    assert seed.startswith("eval-judge\n\n")
    assert bp.system == seed[len("eval-judge\n\n") :]
    assert bp.system.startswith("You are an impartial code-research evaluator.")
    assert bp.system.endswith('"verdict_reasoning": "<two sentences max — what tipped it>"\n}')


# --------------------------------------------------------------------------- render

TASK = {"prompt": "Where is {x} parsed? {without_answer}", "canonical_answer": "parse.go:12 {}"}
WITH = {
    "answer": "In parse.go:12 ({with_answer}) — see `func f() {}`.",
    "tokens": 1234,
    "wall_s": 83.24,
    "files_inspected": ["parse.go", "lex/lex.go"],
}
WITHOUT = {"answer": "Somewhere in {canonical_answer}.", "tokens": 5678, "wall_s": 120.0}


def test_format_wall_clock():
    assert format_wall_clock(83.24) == "83.2 s"
    assert format_wall_clock(0) == "0.0 s"
    assert format_wall_clock(600) == "600.0 s"
    assert format_wall_clock(59.96) == "60.0 s"
    assert format_wall_clock(7) == "7.0 s"
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError):
            format_wall_clock(bad)
    with pytest.raises(TypeError):
        format_wall_clock("83")
    with pytest.raises(TypeError):
        format_wall_clock(True)


def test_render_with_without_exact():
    p = rubrics.get("with-without").render(TASK, WITH, WITHOUT)
    assert isinstance(p, RenderedPrompt)
    assert p.user == (
        "TASK:\n"
        "Where is {x} parsed? {without_answer}\n"
        "\n"
        "CANONICAL ANSWER (for reference):\n"
        "parse.go:12 {}\n"
        "\n"
        "WITH (gortex MCP available):\n"
        "[1234 tokens · 83.2 s]\n"
        "In parse.go:12 ({with_answer}) — see `func f() {}`.\n"
        "\n"
        "WITHOUT (no gortex MCP):\n"
        "[5678 tokens · 120.0 s]\n"
        "Somewhere in {canonical_answer}.\n"
        "\n"
        "Label this comparison."
    )
    assert p.system == rubrics.get("with-without").system
    assert p.messages() == [
        {"role": "system", "content": p.system},
        {"role": "user", "content": p.user},
    ]


def test_render_with_without_accepts_integral_floats_and_numpy():
    np = pytest.importorskip("numpy")
    w = dict(WITH, tokens=np.int64(1234), wall_s=np.float64(83.24))
    wo = dict(WITHOUT, tokens=5678.0)
    p = rubrics.get("with-without").render(TASK, w, wo)
    assert "[1234 tokens · 83.2 s]" in p.user and "[5678 tokens · 120.0 s]" in p.user


@pytest.mark.parametrize(
    ("change", "exc", "match"),
    [
        ({"tokens": 12.5}, ValueError, "integer"),
        ({"tokens": -1}, ValueError, ">= 0"),
        ({"tokens": "12"}, TypeError, "integer"),
        ({"wall_s": -3.0}, ValueError, "finite"),
        ({"answer": None}, TypeError, "string"),
    ],
)
def test_render_with_without_rejects_bad_runs(change, exc, match):
    with pytest.raises(exc, match=match):
        rubrics.get("with-without").render(TASK, WITH, dict(WITHOUT, **change))


def test_render_rejects_missing_fields_and_wrong_order():
    ww, bp = rubrics.get("with-without"), rubrics.get("blind-pair")
    with pytest.raises(ValueError, match="canonical_answer"):
        ww.render({"prompt": "p"}, WITH, WITHOUT)
    with pytest.raises(ValueError, match="tokens"):
        ww.render(TASK, {"answer": "x", "wall_s": 1.0}, WITHOUT)
    with pytest.raises(ValueError, match="order"):
        ww.render(TASK, WITH, WITHOUT, order="with_first")
    with pytest.raises(ValueError, match="order"):
        bp.render(TASK, WITH, WITHOUT)
    with pytest.raises(ValueError, match="order"):
        bp.render(TASK, WITH, WITHOUT, order="a_first")


def test_render_blind_pair_exact_both_orders():
    bp = rubrics.get("blind-pair")
    p1 = bp.render(TASK, WITH, WITHOUT, order="with_first")
    assert p1.system == bp.system
    assert p1.user == (
        "TASK:\n"
        "Where is {x} parsed? {without_answer}\n"
        "\n"
        "AGENT A ANSWER:\n"
        "In parse.go:12 ({with_answer}) — see `func f() {}`.\n"
        "\n"
        "FILES INSPECTED BY AGENT A:\n"
        "- parse.go\n"
        "- lex/lex.go\n"
        "\n"
        "AGENT B ANSWER:\n"
        "Somewhere in {canonical_answer}.\n"
        "\n"
        "FILES INSPECTED BY AGENT B:\n"
        "(none)\n"
        "\n"
        "Score both answers and declare a winner."
    )
    p2 = bp.render(TASK, WITH, WITHOUT, order="without_first")
    assert p2.user == (
        "TASK:\n"
        "Where is {x} parsed? {without_answer}\n"
        "\n"
        "AGENT A ANSWER:\n"
        "Somewhere in {canonical_answer}.\n"
        "\n"
        "FILES INSPECTED BY AGENT A:\n"
        "(none)\n"
        "\n"
        "AGENT B ANSWER:\n"
        "In parse.go:12 ({with_answer}) — see `func f() {}`.\n"
        "\n"
        "FILES INSPECTED BY AGENT B:\n"
        "- parse.go\n"
        "- lex/lex.go\n"
        "\n"
        "Score both answers and declare a winner."
    )


@pytest.mark.parametrize("files", [None, [], (), float("nan")])
def test_blind_pair_no_files_is_none(files):
    bp = rubrics.get("blind-pair")
    p = bp.render(TASK, dict(WITH, files_inspected=files), WITHOUT, order="with_first")
    assert p.user.count("(none)") == 2


def test_blind_pair_user_message_reveals_nothing_about_the_tool():
    bp = rubrics.get("blind-pair")
    neutral_with = {"answer": "alpha", "tokens": 10, "wall_s": 1.0, "files_inspected": ["x.go"]}
    neutral_without = {"answer": "beta", "tokens": 99999, "wall_s": 500.0}
    for order in ("with_first", "without_first"):
        user = bp.render(TASK, neutral_with, neutral_without, order=order).user
        for word in ("with", "without", "gortex", "mcp", "tool", "canonical", "token", " s]"):
            # {without_answer}/{canonical_answer} are literal text of TASK and the answers.
            stripped = user.replace("{without_answer}", "").replace("{x}", "")
            assert word not in stripped.lower(), (order, word)
        assert "parse.go:12" not in user  # the canonical answer is not shown
        assert "99999" not in user and "500.0" not in user
    a1 = bp.render(TASK, neutral_with, neutral_without, order="with_first").user
    a2 = bp.render(TASK, neutral_with, neutral_without, order="without_first").user
    assert a1.index("alpha") < a1.index("beta")
    assert a2.index("beta") < a2.index("alpha")


def test_blind_pair_template_gives_exactly_the_three_inputs():
    bp = rubrics.get("blind-pair")
    found = re.findall(r"\{([a-z_]+)\}", bp.user_template)
    assert found == [
        "task_prompt",
        "agent_a_answer",
        "agent_a_files",
        "agent_b_answer",
        "agent_b_files",
    ]


# --------------------------------------------------------------------------- parse: with-without

WW_FULL = """{
  "label": "(c)",
  "reasoning": "WITHOUT named the right function; WITH drowned in tool output.",
  "facts_correct_with":    "2/5",
  "facts_correct_without": "4/5",
  "hallucinations_with":    1,
  "hallucinations_without": "none",
  "cost_ratio": "1.4",
  "uncertainty": "medium"
}"""

WW_CASES = [
    # (judge output, label, reasoning, uncertainty, judge_cost_ratio)
    (
        WW_FULL,
        "(c)",
        "WITHOUT named the right function; WITH drowned in tool output.",
        "medium",
        1.4,
    ),
    ('```json\n{"label": "(a)", "uncertainty": "low"}\n```', "(a)", None, "low", None),
    (
        'Here is my evaluation.\n\n```\n{"label": "(b)", "reasoning": "Same.",}\n```\nHope it helps.',
        "(b)",
        "Same.",
        None,
        None,
    ),
    (
        "{'label': '(a)', 'reasoning': 'the agent\\'s answer', 'cost_ratio': 0.6}",
        "(a)",
        "the agent's answer",
        None,
        0.6,
    ),
    (
        "{'label': 'A', 'reasoning': 'WITH's answer was exact'}",
        "(a)",
        "WITH's answer was exact",
        None,
        None,
    ),
    ('{"label": "a"}', "(a)", None, None, None),
    ('{"label": "(A)"}', "(a)", None, None, None),
    ('{"label": "(a) WITH was better"}', "(a)", None, None, None),
    ('{"label": "a) WITH was measurably better"}', "(a)", None, None, None),
    ('{"label": "label: (b)"}', "(b)", None, None, None),
    ('{"label": "C"}', "(c)", None, None, None),
    ('{"label": "**(b)**", "uncertainty": "High — close call"}', "(b)", None, "high", None),
    ('{label: "(c)", uncertainty: Low, cost_ratio: 2}', "(c)", None, "low", 2.0),
    (
        '{"Label": "(b)", "Uncertainty": "MEDIUM", "cost_ratio": "12000 / 20000"}',
        "(b)",
        None,
        "medium",
        0.6,
    ),
    ('{"label": "(a)", "cost_ratio": "12000/20000 = 0.6"}', "(a)", None, None, 0.6),
    ('{"label": "(a)", "cost_ratio": "~0.5x (cheaper)"}', "(a)", None, None, 0.5),
    ('{"label": "(a)", "cost_ratio": "n/a", "uncertainty": 3}', "(a)", None, None, None),
    (
        "{\u201clabel\u201d: \u201c(b)\u201d, \u201creasoning\u201d: \u201cok\u201d}",
        "(b)",
        "ok",
        None,
        None,
    ),
    (
        '{"label": "(a)", "reasoning": "WITH cited "auth.go" exactly"}',
        "(a)",
        'WITH cited "auth.go" exactly',
        None,
        None,
    ),
    ('{"label": "(a)"} ... repeated: {"label": "a"}', "(a)", None, None, None),
    ('{"result": {"label": "(c)", "reasoning": "nested"}}', "(c)", "nested", None, None),
    ('{"label": "(b)", "reasoning": "truncated output"', "(b)", "truncated output", None, None),
    ('{"label": "(a)"\n "reasoning": "missing comma"}', "(a)", "missing comma", None, None),
    ('{"label": "(a)",\n "reasoning": "x", // a comment\n}', "(a)", "x", None, None),
    ('{"verdict": "(c)"}', "(c)", None, None, None),
    ('{"label": ["(b)"]}', "(b)", None, None, None),
]


@pytest.mark.parametrize(("text", "label", "reasoning", "unc", "ratio"), WW_CASES)
def test_with_without_parse_table(text, label, reasoning, unc, ratio):
    v = rubrics.get("with-without").parse(text)
    assert isinstance(v, Verdict)
    assert v.label == label
    assert v.outcome == {"(a)": "win", "(b)": "tie", "(c)": "loss"}[label]
    assert v.reasoning == reasoning
    assert v.uncertainty == unc
    if ratio is None:
        assert v.judge_cost_ratio is None
    else:
        assert v.judge_cost_ratio == pytest.approx(ratio)
    assert v.scores == {}


def test_with_without_fields_verbatim():
    v = rubrics.get("with-without").parse(WW_FULL)
    assert v.fields == {
        "facts_correct_with": "2/5",
        "facts_correct_without": "4/5",
        "hallucinations_with": "1",
        "hallucinations_without": "none",
    }


WW_FAILURES = [
    ("", "no JSON object"),
    ("(a)", "no JSON object"),
    ("I pick (a) because WITH was better.", "no JSON object"),
    ("{not json at all", "no JSON object"),
    ('{"reasoning": "forgot the label"}', "label missing"),
    ('{"label": "(a) or (b)"}', "two different labels"),
    ('{"label": "(a)|(b)|(c)", "reasoning": "<1-3 sentences>"}', "two different labels"),
    ('{"label": "(a)"}\n\nOn reflection:\n{"label": "(c)"}', "two different labels"),
    ('{"label": "(a)", "label": "(b)"}', "two different labels"),
    ('{"label": "better"}', "unrecognised label"),
    ('{"label": "a tie"}', "unrecognised label"),
    ('{"label": "(d)"}', "unrecognised label"),
    ('{"label": 1}', "unrecognised label"),
    ('{"label": null}', "unrecognised label"),
    ('{"label": ""}', "unrecognised label"),
]


@pytest.mark.parametrize(("text", "reason"), WW_FAILURES)
def test_with_without_parse_failures(text, reason):
    with pytest.raises(ParseError, match=reason) as info:
        rubrics.get("with-without").parse(text)
    assert reason in info.value.reason


def test_with_without_parse_rejects_order():
    with pytest.raises(ValueError, match="order"):
        rubrics.get("with-without").parse('{"label": "(a)"}', order="with_first")


# --------------------------------------------------------------------------- parse: blind-pair


def _bp(a, b, verdict, *, extra="", reasoning="A cited lines."):
    def block(s, notes):
        return (
            "{\n"
            f'    "correctness": {s[0]},\n'
            f'    "specificity": {s[1]},\n'
            f'    "completeness": {s[2]},\n'
            f'    "hallucination_safety": {s[3]},\n'
            f'    "notes": "{notes}"\n'
            "  }"
        )

    return (
        "{\n"
        f'  "agent_a": {block(a, "notes on A")},\n'
        f'  "agent_b": {block(b, "notes on B")},\n'
        f'  "verdict": {verdict},\n'
        f'  "verdict_reasoning": "{reasoning}"{extra}\n'
        "}"
    )


A_SCORES, B_SCORES = (5, 4, 3, 5), (2, 3, 4, 1)

BP_LABEL_CASES = [
    ('"a_wins"', "a_wins"),
    ('"A_WINS"', "a_wins"),
    ('"a wins"', "a_wins"),
    ('"Agent A"', "a_wins"),
    ('"agent_a"', "a_wins"),
    ('"A"', "a_wins"),
    ('"Agent A wins"', "a_wins"),
    ("'b_wins'", "b_wins"),
    ('"b"', "b_wins"),
    ('"B wins."', "b_wins"),
    ('"tie"', "tie"),
    ('"Tie"', "tie"),
    ('"draw"', "tie"),
    ("tie", "tie"),
    ("b_wins", "b_wins"),
]


@pytest.mark.parametrize(("verdict", "label"), BP_LABEL_CASES)
@pytest.mark.parametrize("order", [None, "with_first", "without_first"])
def test_blind_pair_labels_and_deblinding(verdict, label, order):
    v = rubrics.get("blind-pair").parse(_bp(A_SCORES, B_SCORES, verdict), order=order)
    assert v.label == label
    a = dict(zip(BLIND_DIMENSIONS, A_SCORES, strict=True))
    b = dict(zip(BLIND_DIMENSIONS, B_SCORES, strict=True))
    if order is None:
        expected_outcome = "tie" if label == "tie" else None
        scores = {**{f"a_{d}": a[d] for d in a}, **{f"b_{d}": b[d] for d in b}}
        notes = {"notes_a": "notes on A", "notes_b": "notes on B"}
    elif order == "with_first":
        expected_outcome = {"a_wins": "win", "b_wins": "loss", "tie": "tie"}[label]
        scores = {**{f"with_{d}": a[d] for d in a}, **{f"without_{d}": b[d] for d in b}}
        notes = {"notes_with": "notes on A", "notes_without": "notes on B"}
    else:
        expected_outcome = {"a_wins": "loss", "b_wins": "win", "tie": "tie"}[label]
        scores = {**{f"with_{d}": b[d] for d in b}, **{f"without_{d}": a[d] for d in a}}
        notes = {"notes_with": "notes on B", "notes_without": "notes on A"}
    assert v.outcome == expected_outcome
    assert v.scores == scores
    assert list(v.scores) == list(scores)  # with_* before without_*, dimensions in order
    assert v.fields == notes
    assert v.reasoning == "A cited lines."
    assert v.uncertainty is None and v.judge_cost_ratio is None


def test_blind_pair_tolerant_formats():
    bp = rubrics.get("blind-pair")
    raw = _bp(("4", '"4"', '"3/5"', 5.0), (1, 2, 3, '" 4 "'), '"a_wins"', extra=",")
    text = "Sure, here is the evaluation:\n```json\n" + raw + "\n```\nLet me know."
    v = bp.parse(text, order="with_first")
    assert v.scores == {
        "with_correctness": 4,
        "with_specificity": 4,
        "with_completeness": 3,
        "with_hallucination_safety": 5,
        "without_correctness": 1,
        "without_specificity": 2,
        "without_completeness": 3,
        "without_hallucination_safety": 4,
    }
    single = raw.replace('"', "'").replace("'\"", "'")
    assert bp.parse(single, order="with_first").scores == v.scores
    # Keys spelled loosely, the block wrapped, extra fields kept.
    loose = (
        "{'scores': {'Agent A': {'Correctness': 2, 'Specificity': 2, 'Completeness': 2,"
        " 'Hallucination Safety': 2}, 'Agent B': {'correctness': 3, 'specificity': 3,"
        " 'completeness': 3, 'hallucination_safety': 3, 'notes': 'fine',}},"
        " 'verdict': 'Agent B', 'confidence': 'high', 'extra': None}"
    )
    w = bp.parse(loose, order="without_first")
    assert w.outcome == "win"
    assert w.scores["with_correctness"] == 3 and w.scores["without_correctness"] == 2
    assert w.fields == {"notes_with": "fine", "confidence": "high"}


def test_blind_pair_repeated_agreeing_objects_use_the_last():
    one = _bp(A_SCORES, B_SCORES, '"a_wins"', reasoning="first")
    two = _bp(A_SCORES, B_SCORES, '"A"', reasoning="second")
    v = rubrics.get("blind-pair").parse(one + "\n\nFinal:\n" + two, order="with_first")
    assert v.label == "a_wins" and v.reasoning == "second"


BP_FAILURES = [
    ("", "no JSON object"),
    ("Agent A wins.", "no JSON object"),
    (_bp(A_SCORES, B_SCORES, '"a_wins" | "b_wins" | "tie"'), "two different labels"),
    (_bp(A_SCORES, B_SCORES, '"a_wins or tie"'), "two different labels"),
    (
        _bp(A_SCORES, B_SCORES, '"a_wins"') + _bp(A_SCORES, B_SCORES, '"b_wins"'),
        "two different labels",
    ),
    (_bp(A_SCORES, B_SCORES, '"both good"'), "unrecognised verdict"),
    (_bp(A_SCORES, B_SCORES, "null"), "unrecognised verdict"),
    (_bp(A_SCORES, B_SCORES, '"a_wins"').replace('"verdict"', '"summary"'), "verdict missing"),
    (_bp(A_SCORES, B_SCORES, '"tie"').replace('"agent_b"', '"agent_c"'), "missing agent block"),
    ('{"agent_a": {"correctness": 3}, "verdict": "tie"}', "missing agent block"),
    (_bp((4.5, 4, 3, 5), B_SCORES, '"a_wins"'), "not an integer"),
    (_bp(A_SCORES, (2, 3, '"4.5"', 1), '"a_wins"'), "not an integer"),
    (_bp((6, 4, 3, 5), B_SCORES, '"a_wins"'), "outside 1-5"),
    (_bp(A_SCORES, (0, 3, 4, 1), '"a_wins"'), "outside 1-5"),
    (_bp(A_SCORES, (2, 3, 4, '"<1-5>"'), '"a_wins"'), "not a number"),
    (_bp(A_SCORES, (2, 3, 4, "true"), '"a_wins"'), "not a number"),
    (_bp(A_SCORES, (2, 3, 4, "null"), '"a_wins"'), "not a number"),
    (
        _bp(A_SCORES, B_SCORES, '"tie"').replace('"completeness": 3,', ""),
        "missing score: agent_a.completeness",
    ),
]


@pytest.mark.parametrize(("text", "reason"), BP_FAILURES)
def test_blind_pair_parse_failures(text, reason):
    with pytest.raises(ParseError) as info:
        rubrics.get("blind-pair").parse(text, order="with_first")
    assert reason in info.value.reason


def test_blind_pair_parse_rejects_bad_order():
    with pytest.raises(ValueError, match="order"):
        rubrics.get("blind-pair").parse(_bp(A_SCORES, B_SCORES, '"tie"'), order="a_first")


# --------------------------------------------------------------------------- robustness


@pytest.mark.parametrize("name", sorted(PINNED))
@pytest.mark.parametrize(
    "text",
    [
        "{" * 100_000,
        "[" * 50_000 + "{",
        '{"a":' * 5_000 + "1" + "}" * 5_000,
        "{'" * 50_000,
        '{"label": "' + "x" * 400_000,
        "{" + '"label": "(a)", ' * 20_000 + "}",
        "x" * 600_000,
        None,
        b'{"label": "(a)"}',
    ],
    ids=[
        "braces",
        "brackets",
        "deep",
        "quotes",
        "unterminated",
        "many-keys",
        "huge",
        "none",
        "bytes",
    ],
)
def test_pathological_inputs_raise_parse_error_only(name, text):
    r = rubrics.get(name)
    try:
        v = r.parse(text, order="with_first" if r.needs_order else None)
    except ParseError as e:
        assert e.reason
    else:
        assert v.label in ("(a)", "(b)", "(c)", "a_wins", "b_wins", "tie")
