"""Hypothesis fuzzing of both rubric parsers.

Well-formed verdicts in random spellings and wrappings must parse to the right label (and,
for blind-pair, the right de-blinded scores); anything else must either parse or raise
ParseError, never another exception.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import evalstats.rubrics
from evalstats import rubrics
from evalstats.errors import ParseError

BLIND_DIMENSIONS = evalstats.rubrics.get("blind-pair").dimensions

WW = rubrics.get("with-without")
BP = rubrics.get("blind-pair")

FUZZ = settings(
    max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

WW_SPELLINGS = {
    "(a)": ["(a)", "a", "A", "(A)", "(a) WITH was better", "a) WITH was measurably better",
            "label: (a)", "A.", "**(a)**", "( a )", "a - better"],
    "(b)": ["(b)", "b", "B", "(B)", "(b) WITH and WITHOUT were roughly equivalent", "b)",
            "label: (b)", "Label: B", "(b) equivalent"],
    "(c)": ["(c)", "c", "C", "(C)", "(c) WITH was worse", "c) worse", "label: (c)", "c: worse"],
}  # fmt: skip
BP_SPELLINGS = {
    "a_wins": ["a_wins", "A_WINS", "a wins", "Agent A", "agent_a", "A", "a", "Agent A wins",
               "A wins.", "agent-a"],
    "b_wins": ["b_wins", "B_WINS", "b wins", "Agent B", "agent_b", "B", "b", "Winner: Agent B"],
    "tie": ["tie", "TIE", "Tie", "draw", "Draw", "tied"],
}  # fmt: skip

# Prose around the JSON: no braces (a brace-free preamble cannot contain another object).
prose = st.text(
    alphabet=st.characters(blacklist_characters="{}", blacklist_categories=("Cs",)), max_size=80
)
safe_text = st.text(
    alphabet=st.characters(
        blacklist_characters="{}\"'\\\u201c\u201d\u2018\u2019", blacklist_categories=("Cs", "Cc")
    ),
    max_size=60,
)


@st.composite
def serialised(draw, obj: dict) -> str:
    """``obj`` written the way some judge might: quoting, commas, fences, prose."""
    style = draw(st.sampled_from(["json", "json-indent", "single", "bare-keys"]))
    trailing = draw(st.booleans())

    def dump(v, indent):
        if isinstance(v, dict):
            items = []
            for k, x in v.items():
                if style == "single":
                    key = f"'{k}'"
                elif style == "bare-keys":
                    key = k
                else:
                    key = json.dumps(k)
                items.append(f"{key}: {dump(x, indent + 2)}")
            sep = ",\n" + " " * (indent + 2) if style == "json-indent" else ", "
            body = sep.join(items) + ("," if trailing else "")
            if style == "json-indent":
                return "{\n" + " " * (indent + 2) + body + "\n" + " " * indent + "}"
            return "{" + body + "}"
        if isinstance(v, str) and style == "single":
            return "'" + v + "'"  # values are drawn without quotes or backslashes
        return json.dumps(v, ensure_ascii=draw(st.booleans()))

    body = dump(obj, 0)
    fence = draw(st.sampled_from(["", "```json\n", "```\n", "~~~\n"]))
    close = {"": "", "~~~\n": "\n~~~"}.get(fence, "\n```")
    return draw(prose) + ("\n" if fence else "") + fence + body + close + draw(prose)


@pytest.mark.slow  # fuzzer
@given(data=st.data())
@FUZZ
def test_with_without_wellformed_parses_to_the_label(data):
    label = data.draw(st.sampled_from(sorted(WW_SPELLINGS)))
    spelling = data.draw(st.sampled_from(WW_SPELLINGS[label]))
    obj = {"label": spelling}
    for key in ("reasoning", "facts_correct_with", "hallucinations_without"):
        if data.draw(st.booleans()):
            obj[key] = data.draw(safe_text)
    if data.draw(st.booleans()):
        obj["cost_ratio"] = data.draw(st.one_of(st.floats(0.01, 100), st.just("0.6"), st.just(1)))
    if data.draw(st.booleans()):
        obj["uncertainty"] = data.draw(st.sampled_from(["low", "Medium", "HIGH", "medium."]))
    keys = list(obj)
    order = data.draw(st.permutations(keys))
    text = data.draw(serialised({k: obj[k] for k in order}))
    v = WW.parse(text)
    assert v.label == label, text
    assert v.outcome == {"(a)": "win", "(b)": "tie", "(c)": "loss"}[label]
    if "reasoning" in obj and obj["reasoning"].strip():
        assert v.reasoning.strip() == obj["reasoning"].strip()
    if "uncertainty" in obj:
        assert v.uncertainty == obj["uncertainty"].lower().strip(".")


@pytest.mark.slow  # fuzzer
@given(data=st.data())
@FUZZ
def test_blind_pair_wellformed_parses_and_deblinds(data):
    label = data.draw(st.sampled_from(sorted(BP_SPELLINGS)))
    spelling = data.draw(st.sampled_from(BP_SPELLINGS[label]))
    order = data.draw(st.sampled_from([None, "with_first", "without_first"]))
    score = st.integers(1, 5)
    a = {d: data.draw(score) for d in BLIND_DIMENSIONS}
    b = {d: data.draw(score) for d in BLIND_DIMENSIONS}

    def block(s):
        out = {d: (str(x) if data.draw(st.booleans()) else x) for d, x in s.items()}
        if data.draw(st.booleans()):
            out["notes"] = data.draw(safe_text)
        return out

    obj = {"agent_a": block(a), "agent_b": block(b), "verdict": spelling}
    if data.draw(st.booleans()):
        obj["verdict_reasoning"] = data.draw(safe_text)
    text = data.draw(serialised(obj))
    v = BP.parse(text, order=order)
    assert v.label == label, text
    if order is None:
        assert v.outcome == ("tie" if label == "tie" else None)
        expect = {**{f"a_{d}": a[d] for d in a}, **{f"b_{d}": b[d] for d in b}}
    else:
        w, wo = (a, b) if order == "with_first" else (b, a)
        a_is_with = order == "with_first"
        expect_outcome = {
            "a_wins": "win" if a_is_with else "loss",
            "b_wins": "loss" if a_is_with else "win",
            "tie": "tie",
        }[label]
        assert v.outcome == expect_outcome
        expect = {**{f"with_{d}": w[d] for d in w}, **{f"without_{d}": wo[d] for d in wo}}
    assert v.scores == expect


def _check(rubric, text, order=None):
    try:
        v = rubric.parse(text, order=order)
    except ParseError as e:
        assert isinstance(e.reason, str) and e.reason
        return None
    assert v.label in (("(a)", "(b)", "(c)") if rubric is WW else ("a_wins", "b_wins", "tie"))
    if rubric is BP:
        assert all(1 <= s <= 5 for s in v.scores.values())
        assert len(v.scores) == 8
    return v


JSONISH = st.text(alphabet="{}[]:,\"'\\ \n\tabcl()_-1234567890.eETNul\u201c\u201d/*", max_size=200)


@pytest.mark.slow  # fuzzer
@given(text=st.one_of(st.text(max_size=300), JSONISH))
@settings(max_examples=800, deadline=None, derandomize=True)
def test_arbitrary_text_parses_or_raises_parse_error(text):
    _check(WW, text)
    _check(BP, text, "with_first")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda kids: (
        st.lists(kids, max_size=4)
        | st.dictionaries(
            st.sampled_from(["label", "verdict", "agent_a", "agent_b", "correctness", "notes", "x"])
            | st.text(max_size=8),
            kids,
            max_size=5,
        )
    ),
    max_leaves=25,
)


@pytest.mark.slow  # fuzzer
@given(value=json_values, prefix=prose)
@settings(max_examples=400, deadline=None, derandomize=True)
def test_arbitrary_json_parses_or_raises_parse_error(value, prefix):
    text = prefix + json.dumps(value)
    _check(WW, text)
    _check(BP, text, "without_first")


@st.composite
def mutated(draw):
    """A valid output of either rubric with a few random edits."""
    if draw(st.booleans()):
        rubric = WW
        obj = {
            "label": draw(st.sampled_from(["(a)", "(b)", "(c)"])),
            "reasoning": "ok",
            "cost_ratio": "0.5",
        }
    else:
        rubric = BP
        blk = {d: draw(st.integers(1, 5)) for d in BLIND_DIMENSIONS}
        obj = {"agent_a": blk, "agent_b": dict(blk), "verdict": "a_wins", "verdict_reasoning": "x"}
    text = "```json\n" + json.dumps(obj, indent=2) + "\n```"
    for _ in range(draw(st.integers(1, 6))):
        i = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        j = min(len(text), i + draw(st.integers(1, 12)))
        piece = draw(st.text(alphabet="{}[]:,\"' \n\\abc(12)_", min_size=1, max_size=4))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + piece + text[i:]
        elif op == "replace":
            text = text[:i] + piece + text[j:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return rubric, text


@pytest.mark.slow  # fuzzer
@given(case=mutated(), order=st.sampled_from(["with_first", "without_first"]))
@settings(max_examples=1200, deadline=None, derandomize=True)
def test_mutated_outputs_parse_or_raise_parse_error(case, order):
    rubric, text = case
    _check(rubric, text, order if rubric is BP else None)
