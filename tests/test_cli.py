"""The evalstats console script."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pandas as pd
import pytest

import evalstats
from evalstats.cli import build_parser, main


def test_every_subcommand_has_help(capsys):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    assert {"simulate", "frame", "summary"} <= set(sub.choices)
    for name in sub.choices:
        with pytest.raises(SystemExit) as info:
            main([name, "--help"])
        assert info.value.code == 0
        assert "usage: evalstats " + name in capsys.readouterr().out


def test_simulate_then_frame(tmp_path, capsys):
    assert (
        main(["simulate", str(tmp_path / "d"), "--tasks", "3", "--replicates", "2", "--seed", "4"])
        == 0
    )
    for ext in ("parquet", "csv"):
        out = tmp_path / f"verdicts.{ext}"
        assert main(["frame", str(tmp_path / "d"), "-o", str(out)]) == 0
        got = pd.read_parquet(out) if ext == "parquet" else pd.read_csv(out)
        ds = evalstats.load_dir(tmp_path / "d")
        assert len(got) == len(evalstats.verdict_frame(ds.judgments, ds.runs, ds.tasks))
    assert main(["summary", str(tmp_path / "d")]) == 0
    assert "with-without" in capsys.readouterr().out


@pytest.mark.slow  # starts a Python subprocess
def test_errors_are_reported_without_traceback(tmp_path):
    (tmp_path / "tasks.jsonl").write_text("{broken\n")
    (tmp_path / "runs.jsonl").write_text("")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalstats.cli",
            "frame",
            str(tmp_path),
            "-o",
            str(tmp_path / "x.csv"),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2
    assert f"{tmp_path / 'tasks.jsonl'}:1" in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- a fast start (issue 9)

HEAVY = ("anthropic", "openai", "matplotlib", "papermill", "nbclient", "nbconvert", "pyarrow")


def _loaded_after(code: str, *args: str) -> set[str]:
    """Top-level packages in ``sys.modules`` after ``code`` runs in a fresh interpreter."""
    probe = (
        "import sys\n"
        f"sys.argv = ['evalstats', *{list(args)!r}]\n"
        "try:\n"
        + "".join(f"    {line}\n" for line in code.splitlines())
        + "except SystemExit:\n    pass\n"
        "sys.stdout.flush()\n"
        "print('\\nMODULES', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


def test_import_evalstats_loads_nothing_heavy():
    loaded = _loaded_after("import evalstats")
    assert not loaded & {*HEAVY, "pandas", "numpy", "scipy", "tiktoken"}, loaded


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_load_neither_pandas_nor_numpy(args):
    loaded = _loaded_after("from evalstats.cli import main\nmain()", *args)
    assert "evalstats" in loaded
    assert not loaded & {*HEAVY, "pandas", "numpy", "scipy"}, loaded


@pytest.mark.slow  # starts a Python subprocess
def test_the_whole_public_surface_loads_no_sdk_plotting_or_notebooks():
    # Touching every public name loads the statistics, records and judging modules; the
    # provider SDKs, matplotlib and the notebook machinery are still left for their use.
    # (pyarrow is not checked here: pandas 3 imports it itself when it is installed.)
    loaded = _loaded_after("import evalstats\nfor n in evalstats.__all__: getattr(evalstats, n)")
    assert {"pandas", "scipy"} <= loaded
    assert not loaded & (set(HEAVY) - {"pyarrow"}), loaded & set(HEAVY)


def test_lazy_surface_is_the_whole_surface():
    import evalstats.stats

    names = evalstats.__all__
    assert len(names) == len(set(names))
    assert len(names) <= 60  # a newcomer's root; the rest in evalstats.stats and the packages
    assert {"DataError", "load_dir", "verdict_frame", "run_judges", "rubrics"} <= set(names)
    assert set(names) <= set(dir(evalstats))
    assert evalstats.win_rates is evalstats.stats.win_rates
    # The modules holding audit and simulate are named for what they hold, so importing
    # them binds no module over the functions.
    import evalstats.methodology
    import evalstats.simulation

    assert callable(evalstats.audit) and evalstats.audit.__name__ == "audit"
    assert callable(evalstats.simulate) and evalstats.simulate.__name__ == "simulate"
    assert evalstats.rubrics.get("with-without").name == "with-without"
    with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
        _ = evalstats.no_such_name
    namespace: dict[str, object] = {}
    exec("from evalstats import *", namespace)
    assert namespace["load_dir"] is evalstats.load_dir


def test_top_level_help_lists_every_command_with_its_own_help():
    """The help lines of the lazily registered commands match what their hooks register."""

    def helps(parser):
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return {a.dest: a.help for a in sub._choices_actions}

    full, light = helps(build_parser()), helps(build_parser(""))
    assert full == light
    # The lazily hooked ones (registered only when named) among them, each with its help.
    assert {"judge", "export", "import", "report", "rubric"} <= set(full) and all(full.values())


@pytest.mark.slow  # starts a Jupyter kernel
def test_the_console_script_ends_a_report_at_once_and_loses_nothing(tmp_path):
    """The console script (``cli.run``) in its own process: the files are all there, stdout
    is flushed into a pipe, the exit code is main()'s."""
    from pathlib import Path

    sample = Path(__file__).resolve().parents[1] / "data" / "sample"
    if not sample.exists():
        pytest.skip("data/sample is absent")
    code = "import sys; from evalstats.cli import run; sys.argv[0] = 'evalstats'; run()"
    out = tmp_path / "r"
    args = ["report", str(sample), "-o", str(out), "-p", "n_resamples=50"]
    done = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {out / 'index.html'}")
    for name in ("index.html", "methodology.html", "results.json", ".evalstats-report.json"):
        assert (out / name).is_file(), name
    assert (out / "results.json").read_text(encoding="utf-8").rstrip().endswith("}")
    # Figure PDFs only when --figures or --pdf asks for them (issue 34): SVG by default.
    assert {p.suffix for p in (out / "figures").iterdir()} == {".svg"}
    bad = subprocess.run(
        [sys.executable, "-c", code, "report", str(tmp_path / "none"), "-o", str(out)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert bad.returncode == 2 and "not a directory" in bad.stderr
    version = subprocess.run(
        [sys.executable, "-c", code, "--version"], capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0 and version.stdout.startswith("evalstats ")


# --------------------------------------------------------------------------- one error path (issue 20.6)

# One bad parameter per subcommand: a value argparse accepts and the library refuses. Every
# subcommand must have a case (test_every_subcommand_has_a_bad_parameter_case).
BAD_PARAMETER = {
    "simulate": ["simulate", "{tmp}/sim", "--p-win", "2"],
    "frame": ["frame", "{data}", "-o", "{tmp}/verdicts.xlsx"],
    "summary": ["summary", "{data}", "-o", "{tmp}/summary.xlsx"],
    "power": ["power", "--alpha", "1.5"],
    "monitor": ["monitor", "{data}", "--confidence", "1.5"],
    "replicates": ["replicates", "{data}", "-o", "{tmp}/replicates.xlsx"],
    "judge": ["judge", "{data}", "--rubric", "with-without", "--judge", "anthropic:x",
              "--concurrency", "0", "--dry-run", "--out", "{tmp}/j.jsonl"],
    "export": ["export", "{tmp}/results.json", "--latex", "{tmp}/tex", "--digits", "-3"],
    "import": ["import", "table", "{tmp}/runs.csv", "-o", "{tmp}/imported", "--map", "nokey"],
    "label": ["label", "{data}", "-n", "0", "--seed", "1", "-o", "{tmp}/sheet.csv"],
    "report": ["report", "{data}", "-o", "{tmp}/report", "-p", "confidence=1.5"],
    "rubric": ["rubric", "show", "no-such-rubric"],
}  # fmt: skip


@pytest.fixture(scope="module")
def small_data(tmp_path_factory):
    out = tmp_path_factory.mktemp("data")
    evalstats.simulate(out, n_tasks=3, n_replicates=2, seed=0)
    return out


def test_every_subcommand_has_a_bad_parameter_case():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(BAD_PARAMETER)


@pytest.mark.parametrize("command", sorted(BAD_PARAMETER))
def test_a_bad_parameter_is_one_line_and_exit_2(command, small_data, tmp_path, capsys):
    (tmp_path / "results.json").write_text("{}", encoding="utf-8")
    argv = [a.format(tmp=tmp_path, data=small_data) for a in BAD_PARAMETER[command]]
    code = main(argv)
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert code == 2, err
    assert len(lines) == 1 and lines[0].startswith(f"evalstats {command}: error: "), err
    assert "Traceback" not in err + out
    # Nothing was written for the refused call.
    assert not {p.name for p in tmp_path.iterdir()} - {"results.json"}


def test_the_dispatcher_is_the_one_place_that_prints_an_error(monkeypatch, capsys):
    """Any EvalstatsError a subcommand raises (here: a new one) is one line and exit 2."""
    import evalstats.cli as cli
    from evalstats.errors import DataError, EvalstatsError, ParameterError

    assert issubclass(ParameterError, ValueError) and issubclass(ParameterError, EvalstatsError)
    assert issubclass(DataError, ValueError) and issubclass(DataError, EvalstatsError)

    def boom(args):
        raise DataError("a parser's complaint\n  over two lines", path="x.csv", line=3)

    monkeypatch.setattr(cli, "_cmd_table", boom)  # private: a fault injected into one command
    assert main(["summary", "somewhere"]) == 2
    err = capsys.readouterr().err
    assert err == "evalstats summary: error: x.csv:3: a parser's complaint over two lines\n"
