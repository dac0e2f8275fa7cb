"""Rubric files (TOML): the seeds as files, loading, errors, `rubric new|show`, tolerance."""

from __future__ import annotations

import dataclasses
import hashlib
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest
import test_rubrics as T
import test_rubrics_fuzz as F
from hypothesis import given, settings
from hypothesis import strategies as st

from evalstats import rubrics
from evalstats.cli import build_parser
from evalstats.errors import DataError, EvalstatsError, ParseError

SEED_FILES = {"with-without": "with-without.r1.toml", "blind-pair": "blind-pair.r1.toml"}


def _seed_path(name: str) -> Path:
    return Path(str(resources.files("evalstats.rubrics").joinpath("data", SEED_FILES[name])))


def _write(tmp_path: Path, text: str, name: str = "r.toml") -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --------------------------------------------------------------------------- the seeds as files


@pytest.mark.parametrize("name", sorted(SEED_FILES))
def test_seed_files_are_the_generated_form(name):
    # The checked-in files are what seed_toml writes: a changed built-in shows up here.
    assert _seed_path(name).read_text(encoding="utf-8") == rubrics.seed_toml(name)


@pytest.mark.parametrize("name", sorted(SEED_FILES))
def test_seed_file_has_the_builtin_text_and_reading(name):
    built, file = rubrics.get(name), rubrics.get(_seed_path(name))
    assert (file.name, file.revision, file.kind) == (built.name, 1, built.kind)
    assert file.system == built.system and file.user_template == built.user_template
    assert file.dimensions == built.dimensions and file.needs_order == built.needs_order
    assert file.spec == built.spec
    # Its own sha256: of the file's bytes; the built-in's pin is unchanged.
    assert file.sha256 == hashlib.sha256(_seed_path(name).read_bytes()).hexdigest()
    assert built.sha256 == T.PINNED[name][1] != file.sha256
    assert file.path == str(_seed_path(name)) and built.path is None


def test_seed_files_render_byte_identical_prompts():
    ww, ww_f = rubrics.get("with-without"), rubrics.get(_seed_path("with-without"))
    assert ww_f.render(T.TASK, T.WITH, T.WITHOUT) == ww.render(T.TASK, T.WITH, T.WITHOUT)
    bp, bp_f = rubrics.get("blind-pair"), rubrics.get(_seed_path("blind-pair"))
    for order in ("with_first", "without_first"):
        got = bp_f.render(T.TASK, T.WITH, T.WITHOUT, order=order)
        assert got == bp.render(T.TASK, T.WITH, T.WITHOUT, order=order)
        assert got.messages() == bp.render(T.TASK, T.WITH, T.WITHOUT, order=order).messages()


def _outcome(rubric, text, order=None):
    try:
        return rubric.parse(text, order=order)
    except ParseError as e:
        return ("ParseError", e.reason)


@pytest.mark.parametrize(
    "case", T.WW_CASES + [(t, None, None, None, None) for t, _ in T.WW_FAILURES]
)
def test_with_without_file_parses_identically(case):
    text = case[0]
    built, file = rubrics.get("with-without"), rubrics.get(_seed_path("with-without"))
    assert _outcome(file, text) == _outcome(built, text)


BP_TEXTS = [T._bp(T.A_SCORES, T.B_SCORES, v) for v, _ in T.BP_LABEL_CASES] + [
    t for t, _ in T.BP_FAILURES
]


@pytest.mark.parametrize("text", BP_TEXTS)
@pytest.mark.parametrize("order", [None, "with_first", "without_first"])
def test_blind_pair_file_parses_identically(text, order):
    built, file = rubrics.get("blind-pair"), rubrics.get(_seed_path("blind-pair"))
    assert _outcome(file, text, order) == _outcome(built, text, order)


