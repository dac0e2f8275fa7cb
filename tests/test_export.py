"""The paper export: every number written equals the one in results.json at the chosen precision.

The sample's results.json is built once per session the way ``evalstats report`` writes it
(:func:`compute_results` -> :func:`merge_results` -> :func:`dump_json`), without executing the
notebooks (the numbers are the same; the notebooks only display them).
"""

from __future__ import annotations

import copy
import json
import math
import re
from pathlib import Path

import pytest

import evalstats.report as ex
from evalstats.cli import build_parser
from evalstats.errors import DataError

# Integration (slow: make test runs it, make check does not): exports the sample's whole report.
pytestmark = pytest.mark.slow

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
RATES = {"win_rate", "tie_rate", "loss_rate", "net_win", "score", "observed_agreement"}
CONFIGS = [(None, True), (1, True), (None, False), (3, False)]
NUM = r"-?\d+(?:\.\d+)?"
IV = re.compile(rf"^({NUM})(?: \[({NUM}), ({NUM})\])?$")


@pytest.fixture(scope="session")
def results_path(tmp_path_factory) -> Path:
    from evalstats.report import compute_results, dump_json, merge_results

    res = compute_results(SAMPLE, n_resamples=300, seed=0)
    path = tmp_path_factory.mktemp("report") / "results.json"
    path.write_text(dump_json(merge_results(res.to_json())), encoding="utf-8")
    return path


@pytest.fixture(scope="session")
def doc(results_path) -> dict:
    return json.loads(results_path.read_text(encoding="utf-8"))


# -- results.json's long tables, read back independently ----------------------------------------

SUFFIX = {"": "estimate", "_ci_low": "ci_low", "_ci_high": "ci_high", "_se": "se", "_p": "p_value"}


def _by(rows: list[dict]) -> list[str]:
    cols = list(rows[0])
    by = cols[: cols.index("statistic")] if "statistic" in cols else []
    # The cost ratios are one row per statistic for one pair of arms (arm_a, arm_b).
    return [] if by == ["arm_a", "arm_b"] else by


def source_rows(doc: dict, name: str) -> list[dict]:
    """Table ``name`` one dict per group: the long rows' ``<statistic>``,
    ``<statistic>_ci_low`` ... beside the group's diagnostics (a table with no grouping
    columns, the cost ratios, is one row per statistic already)."""
    rows = doc["tables"][name]
    by = _by(rows)
    if not by:
        return rows
    diag = {tuple(r[c] for c in by): r for r in doc["tables"].get(f"{name}_diagnostics", [])}
    out: dict[tuple, dict] = {}
    for r in rows:
        key = tuple(r[c] for c in by)
        g = out.setdefault(key, {**{c: r[c] for c in by}, **diag.get(key, {})})
        for suffix, col in SUFFIX.items():
            g[r["statistic"] + suffix] = r[col]
        for col in ("method", "confidence"):
            g.setdefault(col, r[col])
    return list(out.values())


def edit_group(doc: dict, name: str, i: int, **changes) -> None:
    """Set cells of the i-th group of a long table as if it were one wide row."""
    rows = doc["tables"][name]
    by = _by(rows)
    key = list(dict.fromkeys(tuple(r[c] for c in by) for r in rows))[i]
    mine = [r for r in rows if tuple(r[c] for c in by) == key]
    diag = [r for r in doc["tables"][f"{name}_diagnostics"] if tuple(r[c] for c in by) == key]
    for col, value in changes.items():
        if col in by or col in diag[0]:
            for r in mine + diag:
                r[col] = value
            continue
        stats = sorted({r["statistic"] for r in mine}, key=len, reverse=True)
        stat = next(st for st in stats if col.startswith(st) and col[len(st) :] in SUFFIX)
        for r in mine:
            if r["statistic"] == stat:
                r[SUFFIX[col[len(stat) :]]] = value


# -- an independent reading of the outputs -----------------------------------------------------


def decimals_for(stat: str, digits, percent: bool) -> int:
    if percent:
        d = 0 if digits is None else digits
        return d if stat in RATES else d + 2
    return 2 if digits is None else digits


