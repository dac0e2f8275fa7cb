"""A data directory: its files found, loaded together into a :class:`Dataset`, arm names."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NamedTuple

import pandas as pd

from .._display import html_table, text_table
from .._schema import ARMS
from ..errors import DataError
from ..plan import Plan, find_plan, load_plan
from ._arms import DEFAULT_ARM_NAMES, Arms, _read_toml, key_line, load_arms
from ._labels import load_labels
from ._read import EvalstatsWarning, find_file
from ._tables import load_judgments, load_runs, load_tasks

__all__ = ["DEFAULT_ARM_NAMES", "Dataset", "find_file", "load_arm_names", "load_dir"]


class _Parts(NamedTuple):
    tasks: pd.DataFrame
    runs: pd.DataFrame
    judgments: pd.DataFrame | None
    plan: Plan | None = None


class Dataset(_Parts):
    """What :func:`load_dir` returns: tasks, runs (with tokens), judgments, plan, arm names, labels.

    ``judgments`` is None when the directory has none yet; ``plan`` (an
    :class:`evalstats.plan.Plan`) is None when it declares no analysis plan;
    :attr:`arm_names` is ``{"with": ..., "without": ...}``, what the report calls the two
    arms (:func:`load_arm_names`), or ``{arm: name}`` for the K arms ``arms.toml`` lists;
    :attr:`arms` has their ids in order, names, tools and the ``reference``; :attr:`labels`
    the people's verdicts (:func:`evalstats.labels.load_labels` of ``labels.jsonl``), None
    without any.
    """

    # Not a tuple field: a Dataset still unpacks into its four parts (tasks, runs,
    # judgments, plan), as code written before labels were read expects.
    labels: pd.DataFrame | None

    def __new__(
        cls,
        tasks: pd.DataFrame,
        runs: pd.DataFrame,
        judgments: pd.DataFrame | None,
        plan: Plan | None = None,
        *,
        labels: pd.DataFrame | None = None,
    ) -> Dataset:
        self = super().__new__(cls, tasks, runs, judgments, plan)
        self.labels = labels
        return self

    def _replace(self, **changes: Any) -> Dataset:
        labels = changes.pop("labels", self.labels)
        return Dataset(*super()._replace(**changes), labels=labels)

    @property
    def arm_names(self) -> dict[str, str]:
        """``{"with": ..., "without": ...}``: the arms' names (:func:`load_arm_names`).

        Kept in ``runs.attrs["arm_names"]`` by :func:`load_dir` -- they name the runs' arms --
        so a Dataset still unpacks into its four parts; ``WITH`` / ``WITHOUT`` otherwise.
        """
        names = self.runs.attrs.get("arm_names") if self.runs is not None else None
        return dict(names) if names else dict(DEFAULT_ARM_NAMES)

    @property
    def arms(self) -> Arms:
        """The arms (:class:`Arms`): from ``arms.toml`` via :func:`load_dir`, else the runs'."""
        runs = self.runs
        found = runs.attrs.get("arms") if runs is not None else None
        if isinstance(found, Arms):
            return found
        if runs is None or not len(runs):
            return Arms(tuple(DEFAULT_ARM_NAMES), names=self.arm_names)
        present = set(runs["arm"].astype(str))
        ids = tuple(a for a in runs["arm"].cat.categories if a in present)
        return Arms(ids, names={a: n for a, n in self.arm_names.items() if a in present})

    def _summary(self, *, html: bool) -> list[tuple[str, Any]]:
        return _dataset_summary(self, html=html)

    def __repr__(self) -> str:
        # The default NamedTuple repr prints every frame (13,000 characters for the sample).
        return text_table("Dataset", self._summary(html=False))

    def _repr_html_(self) -> str:
        return html_table("Dataset", self._summary(html=True))


def _count_text(counts: pd.Series) -> str:
    """``"a 3, b 2"`` from a Series of counts indexed by label."""
    return ", ".join(f"{k} {int(v)}" for k, v in counts.items())