# The fuzz suite's generators, run on file rubrics: as tolerant as the built-ins, and the same.
@pytest.mark.slow  # fuzzer
@given(data=st.data())
@settings(max_examples=300, deadline=None, derandomize=True)
def test_fuzz_file_rubric_reads_like_the_builtin(data):
    ww_f = rubrics.get(_seed_path("with-without"))
    bp_f = rubrics.get(_seed_path("blind-pair"))
    label = data.draw(st.sampled_from(sorted(F.WW_SPELLINGS)))
    text = data.draw(F.serialised({"label": data.draw(st.sampled_from(F.WW_SPELLINGS[label]))}))
    assert ww_f.parse(text).label == label
    case = data.draw(F.mutated())
    rubric, mutated = case
    file = ww_f if rubric is F.WW else bp_f
    order = None if rubric is F.WW else data.draw(st.sampled_from(["with_first", "without_first"]))
    assert _outcome(file, mutated, order) == _outcome(rubric, mutated, order)
    junk = data.draw(st.one_of(st.text(max_size=200), F.JSONISH))
    assert _outcome(ww_f, junk) == _outcome(F.WW, junk)
    assert _outcome(bp_f, junk, "with_first") == _outcome(F.BP, junk, "with_first")


# --------------------------------------------------------------------------- rubric new / show


def _cli(*argv: str) -> tuple[int, str]:
    import contextlib
    import io

    parser = build_parser()
    args = parser.parse_args(list(argv))
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            return args.func(args), buf.getvalue()
    except EvalstatsError as exc:  # what evalstats.cli.main does with it
        print(f"evalstats rubric: error: {exc}", file=sys.stderr)
        return 2, buf.getvalue()


def test_rubric_new_names_the_tool_everywhere(tmp_path):
    out = tmp_path / "rubrics" / "serena.toml"
    code, printed = _cli(
        "rubric", "new", "--from", "with-without", "--tool-name", "Serena MCP", "-o", str(out)
    )
    assert code == 0 and out.is_file()
    r = rubrics.get(out)
    seed = rubrics.get("with-without")
    assert (r.name, r.revision, r.kind) == ("with-without-serena-mcp", 1, "three-way")
    assert r.sha256 == hashlib.sha256(out.read_bytes()).hexdigest() != seed.sha256
    assert f"sha256: {r.sha256}" in printed and "name: with-without-serena-mcp" in printed
    p = r.render(T.TASK, T.WITH, T.WITHOUT)
    for text in (p.system, p.user, out.read_text(encoding="utf-8")):
        assert "gortex" not in text.lower()
        assert "Serena MCP" in text
    assert "access to the Serena MCP tool surface" in p.system
    assert "WITH (Serena MCP available):" in p.user
    assert "WITHOUT (no Serena MCP):" in p.user
    # Only the tool's name changed: the rest of the prompt is the seed's, word for word.
    expected = seed.render(T.TASK, T.WITH, T.WITHOUT)
    assert p.user == expected.user.replace("gortex MCP", "Serena MCP")
    assert (
        p.system.split()
        == expected.system.replace("gortex\nMCP", "gortex MCP")
        .replace("gortex MCP", "Serena MCP")
        .split()
    )
    assert r.parse('{"label": "(a)"}').outcome == "win"
    # show prints the identity; new refuses to overwrite without --force.
    code, shown = _cli("rubric", "show", str(out))
    assert code == 0 and shown.splitlines()[:3] == printed.splitlines()[1:4]
    assert (
        _cli("rubric", "new", "--from", "with-without", "--tool-name", "X", "-o", str(out))[0] == 2
    )


def test_rubric_new_with_its_own_name(tmp_path):
    out = tmp_path / "s.toml"
    code, _ = _cli(
        "rubric", "new", "--from", "with-without", "--tool-name", "Serena MCP",
        "--name", "serena", "-o", str(out),
    )  # fmt: skip
    assert code == 0
    assert rubrics.get(str(out)).name == "serena"
    assert "arms" not in tomllib.loads(out.read_text())  # arms.toml describes the arms