def close(text: str, value: float, stat: str, digits, percent: bool) -> bool:
    """``text`` is ``value`` shown in the export's unit, rounded to its decimals."""
    d = decimals_for(stat, digits, percent)
    shown = value * (100 if percent and stat in RATES else 1)
    return abs(float(text) - shown) <= 0.5 * 10**-d + 1e-9 and len(text.partition(".")[2]) == d


def check_interval(cell: str, row: dict, stat: str, digits, percent: bool) -> None:
    m = IV.match(cell.strip())
    assert m, f"not an 'est [lo, hi]' cell: {cell!r}"
    est_col = "kappa" if stat == "kappa_boot" else stat
    lo_col, hi_col = (
        ("ci_low", "ci_high") if stat == "estimate" else (f"{stat}_ci_low", f"{stat}_ci_high")
    )
    assert close(m[1], row[est_col], stat, digits, percent), (cell, row[est_col])
    if m[2] is not None:
        assert close(m[2], row[lo_col], stat, digits, percent), (cell, row[lo_col])
        assert close(m[3], row[hi_col], stat, digits, percent), (cell, row[hi_col])
    else:
        assert row.get(lo_col) is None, f"{stat}: interval in results.json but not exported"


def unlatex(s: str) -> str:
    repl = {
        "~$-$~": " - ",
        "$-$": "-",
        "$<$\\,": "< ",
        r"\textbackslash ": "\\",
        r"\textasciitilde ": "~",
        r"\textasciicircum ": "^",
    }
    for k, v in repl.items():
        s = s.replace(k, v)
    return re.sub(r"\\([&%$#_{}])", r"\1", s)


def _latex_cells(line: str) -> list[str]:
    line = line.strip().removesuffix("\\\\").rstrip()
    return [unlatex(c.strip()) for c in re.split(r"(?<!\\)&", line)]


def latex_rows(tex: str) -> tuple[list[str], list[list[str]]]:
    body = tex.split("\\toprule\n", 1)[1].split("\\bottomrule", 1)[0]
    head, rows = body.split("\\midrule\n")
    return _latex_cells(head), [_latex_cells(r) for r in rows.strip().splitlines()]


