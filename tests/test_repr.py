"""Results that display themselves: result dataclasses, the Dataset, figures in a notebook.

Each result class of :mod:`evalstats.stats` is built from a real call, then its
``_repr_html_`` is parsed strictly (every tag closed in order), its estimate looked for as
formatted here (four significant digits, written out independently of the package), and a
``<script>`` planted in a string field (and in a DataFrame field) must come back escaped.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import os
import pkgutil
import shutil
import sys
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import make_run, make_task, write_jsonl

import evalstats
import evalstats.stats
from evalstats.frames import load_frame

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "sample"
needs_sample = pytest.mark.skipif(not SAMPLE.exists(), reason="data/sample is not in this checkout")
SCRIPT = "<script>alert('x')</script>"


# --------------------------------------------------------------------------- strict HTML


class StrictHTML(HTMLParser):
    """Records tags and text; fails on an end tag that does not close the innermost open one."""

    VOID = frozenset({"br", "hr", "img", "meta", "link", "input", "col", "wbr"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[str] = []
        self.chunks: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()

    def handle_data(self, data):
        self.chunks.append(data)

    @property
    def text(self) -> str:
        return " ".join(self.chunks)


def parse(markup: str) -> StrictHTML:
    assert isinstance(markup, str) and markup.strip()
    p = StrictHTML()
    p.feed(markup)
    p.close()
    assert not p.stack, f"unclosed tags: {p.stack}"
    return p


def g4(x) -> str:
    """Four significant digits, as a reader is shown them."""
    return format(float(x), ".4g")


# --------------------------------------------------------------------------- results


def _frame():
    return load_frame(SAMPLE)


A = ["win", "tie", "loss", "win", "tie", "tie", "loss", "win", "win", "tie"]
B = ["win", "tie", "win", "win", "tie", "loss", "loss", "win", "tie", "tie"]


def _gold():
    from evalstats.stats.agreement import judge_vs_gold

    frame = pd.DataFrame(
        {
            "task_id": list("aabbccdd"),
            "replicate": 1,
            "judge": "j",
            "rubric": "r",
            "order": ["with_first", "without_first"] * 4,
            "status": "ok",
            "outcome": ["win", "win", "loss", "win", "tie", "tie", "loss", "loss"],
        }
    )
    labels = pd.DataFrame(
        {
            "task_id": list("abcd"),
            "replicate": 1,
            "labeler": "ann",
            "outcome": ["win", "loss", "tie", "loss"],
        }
    )
    return judge_vs_gold(frame, labels, n_resamples=200, rng=0)


def _ordinal():
    from evalstats.stats.models import ordinal_check

    return ordinal_check(_frame(), rubric="with-without")


def _logit():
    from evalstats.stats.models import logistic_fit

    y = np.r_[np.zeros(8), 1, 0, 1, 0, np.ones(8)]
    return logistic_fit(np.arange(20.0), y)


def _boot():
    from evalstats.stats.resample import cluster_bootstrap

    data = np.random.default_rng(0).normal(size=(15, 2))
    # per-cluster sums in, two means out
    return cluster_bootstrap(data, lambda s: s / 15, n_resamples=200, rng=0)


# name -> (build, the field shown as the lead, a string field to plant a <script> in)
BUILDERS = {
    "CohenKappaResult": (lambda: evalstats.cohen_kappa(A, B), "estimate", "note"),
    "AgreementResult": (lambda: evalstats.gwet_ac1(A, B), "estimate", "coefficient"),
    "FleissKappaResult": (
        lambda: evalstats.fleiss_kappa(np.array([A, B, A]).T),
        "estimate",
        "method",
    ),
    "KrippendorffAlphaResult": (
        lambda: evalstats.krippendorff_alpha(np.array([A, B, A]).T),
        "estimate",
        "level",
    ),
    "EquivalenceResult": (
        lambda: evalstats.stats.equivalence.tost(0.02, 0.03, 14, lower=-0.1, upper=0.1),
        "estimate",
        "conclusion",
    ),
    "ProportionCI": (lambda: evalstats.stats.proportion_ci([3, 5], [10, 20]), "estimate", "method"),
    "PowerResult": (
        lambda: evalstats.stats.power.tasks_needed(0.2, evalstats.stats.Design(3, 0.3, 0.3)),
        "n_tasks",
        "alternative",
    ),
    "LogisticFit": (_logit, "slope", None),
    "BootstrapResult": (_boot, "estimate", "method"),
    "OrdinalCheckResult": (_ordinal, "n", "reference_judge"),
    "GoldResult": (_gold, "n_gold_pairs", "gold_rule"),
}
NEED_SAMPLE = {"OrdinalCheckResult"}


def _result_classes() -> dict[str, type]:
    """Every public frozen dataclass defined in a module of evalstats.stats."""
    found = {}
    for info in pkgutil.iter_modules(evalstats.stats.__path__, "evalstats.stats."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if (
                inspect.isclass(obj)
                and obj.__module__ == mod.__name__
                and not name.startswith("_")
                and dataclasses.is_dataclass(obj)
                and obj.__dataclass_params__.frozen
            ):
                found[name] = obj
    return found


def test_every_result_class_displays_itself():
    classes = _result_classes()
    # IntervalColumns names where a statistic lives in a table, Encoded holds a pairwise
    # frame as integer arrays for the fits, TokenChoice is cost_ratios' private choice of
    # token counts, Design the power functions' options, Hypothesis declared_test's: none is a
    # result.
    internal = ("IntervalColumns", "Encoded", "TokenChoice", "Design", "Hypothesis")
    results = {k: v for k, v in classes.items() if k not in internal}
    assert set(results) == set(BUILDERS), "a result class without a display test (or gone)"
    missing = [k for k, v in results.items() if not callable(getattr(v, "_repr_html_", None))]
    assert not missing, f"no HTML display: {missing}"


@pytest.fixture(scope="module", params=sorted(BUILDERS))
def built(request):
    name = request.param
    if name in NEED_SAMPLE and not SAMPLE.exists():
        pytest.skip("data/sample is not in this checkout")
    build, lead, text_field = BUILDERS[name]
    res = build()
    assert type(res).__name__ == name
    return res, lead, text_field


def _lead_text(res, lead: str) -> list[str]:
    """The lead as the reader should see it: 'est [lo, hi]' where the class has an interval."""
    names = {f.name for f in dataclasses.fields(res)}
    est = np.ravel(np.asarray(getattr(res, lead), dtype=float))
    if {"ci_low", "ci_high"} <= names:
        lo, hi = (np.ravel(np.asarray(getattr(res, n), dtype=float)) for n in ("ci_low", "ci_high"))
        return [f"{g4(e)} [{g4(a)}, {g4(b)}]" for e, a, b in zip(est, lo, hi, strict=True)]
    return [str(int(e)) if float(e).is_integer() else g4(e) for e in est]


def test_html_parses_and_shows_the_estimate(built):
    res, lead, _ = built
    markup = res._repr_html_()
    page = parse(markup)
    assert page.tags[0] == "table" and "script" not in page.tags
    assert type(res).__name__ in page.text
    cells = [c.strip() for c in page.chunks]
    want = "; ".join(_lead_text(res, lead))
    # the lead is a cell of its own, right after its name ("estimate [95 % CI]" with a CI)
    at = [
        i
        for i, c in enumerate(cells[:-1])
        if (c == lead or c.startswith(f"{lead} [")) and cells[i + 1] == want
    ]
    assert at, (want, cells)
    if lead in ("estimate", "slope", getattr(res, "solved_for", None)):
        assert at[0] == cells.index(type(res).__name__) + 1  # and on the first row
    # every field is named (the interval's bounds share the estimate's row)
    for f in dataclasses.fields(res):
        if f.name not in ("ci_low", "ci_high"):
            assert f.name in page.text, f.name


def test_text_repr_is_short_and_shows_the_estimate(built):
    res, lead, _ = built
    text = repr(res)
    assert text.startswith(type(res).__name__)
    for shown in _lead_text(res, lead):
        assert shown in text or shown.split(" [")[0] in text
    # no frame or array dumped: one line per field at most (the agreement results keep
    # their one-line repr), each short
    lines = text.splitlines()
    assert len(lines) <= len(dataclasses.fields(res)) + 1
    assert max(map(len, lines)) < 200 or len(lines) == 1
    assert len(text) < 2_000


def test_strings_are_escaped(built):
    res, _, text_field = built
    planted = []
    if text_field is not None:
        planted.append(dataclasses.replace(res, **{text_field: SCRIPT}))
    for f in dataclasses.fields(res):
        v = getattr(res, f.name)
        if isinstance(v, pd.DataFrame) and len(v):
            # in a cell of a nested table and in a column name
            first = v.columns[0]
            planted.append(dataclasses.replace(res, **{f.name: v.assign(**{first: SCRIPT})}))
            planted.append(dataclasses.replace(res, **{f.name: v.rename(columns={first: SCRIPT})}))
    if not planted:  # no string field: a label where a number stood
        planted.append(dataclasses.replace(res, converged=SCRIPT))
    for r in planted:
        markup = r._repr_html_()
        page = parse(markup)
        assert "script" not in page.tags
        assert "<script" not in markup and "&lt;script&gt;" in markup
        assert SCRIPT in page.text  # shown, as text


def test_long_arrays_are_summarised_not_dumped():
    from evalstats.stats.resample import cluster_bootstrap

    data = np.random.default_rng(1).normal(size=(12, 40))
    res = cluster_bootstrap(data, lambda s: s / 12, n_resamples=100, rng=0)
    assert res.estimate.shape == (40,)  # more values than a repr lists
    page = parse(res._repr_html_())
    lo, hi = np.min(res.estimate), np.max(res.estimate)
    assert f"array of 40 values, from {g4(lo)} to {g4(hi)}" in page.text
    assert g4(res.estimate[17]) not in page.text.replace(g4(lo), "").replace(g4(hi), "")
    assert "array of 40 values" in repr(res) and len(repr(res)) < 600


def test_tost_interval_is_labelled_with_its_level():
    res = evalstats.stats.equivalence.tost(0.02, 0.03, 14, lower=-0.1, upper=0.1)
    # a TOST at alpha 0.05 tests with the 90 % interval (1 - 2 alpha)
    assert "estimate [90 % CI]" in parse(res._repr_html_()).text


# --------------------------------------------------------------------------- Dataset


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@needs_sample
def test_dataset_repr_is_short_and_counts_what_is_there():
    ds = evalstats.load_dir(SAMPLE)
    text = repr(ds)
    assert len(text) < 1_500, len(text)
    tasks, runs, judgments = (_jsonl(SAMPLE / f"{n}.jsonl") for n in ("tasks", "runs", "judgments"))
    arms = Counter(r["arm"] for r in runs)
    pairs = {(r["task_id"], r["replicate"]) for r in runs}
    reps = Counter(t for t, _ in pairs)
    failed = sum(j.get("error") is not None for j in judgments)
    by = Counter((j["judge"], j["rubric"]) for j in judgments)
    lines = dict(
        (line[2:].split(None, 1) + [""])[:2] for line in text.splitlines()[1:] if line[2:3] != " "
    )
    assert lines["tasks"] == str(len(tasks))
    assert lines["runs"] == f"{len(runs)}: WITH {arms['with']}, WITHOUT {arms['without']}"
    assert lines["pairs"].startswith(f"{len(pairs)} (task, replicate) pairs")
    assert len(set(reps.values())) == 1 and lines["replicates"] == f"{reps.popitem()[1]} per task"
    assert lines["judgments"] == (
        f"{len(judgments)} calls: {len(judgments) - failed} answered, {failed} failed (error set)"
    )
    for judge in {j for j, _ in by}:
        counts = ", ".join(f"{r} {by[(judge, r)]}" for r in sorted({r for _, r in by}))
        assert f"{judge}: {counts}" in text
    assert lines["judges"] == ", ".join(sorted({j for j, _ in by}))
    assert "qwen" in lines["agents"] and lines["plan"] == "none"
    for n in ("tasks", "runs", "judgments"):
        assert str(SAMPLE / f"{n}.jsonl") in text
    # still the NamedTuple it was
    t, r, j, p = ds
    assert t is ds.tasks and j is ds.judgments and p is None


@needs_sample
def test_dataset_html_has_the_same_content():
    ds = evalstats.load_dir(SAMPLE)
    markup = ds._repr_html_()
    # A notebook cell's worth: the cell style once, not on every cell (2,985 before).
    assert len(markup) < 2000, len(markup)
    assert markup.count("padding:") == 1
    page = parse(markup)
    assert "script" not in page.tags and page.tags.count("table") == 2  # + judge x rubric
    judgments = _jsonl(SAMPLE / "judgments.jsonl")
    by = Counter((j["judge"], j["rubric"]) for j in judgments)
    for key, value in (line[2:].split(None, 1) for line in repr(ds).splitlines()[1:3]):
        assert key in page.text and value in page.text
    cells = [c.strip() for c in page.chunks if c.strip()]
    for (judge, rubric), n in by.items():
        i = cells.index(judge, cells.index("judgments by judge × rubric"))
        header = cells[cells.index("judge") : cells.index("judge") + 1 + len({r for _, r in by})]
        assert cells[i + header.index(rubric)] == str(n)
    assert str(SAMPLE / "runs.jsonl") in page.text


def test_dataset_without_judgments_with_names_that_need_escaping(tmp_path):
    tasks = [make_task("T1"), make_task("T2")]
    runs = [make_run(t, r, a) for t in ("T1", "T2") for r in (1, 2) for a in ("with", "without")]
    runs = runs[:-1]  # (T2, 2) has no WITHOUT run
    write_jsonl(tmp_path / "tasks.jsonl", tasks)
    write_jsonl(tmp_path / "runs.jsonl", runs)
    (tmp_path / "arms.toml").write_text(f'with = "{SCRIPT}"\n', encoding="utf-8")
    ds = evalstats.load_dir(tmp_path, allow_incomplete=True)
    text = repr(ds)
    assert "judgments   none yet" in text and "plan        none" in text
    assert f"runs        7: {SCRIPT} (with) 4, WITHOUT 3" in text
    assert "4 (task, replicate) pairs, 1 lacking an arm, 0 over budget (no_answer)" in text
    markup = ds._repr_html_()
    page = parse(markup)
    assert "script" not in page.tags and "&lt;script&gt;" in markup and SCRIPT in page.text
    assert "none yet" in page.text


@needs_sample
def test_dataset_names_its_plan_file(tmp_path):
    d = tmp_path / "d"
    shutil.copytree(SAMPLE, d)
    (d / "plan.toml").write_text(
        'primary_rubric = "with-without"\nprimary_judge = "openai:gpt-5.4"\n'
        'statistic = "net_win"\n',
        encoding="utf-8",
    )
    text = repr(evalstats.load_dir(d))
    assert "plan        with-without / openai:gpt-5.4 / net_win" in text
    assert str(d / "plan.toml") in text


# --------------------------------------------------------------------------- one meaning of n


def test_compact_view_shows_n_and_n_pairs_when_present():
    t = pd.DataFrame(
        {
            "rubric": ["blind-pair", "with-without"],
            "n": [64, 31],
            "n_pairs": [32, 31],
            "n_tasks": [15, 15],
            "win_rate": [0.58, 0.4],
            "win_rate_ci_low": [0.41, 0.3],
            "win_rate_ci_high": [0.73, 0.52],
        }
    )
    view = evalstats.summarize(t)
    assert view.columns[:4].tolist() == ["rubric", "n", "n_pairs", "n_tasks"]
    assert view["n"].tolist() == [64, 31] and view["n_pairs"].tolist() == [32, 31]
    assert "n_pairs" not in evalstats.summarize(t.drop(columns="n_pairs")).columns
    with_orders = evalstats.summarize(t.assign(n_pair_orders=[64, 31]))
    assert with_orders.columns[:5].tolist() == [
        "rubric",
        "n",
        "n_pairs",
        "n_pair_orders",
        "n_tasks",
    ]


# --------------------------------------------------------------------------- a notebook


@pytest.mark.slow  # starts a Jupyter kernel
@needs_sample
def test_notebook_displays_figures_tables_and_results_without_a_magic(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import KernelManager

    setup = (
        "import evalstats\n"
        "from evalstats import plots\n"
        f"f = evalstats.load_frame({str(SAMPLE)!r})\n"
        "wr = evalstats.win_rates(evalstats.select_rubric(f, 'blind-pair')[0], by=['judge'], rng=0)\n"
    )
    cells = [
        setup,
        "plots.plot_headline(wr)",
        "plots.plot_cost_ratios(f, width='column')",
        "evalstats.summarize(wr)",
        f"evalstats.cohen_kappa({A!r}, {B!r})",
        f"evalstats.load_dir({str(SAMPLE)!r})",
    ]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    km = KernelManager(kernel_name="python3", kernel_spec_manager=KernelSpecManager(kernel_dirs=[]))
    assert km.kernel_spec.argv[0] == sys.executable
    client = nbclient.NotebookClient(
        nb, km=km, timeout=300, resources={"metadata": {"path": str(tmp_path)}}
    )
    # MPLBACKEND unset: the kernel picks its default backend, as a fresh notebook does; no
    # %matplotlib line anywhere. (tests/test_plots_paper.py runs the Agg case.)
    old = os.environ.pop("MPLBACKEND", None)
    try:
        client.execute()
    finally:
        if old is not None:
            os.environ["MPLBACKEND"] = old

    def results(i):
        outs = nb.cells[i].outputs
        errors = [o for o in outs if o.get("output_type") == "error"]
        assert not errors, errors
        return outs, [o for o in outs if o.get("output_type") == "execute_result"]

    import base64

    for i in (1, 2):  # two kinds of figure: one PNG each, shown once
        outs, res = results(i)
        assert len(res) == 1 and "image/png" in res[0]["data"], outs
        assert base64.b64decode(res[0]["data"]["image/png"])[:8] == b"\x89PNG\r\n\x1a\n"
        assert sum("image/png" in o.get("data", {}) for o in outs) == 1, "figure shown twice"
    wr = evalstats.win_rates(
        evalstats.select_rubric(load_frame(SAMPLE), "blind-pair")[0], by=["judge"], rng=0
    )
    view = evalstats.summarize(wr)
    _, res = results(3)
    table = res[0]["data"]["text/html"]
    page = parse(table)
    for cell in ("win_rate (%)", "net_win (%)", view.loc[0, "win_rate (%)"], view.loc[1, "judge"]):
        assert cell in page.text, cell
    assert "…" not in page.text and "..." not in page.text  # no column hidden
    _, res = results(4)
    kappa = evalstats.cohen_kappa(A, B)
    assert f"{g4(kappa.estimate)} [{g4(kappa.ci_low)}" in parse(res[0]["data"]["text/html"]).text
    _, res = results(5)
    html_ds = res[0]["data"]["text/html"]
    assert "Dataset" in parse(html_ds).text and len(res[0]["data"]["text/plain"]) < 1_500