def test_rubric_new_from_blind_pair_keeps_it_blind(tmp_path):
    out = tmp_path / "b.toml"
    assert (
        _cli("rubric", "new", "--from", "blind-pair", "--tool-name", "Serena", "-o", str(out))[0]
        == 0
    )
    r = rubrics.get(out)
    assert r.kind == "blind-scores" and r.name == "blind-pair-serena"
    assert r.system == rubrics.get("blind-pair").system  # seed 001 names no tool
    assert r.sha256 != rubrics.get(_seed_path("blind-pair")).sha256


def test_rubric_show_builtin_and_unknown(capsys):
    code, shown = _cli("rubric", "show", "blind-pair")
    assert code == 0 and f"sha256: {T.PINNED['blind-pair'][1]}" in shown
    assert _cli("rubric", "show", "nope")[0] == 2
    assert "unknown rubric 'nope'" in capsys.readouterr().err


# --------------------------------------------------------------------------- a rubric of your own

WORDS = """
name = "words"
revision = 3
kind = "three-way"

[prompt]
system = "Compare the two answers. Reply with JSON {\\"verdict\\": better|same|worse}."
user = '''
Q: {task_prompt}
A1 ({with_token_cost} tokens, files: {with_files}): {with_answer}
A2: {without_answer}'''

[output]
label_fields = ["verdict"]
fallback_fields = []

[output.labels]
better = "win"
same = "tie"
worse = "loss"

[output.aliases]
"equivalent" = "same"
"""


def test_a_word_label_rubric(tmp_path):
    r = rubrics.load(_write(tmp_path, WORDS))
    assert (r.name, r.revision) == ("words", 3)
    p = r.render(T.TASK, T.WITH, {"answer": "no idea"})  # unused inputs are not required
    assert p.user == (
        "Q: " + T.TASK["prompt"] + "\nA1 (1234 tokens, files: - parse.go\n- lex/lex.go): "
        + T.WITH["answer"] + "\nA2: no idea"
    )  # fmt: skip
    assert r.parse('Sure: {"verdict": "Better: A1 cited lines"}').outcome == "win"
    assert r.parse("{'verdict': '**same**'}").label == "same"
    assert r.parse('{"verdict": "Equivalent"}').outcome == "tie"
    assert r.parse('```json\n{"verdict": "worse",}\n```').outcome == "loss"
    for bad, reason in [
        ('{"verdict": "better or worse"}', "two different labels"),
        ('{"verdict": "dunno"}', "unrecognised label"),
        ('{"verdict": "bettered"}', "unrecognised label"),
        ('{"verdict": "better"} {"verdict": "worse"}', "two different labels"),
        ('{"label": "better"}', "label missing"),
    ]:
        with pytest.raises(ParseError) as info:
            r.parse(bad)
        assert reason in info.value.reason


def test_a_custom_blind_rubric(tmp_path):
    text = rubrics.seed_toml("blind-pair").replace('name = "blind-pair"', 'name = "two-dims"')
    text = (
        text.replace(
            'dimensions = ["correctness", "specificity", "completeness", "hallucination_safety"]',
            'dimensions = ["accuracy", "clarity"]',
        )
        .replace('hallucination_safety = ["hallucination"]', "")
        .replace("scores = [1, 5]", "scores = [0, 10]")
    )
    text = text.replace("# more spellings of a verdict", 'first = "a_wins"\nsecond = "b_wins"\n#')
    r = rubrics.load(_write(tmp_path, text))
    out = '{"agent_a": {"accuracy": 9, "clarity": "7/10"}, "agent_b": {"accuracy": 0, "clarity": 3}, "verdict": "First"}'
    v = r.parse(out, order="without_first")
    assert v.outcome == "loss" and v.scores == {
        "with_accuracy": 0, "with_clarity": 3, "without_accuracy": 9, "without_clarity": 7,
    }  # fmt: skip
    with pytest.raises(ParseError, match="outside 0-10"):
        r.parse(out.replace('"accuracy": 9', '"accuracy": 11'), order="with_first")


# --------------------------------------------------------------------------- bad rubric files


def _mutate(old: str, new: str) -> str:
    base = rubrics.seed_toml("with-without")
    assert old in base, old
    return base.replace(old, new, 1)