def _dataset_summary(ds: Dataset, *, html: bool) -> list[tuple[str, Any]]:
    """Counts, names and files of a Dataset, as (name, value) rows for :mod:`._display`.

    With ``html`` the judgments per judge and rubric are one DataFrame (a nested table);
    without, one text row per judge.
    """
    rows: list[tuple[str, Any]] = []
    tasks, runs, judgments = ds.tasks, ds.runs, ds.judgments
    arms = ds.arms
    rows.append(("tasks", len(tasks) if tasks is not None else 0))
    labels = ds.labels
    files = [f.attrs.get("source") for f in (tasks, runs, judgments, labels) if f is not None]
    if runs is not None and len(runs):
        arm = runs["arm"].astype(str)
        per_arm = arm.value_counts().reindex(arms.ids, fill_value=0)
        shown = ", ".join(
            f"{arms.name(a)} {int(per_arm[a])}"
            if arms.name(a) in (DEFAULT_ARM_NAMES.get(a, a), a)
            else f"{arms.name(a)} ({a}) {int(per_arm[a])}"
            for a in arms.ids
        )
        rows.append(("runs", f"{len(runs)}: {shown}"))
        keys = runs[["task_id", "replicate"]]
        n_pairs = len(keys.drop_duplicates())
        pairs = f"{n_pairs} (task, replicate) pairs"
        n_arms = runs.groupby(["task_id", "replicate"], observed=True)["arm"].nunique()
        lonely = int((n_arms < len(arms.ids)).sum())
        if lonely:
            pairs += f", {lonely} lacking an arm"
        if "over_budget" in runs.columns:
            over = runs.loc[runs["over_budget"].to_numpy(dtype=bool), ["task_id", "replicate"]]
            pairs += f", {len(over.drop_duplicates())} over budget (no_answer)"
        rows.append(("pairs", pairs))
        per_task = keys.drop_duplicates().groupby("task_id").size()
        lo, hi = int(per_task.min()), int(per_task.max())
        rows.append(("replicates", f"{lo} per task" if lo == hi else f"{lo} to {hi} per task"))
        rows.append(("agents", ", ".join(sorted(runs["agent_model"].astype(str).unique()))))
    if judgments is None:
        rows.append(("judgments", "none yet"))
    else:
        failed = judgments["error"].notna().to_numpy(dtype=bool)
        text = f"{len(judgments)} calls: {len(judgments) - int(failed.sum())} answered"
        if failed.any():
            kind = (
                judgments.loc[failed, "call_status"].fillna("failed").astype(str)
                if "call_status" in judgments.columns
                else pd.Series("failed", index=judgments.index[failed])
            )
            counts = kind.value_counts().sort_index()
            text += ", " + ", ".join(f"{int(v)} {k}" for k, v in counts.items()) + " (error set)"
        rows.append(("judgments", text))
        if len(judgments):
            table = pd.crosstab(judgments["judge"].astype(str), judgments["rubric"].astype(str))
            table.columns.name = table.index.name = None
            rows.append(("judges", ", ".join(table.index)))
            revs = (
                judgments.assign(_r=judgments["rubric"].astype(str))
                .groupby("_r")["prompt_revision"]
                .agg(lambda r: "/".join(f"r{int(x)}" for x in sorted(r.dropna().unique())))
            )
            rows.append(("rubrics", ", ".join(f"{k} ({v})" for k, v in revs.items())))
            if html:
                rows.append(("judgments by judge × rubric", table.reset_index(names="judge")))
            else:
                for i, (judge, counts) in enumerate(table.iterrows()):
                    text = f"{judge}: {_count_text(counts[counts > 0])}"
                    rows.append(("by judge" if i == 0 else "", text))
    if labels is not None:
        n_pairs = len(labels[["task_id", "replicate", "arm_a", "arm_b"]].drop_duplicates())
        who = labels["labeler"].astype(str).nunique()
        people = f"{who} labeler" + ("s" if who != 1 else "")
        rows.append(("labels", f"{len(labels)} ({n_pairs} pairs, {people})"))
    plan = ds.plan
    if plan is None:
        rows.append(("plan", "none"))
    else:
        rows.append(
            ("plan", f"{plan.primary_rubric} / {plan.primary_judge_name} / {plan.statistic}")
        )
        if plan.path:
            files.append(plan.path)
    rows.append(("files", ", ".join(str(f) for f in files if f) or "none recorded"))
    return rows


def load_dir(data_dir: str | os.PathLike[str], *, allow_incomplete: bool = False) -> Dataset:
    """Load ``tasks``, ``runs`` and (if present) ``judgments``, ``labels`` and ``plan``.

    ``labels`` (``labels.jsonl``, what ``evalstats label --read`` writes) is read with
    :func:`evalstats.labels.load_labels`, every label checked against the runs' pairs.

    The plan is ``plan.toml`` or ``plan.json`` (:func:`evalstats.load_plan`); both at once
    is a ``DataError``. The arms are those ``arms.toml`` lists (:func:`load_arms`; every run's
    arm one of them, every listed arm with runs), else the runs'; their names come from
    ``arms.toml`` or the rubric files of ``rubrics/`` (:func:`load_arm_names`).
    """
    tasks = load_tasks(find_file(data_dir, "tasks"))
    apath = Path(data_dir) / "arms.toml"
    listed = load_arms(apath) if apath.is_file() else None
    runs = load_runs(
        find_file(data_dir, "runs"),
        tasks,
        allow_incomplete=allow_incomplete,
        arms=None if listed is None else listed.ids,
    )
    if listed is not None and not listed.two_arm:
        # An arm listed in [arms] with no runs is most likely a misspelt id.
        present = set(runs["arm"].astype(str))
        for arm in listed.ids:
            if arm not in present:
                raise DataError(
                    f"arm {arm!r} has no runs in {runs.attrs.get('source')}",
                    path=apath,
                    line=key_line(apath, arm, table="arms"),
                    field=f"arms.{arm}",
                )
    jpath = find_file(data_dir, "judgments", required=False)
    ppath = find_plan(data_dir)
    judgments = load_judgments(jpath) if jpath is not None else None
    used = None if judgments is None else set(judgments["rubric"].astype(str))
    names = load_arm_names(data_dir, rubrics=used)
    runs.attrs["arm_names"] = names
    if listed is not None:
        runs.attrs["arms"] = Arms(
            listed.ids,
            names={a: names[a] for a in listed.ids},
            tools=listed.tools,
            reference=listed.reference,
            path=listed.path,
        )
    lpath = find_file(data_dir, "labels", required=False)
    labels = load_labels(lpath, runs) if lpath is not None else None
    return Dataset(
        tasks,
        runs,
        judgments,
        load_plan(ppath) if ppath is not None else None,
        labels=labels,
    )