def _markdown_cells(line: str) -> list[str]:
    return [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def markdown_rows(md: str) -> tuple[list[str], list[list[str]]]:
    lines = [line for line in md.splitlines() if line.startswith("|")]
    return _markdown_cells(lines[0]), [_markdown_cells(line) for line in lines[2:]]


def check_table(
    name: str, header: list[str], rows: list[list[str]], doc, digits, percent, paper=False
):
    """``paper``: the LaTeX view, its human column names and short judge names."""
    from evalstats.report._export import (  # private: the export's judge naming rule, pinned
        _HEADERS,
        _ratio_name,
        judge_label,
    )

    back = {v: k for k, v in _HEADERS.items()}
    source = source_rows(doc, name)
    assert len(rows) == len(source)
    for cells, row in zip(rows, source, strict=True):
        for col, cell in zip(header, cells, strict=True):
            stat = col.removesuffix(" (%)")
            if paper:
                name = back.get(stat, stat.lower().replace(" ", "_"))  # "Rubric": rubric
                col, stat = col.replace(stat, name), name
                if stat in ("judge", "judge_a", "judge_b"):
                    assert cell == judge_label(str(row[stat]))
                    continue
                if stat == "statistic":
                    assert cell == _ratio_name(row[stat])
                    continue
            assert col.endswith(" (%)") == (percent and stat in RATES), col
            if stat in ("n", "n_pairs", "n_tasks"):
                assert int(cell) == row[stat]
            elif stat in (
                "arm_a",
                "arm_b",
                "rubric",
                "judge",
                "judge_a",
                "judge_b",
                "task_id",
                "statistic",
                "method",
                "estimand",
                "token_source",
            ):
                assert cell == ("" if row[stat] is None else str(row[stat])), (stat, row)
            else:
                check_interval(cell, row, stat, digits, percent)


# -- tables ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("digits", "percent"), CONFIGS)
def test_latex_tables_round_trip(results_path, doc, digits, percent):
    tex = ex.latex_tables(results_path, digits=digits, percent=percent)
    assert set(tex) == {"headline", "consensus", "agreement", "cost", "per_task"}
    for name, text in tex.items():
        for rule in ("\\toprule", "\\midrule", "\\bottomrule"):
            assert text.count(rule) == 1, (name, rule)
        assert "\\hline" not in text
        header, rows = latex_rows(text)
        check_table(name, header, rows, doc, digits, percent, paper=True)


@pytest.mark.parametrize(("digits", "percent"), CONFIGS)
def test_markdown_tables_round_trip(results_path, doc, digits, percent):
    md = ex.markdown_tables(results_path, digits=digits, percent=percent)
    for name, text in md.items():
        header, rows = markdown_rows(text)
        check_table(name, header, rows, doc, digits, percent)
        assert "\n\nWin, tie and loss per judge: estimate [95 % CI]" in md["headline"]


def test_tables_show_every_headline_statistic(doc):
    t = ex.formatted_tables(doc)
    assert list(t["headline"].columns) == [
        "rubric",
        "judge",
        "n",
        "n_pairs",
        "n_tasks",
        "win_rate (%)",
        "tie_rate (%)",
        "loss_rate (%)",
        "net_win (%)",
        "score (%)",
        "method",
    ]
    assert "kappa" in t["agreement"].columns and "estimate" in t["cost"].columns


SPECIAL = "my_judge 100% & #1 $x$ {a} ~b ^c \\d"


def test_latex_escapes_special_characters(doc):
    bad = copy.deepcopy(doc)
    for row in bad["tables"]["headline"] + bad["tables"]["headline_diagnostics"]:
        row["judge"] = SPECIAL + row["judge"]
    tex = ex.latex_tables(bad)["headline"]
    body = tex.split("\\midrule\n", 1)[1]
    # The table shows the short name; the full judge id is in the note, escaped there too.
    note = body.split("\\parbox{\\linewidth}{", 1)[1]
    assert "my\\_judge 100\\% \\& \\#1 \\$x\\$ \\{a\\}" in note
    assert "\\textasciitilde " in note and "\\textasciicircum " in note
    assert "\\textbackslash " in note
    assert not re.search(r"(?<!\\)[%#$&]", note.split("\\label", 1)[0]), note
    # Unescaped, a `%` would comment out the rest of the row and `&` add a column.
    n_cols = len(latex_rows(tex)[0])  # the method and the shared task count: in the note
    for line in body.split("\\bottomrule")[0].strip().splitlines():
        assert len(re.findall(r"(?<!\\)&", line)) == n_cols - 1
        assert not re.search(r"(?<!\\)[%#$_]", line), line
    # A judge whose short name keeps the specials: escaped in the cell.
    for row in bad["tables"]["headline"] + bad["tables"]["headline_diagnostics"]:
        row["judge"] = "openai:" + SPECIAL + row["judge"].rsplit(":", 1)[1]
    cells = ex.latex_tables(bad)["headline"].split("\\midrule\n", 1)[1]
    assert "100\\% \\& \\#1 \\$x\\$ \\{a\\}" in cells.split("\\bottomrule")[0]


def test_markdown_escapes_pipes(doc):
    bad = copy.deepcopy(doc)
    edit_group(bad, "headline", 0, judge="a|b")
    header, rows = markdown_rows(ex.markdown_tables(bad)["headline"])
    assert rows[0][1] == "a|b" and len(rows[0]) == len(header)


# -- macros ------------------------------------------------------------------------------------

# How the sentences name each interval construction (an independent copy of the wording).
METHOD_TEXT = {
    "cr2_wilson": "CR2 Wilson with Bell-McCaffrey df",
    "cluster_wilson": "Wilson at the design-effect sample size",
    "atanh_jackknife_exact": (
        "delete-one-task jackknife t on Fisher's z (with an exact bound at few disagreements)"
    ),
    "atanh_jackknife_midp_blaker": (
        "delete-one-task jackknife t on Fisher's z (with a mid-p binomial bound at few "
        "disagreements)"
    ),
}

JUDGE_WORDS = {
    "anthropic:claude-sonnet-4-20250514": "ClaudeSonnetFour",
    "openai:gpt-5.4": "GptFiveFour",
    "consensus:unanimous": "ConsensusUnanimous",
}
RUBRIC_WORDS = {"with-without": "WithWithout", "blind-pair": "BlindPair"}
STAT_WORDS = {
    "win_rate": "WinRate",
    "tie_rate": "TieRate",
    "loss_rate": "LossRate",
    "net_win": "NetWin",
    "score": "Score",
}


def parse_macros(text: str) -> dict[str, str]:
    found = re.findall(r"^\\newcommand\{\\([A-Za-z]+)\}\{([^}]*)\}$", text, flags=re.M)
    lines = [line for line in text.splitlines() if line and not line.startswith("%")]
    assert len(found) == len(lines), "every non-comment line is one \\newcommand"
    names = [n for n, _ in found]
    assert len(names) == len(set(names)), "a macro defined twice"
    return dict(found)


@pytest.mark.parametrize(("digits", "percent"), CONFIGS)
def test_macros_equal_results(results_path, doc, digits, percent):
    macros = parse_macros(ex.latex_macros(results_path, digits=digits, percent=percent))
    expected = 1  # \esConfidence
    assert macros["esConfidence"] == "95"
    for tname in ("headline", "consensus"):
        for row in source_rows(doc, tname):
            prefix = "es" + RUBRIC_WORDS[row["rubric"]] + JUDGE_WORDS[row["judge"]]
            for stat, w in STAT_WORDS.items():
                assert close(macros[prefix + w], row[stat], stat, digits, percent)
                assert close(
                    macros[prefix + w + "Lo"], row[f"{stat}_ci_low"], stat, digits, percent
                )
                assert close(
                    macros[prefix + w + "Hi"], row[f"{stat}_ci_high"], stat, digits, percent
                )
            assert int(macros[prefix + "N"]) == row["n"]
            assert int(macros[prefix + "Tasks"]) == row["n_tasks"]
            assert int(macros[prefix + "Pairs"]) == row["n_pairs"]
            expected += 3 * len(STAT_WORDS) + 3
    for row in source_rows(doc, "agreement"):
        prefix = (
            "es"
            + RUBRIC_WORDS[row["rubric"]]
            + JUDGE_WORDS[row["judge_a"]]
            + "Vs"
            + JUDGE_WORDS[row["judge_b"]]
        )
        assert close(macros[prefix + "Kappa"], row["kappa"], "kappa", digits, percent)
        assert close(macros[prefix + "KappaLo"], row["kappa_ci_low"], "kappa", digits, percent)
        assert close(macros[prefix + "KappaHi"], row["kappa_ci_high"], "kappa", digits, percent)
        assert "KappaBootHi" not in "".join(k for k in macros if k.startswith(prefix))
        assert close(macros[prefix + "AcOne"], row["ac1"], "ac1", digits, percent)
        assert close(
            macros[prefix + "ObservedAgreement"],
            row["observed_agreement"],
            "observed_agreement",
            digits,
            percent,
        )
        assert int(macros[prefix + "N"]) == row["n"]
        assert int(macros[prefix + "Pairs"]) == row["n_pairs"]
        # observed agreement 1, kappa 3, kappa_linear 3, ac1 3, pabak 3, n, pairs, tasks
        expected += 1 + 3 + 3 + 3 + 3 + 3
    for row in source_rows(doc, "cost"):
        w = "".join(p.capitalize() for p in row["statistic"].split("_"))
        assert close(macros[f"esCost{w}"], row["estimate"], "estimate", digits, percent)
        assert close(macros[f"esCost{w}Lo"], row["ci_low"], "estimate", digits, percent)
        assert close(macros[f"esCost{w}Hi"], row["ci_high"], "estimate", digits, percent)
        expected += 3
    assert len(macros) == expected


def test_macro_collision_detected_and_aliases_resolve(doc):
    twin = copy.deepcopy(doc)
    edit_group(twin, "headline", 1, judge="openai:gpt-5-4")  # also GptFiveFour
    edit_group(twin, "headline", 0, judge="openai:gpt-5.4")
    with pytest.raises(ValueError, match=r"esBlindPairGptFiveFourWinRate.*aliases"):
        ex.latex_macros(twin)
    macros = parse_macros(ex.latex_macros(twin, aliases={"openai:gpt-5-4": "GptFiveDashFour"}))
    assert "esBlindPairGptFiveDashFourNetWin" in macros
    with pytest.raises(ValueError, match="letters only"):
        ex.latex_macros(twin, aliases={"openai:gpt-5-4": "Gpt5"})


# -- sentences ---------------------------------------------------------------------------------


def test_win_sentences_carry_numbers_n_tasks_judge_and_method(doc):
    sentences = ex.result_sentences(doc)
    rows = source_rows(doc, "headline") + source_rows(doc, "consensus")
    pat = re.compile(
        rf"WITH won ({NUM}) % \[({NUM}), ({NUM})\], tied ({NUM}) % \[({NUM}), ({NUM})\] and "
        rf"lost ({NUM}) % \[({NUM}), ({NUM})\] of the (\d+) readable (pair-orders|pairs)"
        r"(?: \((?:(\d+) pairs)?[^)]*\))? in (\d+) "
        rf"tasks.*\. The net win is ({NUM}) points \[({NUM}), ({NUM})\] \((.+?) (judge|of the "
        r"judges), (\S+) rubric\), 95 % CI clustered by task, (.+)\.$"
    )
    for sentence, row in zip(sentences, rows, strict=False):
        m = pat.match(sentence)
        assert m, sentence
        g = m.groups()
        for i, stat in enumerate(("win_rate", "tie_rate", "loss_rate")):
            assert close(g[3 * i], row[stat], stat, None, True)
            assert close(g[3 * i + 1], row[f"{stat}_ci_low"], stat, None, True)
            assert close(g[3 * i + 2], row[f"{stat}_ci_high"], stat, None, True)
        # "the 165 readable pair-orders (85 pairs; ...)" for the blind rubric (the rates' own
        # denominator first), "the 83 readable pairs (...)" otherwise.
        assert int(g[9]) == row["n"] and int(g[12]) == row["n_tasks"]
        assert int(g[11] or g[9]) == row["n_pairs"]
        assert (g[10] == "pair-orders") == (row["rubric"] == "blind-pair")
        assert close(g[13], row["net_win"], "net_win", None, True)
        assert close(g[14], row["net_win_ci_low"], "net_win", None, True)
        assert close(g[15], row["net_win_ci_high"], "net_win", None, True)
        assert g[18] == row["rubric"]
        assert g[19] == METHOD_TEXT[row["method"]]
    assert "Claude Sonnet 4 judge" in sentences[0]
    assert f"{source_rows(doc, 'headline')[0]['no_answer']} no-answer" in sentences[0]


def test_agreement_and_cost_sentences(doc):
    sentences = ex.result_sentences(doc)
    agr = [s for s in sentences if "Cohen's kappa" in s]
    assert len(agr) == len(source_rows(doc, "agreement"))
    for s, row in zip(agr, source_rows(doc, "agreement"), strict=True):
        m = re.search(
            rf"kappa is ({NUM}) \[({NUM}), ({NUM})\], 95 % CI clustered by task, (.+?)\. Gwet", s
        )
        assert m, s
        assert close(m[1], row["kappa"], "kappa", None, True)
        assert close(m[2], row["kappa_ci_low"], "kappa", None, True)
        assert close(m[3], row["kappa_ci_high"], "kappa", None, True)
        # the words name the method of the same results.json field as the table
        (method,) = {
            r["method"]
            for r in doc["tables"]["agreement"]
            if r["statistic"] == "kappa"
            and (r["rubric"], r["judge_a"], r["judge_b"])
            == (row["rubric"], row["judge_a"], row["judge_b"])
        }
        assert m[4] == METHOD_TEXT[method]
        if row["n_pairs"] < row["n"]:  # the blind rubric: each pair judged in both orders
            units = f"{row['n']} readable pair-orders ({row['n_pairs']} pairs)"
        else:
            units = f"{row['n']} readable pairs"
        assert f"of the {units} in {row['n_tasks']} tasks" in s
    cost = [s for s in sentences if s.startswith("WITH / WITHOUT ratio")]
    assert len(cost) == len(source_rows(doc, "cost"))
    m = re.search(
        rf"total tokens \((\w+): [^)]+\): ({NUM}) \[({NUM}), ({NUM})\] over (\d+) pairs", cost[0]
    )
    row = source_rows(doc, "cost")[0]
    assert row["statistic"] == "tokens_total_ratio"
    # the sentence names the token source of the same results.json row (issue 22)
    assert m and m[1] == row["token_source"], cost[0]
    assert close(m[2], row["estimate"], "estimate", None, True) and int(m[5]) == row["n"]
    # where the runs have both, the transcript ratio is said beside it, with its distance
    sources = {r["token_source"]: r for r in doc["tables"]["cost_sources"]
               if r["statistic"] == "tokens_total_ratio"}  # fmt: skip
    said = [s for s in sentences if s.startswith("Counted on the transcripts instead")]
    assert len(said) == 3 and f"{sources['transcript']['billed_over_transcript']:.3f}" in said[0]


def test_headline_paragraph(doc):
    p = ex.headline_paragraph(doc)
    # No plan: the row the stated rule chose (issue 22), not the first one.
    (choice,) = doc["tables"]["headline_choice"]
    rows = source_rows(doc, "headline")
    at = next(
        i
        for i, r in enumerate(rows)
        if (r["rubric"], r["judge"]) == (choice["rubric"], choice["judge"])
    )
    row = rows[at]
    m = re.search(rf"a net win of ({NUM}) percentage points \[({NUM}), ({NUM})\]", p)
    assert m and close(m[1], row["net_win"], "net_win", None, True)
    assert close(m[2], row["net_win_ci_low"], "net_win", None, True)
    assert "WITH beat WITHOUT" in p and "excludes zero" in p
    assert p.endswith("These data are simulated.")
    assert "\n" not in p
    other = ex.headline_paragraph(doc, primary=("with-without", "consensus:unanimous"))
    assert other.startswith("On the with-without rubric, judged by unanimous consensus")
    flat = copy.deepcopy(doc)
    edit_group(flat, "headline", at, net_win_ci_low=-0.1)
    assert "cannot tell WITH from WITHOUT" in ex.headline_paragraph(flat)
    with pytest.raises(ValueError, match="no headline row"):
        ex.headline_paragraph(doc, primary=("with-without", "nobody"))


# -- files, CLI, bad input ---------------------------------------------------------------------


def test_export_writes_files(results_path, tmp_path):
    paths = ex.export(
        results_path,
        latex=tmp_path / "tex",
        markdown=tmp_path / "md",
        macros=tmp_path / "macros.tex",
        sentences=tmp_path / "sentences.md",
        digits=1,
    )
    assert {p.name for p in paths} >= {"headline.tex", "per_task.md", "macros.tex"}
    assert (tmp_path / "tex" / "headline.tex").read_text() == ex.latex_tables(
        results_path, digits=1
    )["headline"]
    assert (tmp_path / "macros.tex").read_text() == ex.latex_macros(results_path, digits=1)
    assert (tmp_path / "sentences.md").read_text().startswith("# Results in words\n\nOn the ")
    assert not list(tmp_path.rglob(".*.tmp")), "atomic writes leave no temporary file"


def test_cli_export(results_path, tmp_path, capsys):
    parser = build_parser()
    args = parser.parse_args(
        [
            "export",
            str(results_path),
            "--latex",
            str(tmp_path / "tex"),
            "--markdown",
            str(tmp_path / "md"),
            "--macros",
            str(tmp_path / "m.tex"),
            "--sentences",
            str(tmp_path / "s.md"),
            "--decimals",
            "--alias",
            "openai:gpt-5.4=GptFive",
        ]
    )
    assert args.func(args) == 0
    assert "wrote" in capsys.readouterr().out
    macros = parse_macros((tmp_path / "m.tex").read_text())
    row = source_rows(json.loads(results_path.read_text()), "headline")[1]
    assert close(macros["esBlindPairGptFiveNetWin"], row["net_win"], "net_win", None, False)
    assert (tmp_path / "md" / "cost.md").exists()
    with pytest.raises(SystemExit):
        parser.parse_args(["export", str(results_path), "--alias", "x=1a"])
    empty = parser.parse_args(["export", str(results_path)])
    with pytest.raises(SystemExit):
        empty.func(empty)


def test_bad_input_is_a_data_error(tmp_path, doc):
    broken = tmp_path / "results.json"
    broken.write_text('{"format": "evalstats-results/1",\n "tables": {,}}')
    with pytest.raises(DataError, match=r"results.json:2.*not JSON"):
        ex.latex_tables(broken)
    with pytest.raises(DataError, match="format"):
        ex.latex_tables({"format": "other"})
    with pytest.raises(DataError, match="not found"):
        ex.latex_tables(tmp_path / "missing.json")


def test_results_object_and_path_agree(results_path, doc):
    from evalstats.report import compute_results

    res = compute_results(SAMPLE, n_resamples=300, seed=0)
    assert ex.latex_macros(res) == ex.latex_macros(results_path) == ex.latex_macros(doc)


def test_missing_values_are_marked(doc):
    holes = copy.deepcopy(doc)
    edit_group(holes, "headline", 0, win_rate=None, net_win_ci_low=None)
    t = ex.formatted_tables(holes)["headline"]
    assert t.loc[0, "win_rate (%)"] == "–"
    assert re.fullmatch(NUM, t.loc[0, "net_win (%)"])  # estimate alone when a bound is missing
    assert "--" in ex.latex_tables(holes)["headline"]
    assert math.isfinite(
        float(parse_macros(ex.latex_macros(holes))["esBlindPairClaudeSonnetFourNetWin"])
    )
    assert parse_macros(ex.latex_macros(holes))["esBlindPairClaudeSonnetFourWinRate"] == "--"


def _labels(doc) -> list[str]:
    """Every text in the exported tables that may hold digits (judge names, task ids, ...)."""
    from evalstats.report._export import (
        judge_label,  # private: the export's judge naming rule, pinned
    )

    out = set()
    for name in ("headline", "consensus", "agreement", "cost", "per_task"):
        for row in source_rows(doc, name):
            for v in row.values():
                if isinstance(v, str):
                    out |= {v, judge_label(v)}
    return sorted(out, key=len, reverse=True)


def _shown(doc, digits, percent) -> set[str]:
    """Every number of the exported tables as the export may show it."""
    d_rate = decimals_for("win_rate", digits, percent)
    d_coef = decimals_for("kappa", digits, percent)
    scale = 100 if percent else 1
    out = {"95"}
    for name in ("headline", "consensus", "agreement", "cost", "per_task"):
        for row in source_rows(doc, name):
            for v in row.values():
                if isinstance(v, bool) or not isinstance(v, int | float):
                    continue
                out |= {str(v), f"{v * scale:.{d_rate}f}", f"{v:.{d_coef}f}"}
    return {s.removeprefix("-") if float(s) == 0 else s for s in out}


@pytest.mark.parametrize(("digits", "percent"), CONFIGS)
def test_every_number_exported_is_in_results(results_path, doc, digits, percent):
    kw = {"digits": digits, "percent": percent}
    texts = {
        **{f"{k}.tex": v for k, v in ex.latex_tables(results_path, **kw).items()},
        **{f"{k}.md": v for k, v in ex.markdown_tables(results_path, **kw).items()},
        "macros.tex": ex.latex_macros(results_path, **kw),
        "sentences.md": ex.sentences_markdown(results_path, **kw),
    }
    shown, labels = _shown(doc, digits, percent), _labels(doc)
    for fname, text in texts.items():
        for label in labels:
            text = text.replace(label, " ").replace(label.replace("_", "\\_"), " ")
        numbers = re.findall(rf"(?<![A-Za-z0-9.]){NUM}", text)
        assert numbers, fname
        stray = sorted(set(numbers) - shown)
        assert not stray, f"{fname}: numbers not in results.json: {stray[:10]}"