BAD = [
    # (file text, field, line or None (any), message part)
    ('name = "x"\nrevision = 1\nkind = "pairwise"\n', "kind", 3, "unknown output kind 'pairwise'"),
    ('name = "x"\nrevision = \n', None, 2, "not valid TOML"),
    ('revision = 1\nkind = "three-way"\n', "name", None, "missing"),
    (_mutate("revision = 1", "revision = 0"), "revision", 2, "integer >= 1"),
    (_mutate("revision = 1", 'revision = "1"'), "revision", 2, "integer >= 1"),
    (_mutate('name = "with-without"', 'name = "With Without"'), "name", 1, "lower-case"),
    (_mutate("{with_answer}", "{with_answr}"), "prompt.user", None, "unknown placeholder {with_answr}"),
    (_mutate("{without_answer}", "the other answer"), "prompt.user", None, "missing placeholder {without_answer}"),
    (_mutate('"(c)" = "loss"', '"(c)" = "lose"'), "output.labels.(c)", None, "outcome must be one of"),
    (_mutate('"(c)" = "loss"', '"(c)" = "win"'), "output.labels", None, "one label each to win, tie and loss"),
    (_mutate("[output.labels]", "[output.label]"), "output.label", None, "unknown field"),
    (_mutate("[prompt]", "colour = 1\n[prompt]"), "colour", 6, "unknown field"),
    (_mutate("[prompt]", "[prompts]"), "prompts", 6, "unknown field"),
    (_mutate("[prompt]", '[arms]\nwith = "A"\n\n[prompt]'), "arms", 6, "unknown field"),
    (_mutate('label_fields = ["label"]', "label_fields = []"), "output.label_fields", None, "non-empty list"),
]  # fmt: skip


@pytest.mark.parametrize(("text", "field", "line", "message"), BAD)
def test_bad_rubric_files_name_file_line_and_field(tmp_path, text, field, line, message):
    path = _write(tmp_path, text, "bad.toml")
    with pytest.raises(DataError) as info:
        rubrics.load(path)
    e = info.value
    assert e.path == str(path) and str(path) in str(e)
    assert e.field == field
    assert message in e.reason, e.reason
    if line is not None:
        assert e.line == line
    if field is not None and e.line is not None:
        # The line reported holds the field's key (or its table's header).
        key = field.split(".")[-1]
        assert (
            key.strip('"()') in text.split("\n")[e.line - 1] or "[" in text.split("\n")[e.line - 1]
        )


def test_blind_rubric_may_not_show_the_arms(tmp_path):
    text = rubrics.seed_toml("blind-pair").replace(
        "{agent_b_files}", "{agent_b_files} {with_answer}"
    )
    with pytest.raises(DataError, match="must not say which answer is WITH"):
        rubrics.load(_write(tmp_path, text))
    text = rubrics.seed_toml("blind-pair").replace("dimensions = [", "dims = [")
    with pytest.raises(DataError, match="unknown field"):
        rubrics.load(_write(tmp_path, text))


def test_missing_and_undecodable_files(tmp_path):
    with pytest.raises(DataError, match="cannot read rubric file") as info:
        rubrics.load(tmp_path / "nope.toml")
    assert info.value.path == str(tmp_path / "nope.toml")
    bad = tmp_path / "latin1.toml"
    bad.write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(DataError, match="not UTF-8"):
        rubrics.load(bad)
    with pytest.raises(DataError, match="cannot read"):
        rubrics.get(str(tmp_path / "missing.toml"))
    with pytest.raises(KeyError, match="or a path to a rubric .toml file"):
        rubrics.get("pairwise")


def test_to_toml_escapes_what_a_literal_string_cannot_hold(tmp_path):
    r = rubrics.get("with-without")
    odd = dataclasses.replace(r, system="a '''b'''\r\n\x01c'")
    back = rubrics.load(_write(tmp_path, rubrics.to_toml(odd)))
    assert back.system == "a '''b'''\r\n\x01c'"