def load_arm_names(
    data_dir: str | os.PathLike[str], *, rubrics: Iterable[str] | None = None
) -> dict[str, str]:
    """What the data directory calls its two arms: ``{"with": ..., "without": ...}``.

    When ``arms.toml`` lists K arms in ``[arms]`` (:func:`load_arms`), ``{arm: name}`` for
    each, in its order. For the two arms, the first that names an arm wins:

    1. ``DATA_DIR/arms.toml``, two keys: ``with = "Serena MCP"`` and
       ``without = "plain Claude Code"`` (either may be left out; or an ``[arms]`` table
       of the two);
    2. the ``[arms]`` table of the rubric files in ``DATA_DIR/rubrics/`` (where
       ``evalstats judge --rubric FILE`` keeps a copy), of the rubrics named in ``rubrics``
       when given, the newest revision of each -- when they disagree, a warning and the
       default;
    3. ``"WITH"`` / ``"WITHOUT"``.

    Raises
    ------
    DataError
        ``arms.toml`` is not TOML, has another key, or a value that is not a non-empty
        string (the message names the file, line and field; see :func:`load_arms`).

    Examples
    --------
    >>> import pathlib, tempfile
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> load_arm_names(d)
    {'with': 'WITH', 'without': 'WITHOUT'}
    >>> _ = (d / "arms.toml").write_text('with = "Serena MCP"\\n', encoding="utf-8")
    >>> load_arm_names(d)
    {'with': 'Serena MCP', 'without': 'WITHOUT'}
    """
    d = Path(data_dir)
    names: dict[str, str] = {}
    path = d / "arms.toml"
    if path.is_file():
        listed = load_arms(path)
        names = dict(listed.names)
        if not listed.two_arm:
            # K arms: the rubric files' [arms] name only WITH and WITHOUT.
            return {arm: listed.name(arm) for arm in listed.ids}
    folder = d / "rubrics"
    wanted = None if rubrics is None else set(rubrics)
    seen: dict[str, dict[str, list[Path]]] = {arm: {} for arm in ARMS}
    newest: dict[str, tuple[Any, Path, dict[str, Any]]] = {}
    for p in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        # Only the [arms] table: reading the whole rubric is evalstats.rubrics' job, and a
        # rubric file it rejects still fails there, when its judgments are read.
        doc = _read_toml(p)
        name, rev = str(doc.get("name")), doc.get("revision")
        if wanted is not None and name not in wanted:
            continue
        rev = rev if isinstance(rev, int) else 0
        if name not in newest or rev > newest[name][0]:
            # Of one rubric's revisions, the newest names the arms.
            newest[name] = (rev, p, doc)
    for _, p, doc in newest.values():
        arms = doc.get("arms")
        for arm in ARMS if isinstance(arms, dict) else ():
            value = arms.get(arm)
            if isinstance(value, str) and value.strip() and value != DEFAULT_ARM_NAMES[arm]:
                seen[arm].setdefault(value.strip(), []).append(p)
    for arm in ARMS:
        if arm in names or not seen[arm]:
            continue
        if len(seen[arm]) == 1:
            names[arm] = next(iter(seen[arm]))
        else:
            listed = "; ".join(
                f"{v!r} ({', '.join(q.name for q in ps)})" for v, ps in seen[arm].items()
            )
            warnings.warn(
                f"{folder}: the rubric files call the {arm.upper()} arm differently: {listed}; "
                f"using {DEFAULT_ARM_NAMES[arm]!r} (name it in {path})",
                EvalstatsWarning,
                stacklevel=2,
            )
    return {arm: names.get(arm, DEFAULT_ARM_NAMES[arm]) for arm in ARMS}
