"""Agreement coefficients against published values and independent oracles."""

from __future__ import annotations

import dataclasses
import json
import warnings
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from contract import TIDY_COLUMNS
from scipy import stats

from evalstats.errors import DataError
from evalstats.stats import agreement as ag

krippendorff = pytest.importorskip("krippendorff")
sm_ir = pytest.importorskip("statsmodels.stats.inter_rater")
sk_metrics = pytest.importorskip("sklearn.metrics")
irr_raw = pytest.importorskip("irrCAC.raw")
irr_table = pytest.importorskip("irrCAC.table")

SHARED = Path(__file__).resolve().parents[2] / "shared"
REFERENCE = SHARED / "data" / "reference_cases.json"


@pytest.fixture(scope="module")
def cases():
    if not REFERENCE.exists():
        pytest.skip(f"reference cases not found at {REFERENCE} (shared/ is not beside the repo)")
    return {c["id"]: c for c in json.loads(REFERENCE.read_text())}


# (id of a case's "expected" dict, key) for every published value a test compared.
CHECKED: set[tuple[int, str]] = set()


def check(expected: dict, key: str, got: float) -> None:
    e = expected[key]
    assert abs(got - e["value"]) <= e["tol"] + 1e-12, f"{key}: {got} vs {e['value']}±{e['tol']}"
    CHECKED.add((id(expected), key))


def expand(table) -> tuple[np.ndarray, np.ndarray]:
    """Label pairs (category indices) reproducing a contingency table."""
    t = np.asarray(table, dtype=int)
    k = t.shape[0]
    cells = np.repeat(np.arange(k * k), t.ravel())
    return cells // k, cells % k


# --------------------------------------------------------------------- reference cases


def test_sas_skin_condition(cases):
    c = cases["sas_freq_skin_condition_kappa"]
    e = c["expected"]
    res = ag.cohen_kappa_table(c["data"]["table"], categories=c["data"]["categories"])
    check(e, "kappa", res.kappa)
    check(e, "kappa_se", res.se)
    check(e, "kappa_ci95_low", res.ci_low)
    check(e, "kappa_ci95_high", res.ci_high)
    assert res.n == c["data"]["n"]
    # The same numbers from raw labels.
    a, b = expand(c["data"]["table"])
    cats = c["data"]["categories"]
    lab = np.array(cats, dtype=object)
    raw = ag.cohen_kappa(lab[a], lab[b], categories=cats)
    assert raw.kappa == pytest.approx(res.kappa, abs=1e-12)
    assert raw.se == pytest.approx(res.se, abs=1e-12)


def test_sas_unused_column(cases):
    c = cases["sas_printout_3x3_unused_column_kappa"]
    e = c["expected"]
    for prefix, weights in (("kappa", None), ("kappa_linear", "linear")):
        res = ag.cohen_kappa_table(c["data"]["table"], weights=weights)
        check(e, prefix, res.kappa)
        check(e, f"{prefix}_se", res.se)
        check(e, f"{prefix}_ci95_low", res.ci_low)
        check(e, f"{prefix}_ci95_high", res.ci_high)
        check(e, f"{prefix}_se0", res.se0)
        check(e, f"{prefix}_z", res.z)
        check(e, f"{prefix}_p_two_sided", res.p_value)
        check(e, f"{prefix}_p_one_sided", stats.norm.sf(res.z))
        # From labels: rater 2 never uses category 1, so it must be declared.
        a, b = expand(c["data"]["table"])
        cats = c["data"]["categories"]
        raw = ag.cohen_kappa(np.array(cats)[a], np.array(cats)[b], weights=weights, categories=cats)
        assert raw.k == 3
        check(e, prefix, raw.kappa)
        check(e, f"{prefix}_se0", raw.se0)


def test_gwet_cont3x3abstractors(cases):
    c = cases["gwet_cont3x3abstractors_two_rater_coefficients"]
    e = c["expected"]
    t = c["data"]["table"]
    a, b = expand(t)
    un = ag.two_rater_agreement(t, method="wald_t").set_index("statistic")
    quad = ag.two_rater_agreement(t, method="wald_t", weights="quadratic").set_index("statistic")

    check(e, "percent_agreement", un.loc["percent_agreement", "estimate"])
    check(e, "percent_agreement_se", un.loc["percent_agreement", "se"])
    check(e, "kappa", un.loc["cohen_kappa", "estimate"])
    check(e, "kappa_se", un.loc["cohen_kappa", "se"])
    check(e, "kappa_ci95_t_low", un.loc["cohen_kappa", "ci_low"])
    check(e, "kappa_ci95_t_high", un.loc["cohen_kappa", "ci_high"])
    check(e, "scott_pi", un.loc["scott_pi", "estimate"])
    check(e, "scott_pi_se", un.loc["scott_pi", "se"])
    check(e, "ac1", un.loc["gwet_ac1", "estimate"])
    check(e, "ac1_se", un.loc["gwet_ac1", "se"])
    check(e, "ac1_ci95_t_low", un.loc["gwet_ac1", "ci_low"])
    check(e, "ac1_ci95_t_high", un.loc["gwet_ac1", "ci_high"])
    check(e, "bp", un.loc["brennan_prediger", "estimate"])
    check(e, "bp_se", un.loc["brennan_prediger", "se"])
    check(e, "alpha_nominal", un.loc["krippendorff_alpha", "estimate"])
    check(e, "alpha_nominal_se", un.loc["krippendorff_alpha", "se"])
    check(e, "kappa_quadratic", quad.loc["cohen_kappa", "estimate"])
    check(e, "kappa_quadratic_se", quad.loc["cohen_kappa", "se"])
    check(e, "kappa_quadratic_ci95_t_low", quad.loc["cohen_kappa", "ci_low"])
    check(e, "kappa_quadratic_ci95_t_high", quad.loc["cohen_kappa", "ci_high"])
    check(e, "scott_pi_quadratic", quad.loc["scott_pi", "estimate"])
    check(e, "ac2_quadratic", quad.loc["gwet_ac1", "estimate"])
    check(e, "ac2_quadratic_se", quad.loc["gwet_ac1", "se"])
    check(e, "bp_quadratic", quad.loc["brennan_prediger", "estimate"])
    check(e, "bp_quadratic_se", quad.loc["brennan_prediger", "se"])
    check(e, "alpha_quadratic", quad.loc["krippendorff_alpha", "estimate"])
    check(e, "percent_agreement_quadratic", quad.loc["percent_agreement", "estimate"])
    check(e, "percent_agreement_quadratic_se", quad.loc["percent_agreement", "se"])

    # The label-level functions give the same values.
    check(e, "ac1", ag.gwet_ac1(a, b, method="wald_t").estimate)
    check(e, "ac1_ci95_t_low", ag.gwet_ac1(np.column_stack([a, b]), method="wald_t").ci_low)
    check(e, "ac2_quadratic_se", ag.gwet_ac1(a, b, weights="quadratic").se)
    check(e, "bp", ag.pabak(a, b).estimate)
    check(e, "bp_quadratic_se", ag.pabak(a, b, weights="quadratic").se)
    check(e, "scott_pi_se", ag.scott_pi(a, b).se)
    check(e, "percent_agreement_se", ag.percent_agreement(a, b).se)
    check(e, "kappa_ci95_t_low", ag.cohen_kappa(a, b, method="wald_t").ci_low)
    check(e, "alpha_nominal", ag.krippendorff_alpha(np.column_stack([a, b]).astype(float)).alpha)
    check(
        e,
        "alpha_quadratic",
        ag.krippendorff_alpha(np.column_stack([a, b]) + 1.0, level="interval").alpha,
    )


def test_fleiss_1971(cases):
    c = cases["fleiss1971_psychiatric_diagnoses"]
    e = c["expected"]
    counts = ag.ratings_to_counts(np.array(c["data"]["ratings"]))
    assert counts.sum(axis=0).tolist() == [26, 26, 30, 55, 43]
    res = ag.fleiss_kappa(counts=counts)
    check(e, "fleiss_kappa", res.kappa)
    check(e, "fleiss_kappa_irr", res.kappa)
    check(e, "fleiss_kappa_z", res.z)
    check(e, "fleiss_kappa_se0", res.se0)
    names = ["depression", "personality_disorder", "schizophrenia", "neurosis", "other"]
    for j, name in enumerate(names):
        check(e, f"category_kappa_{j + 1}_{name}", res.category_kappa[j])
        check(e, f"category_z_{j + 1}", res.category_z[j])
    assert res.n_raters == 6 and res.n_subjects == 30
    assert res.categories == (1, 2, 3, 4, 5)


def test_krippendorff_2011(cases):
    c = cases["krippendorff2011_alpha_missing_data_all_levels"]
    e = c["expected"]
    data = np.array(c["data"]["ratings"], dtype=float).T  # published raters x units; None -> nan
    for level in ("nominal", "ordinal", "interval", "ratio"):
        res = ag.krippendorff_alpha(data, level=level)
        check(e, f"alpha_{level}", res.alpha)
        assert res.n_units == 11  # unit 12 has a single value
    assert ag.krippendorff_alpha(pd.DataFrame(data), level="interval").alpha == pytest.approx(
        0.8491071, abs=5e-8
    )


# --------------------------------------------------------------------- oracles


def random_pair(rng, k, n, agree=0.6):
    a = rng.integers(0, k, n)
    b = np.where(rng.random(n) < agree, a, rng.integers(0, k, n))
    return a, b


SEEDS = [0, 1, 2, 3]
KS = [2, 3, 4, 5]


AGREEMENT_CASES = (
    "sas_freq_skin_condition_kappa",
    "sas_printout_3x3_unused_column_kappa",
    "gwet_cont3x3abstractors_two_rater_coefficients",
    "fleiss1971_psychiatric_diagnoses",
    "krippendorff2011_alpha_missing_data_all_levels",
)


def test_every_published_agreement_value_was_compared(cases):
    """Runs after the reference tests above (file order): none of their values is skipped."""
    if not CHECKED:
        pytest.skip("run with the reference-case tests above (e.g. the whole file)")
    missing = [
        (cid, key)
        for cid in AGREEMENT_CASES
        for key in cases[cid]["expected"]
        if (id(cases[cid]["expected"]), key) not in CHECKED
    ]
    assert not missing, missing


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", KS)
def test_cohen_vs_statsmodels_and_sklearn(seed, k):
    rng = np.random.default_rng(seed * 10 + k)
    n = int(rng.integers(30, 300))
    a, b = random_pair(rng, k, n)
    # Category k (an extra one) is never used by anyone; with k >= 3 rater 2 never
    # uses category 0 either.
    if k >= 3:
        b = np.where(b == 0, 1, b)
    cats = list(range(k + 1))
    table = ag.contingency_table(a, b, categories=cats).to_numpy()
    for weights, wt in ((None, None), ("linear", "linear"), ("quadratic", "quadratic")):
        res = ag.cohen_kappa(a, b, weights=weights, categories=cats)
        if wt is None:
            sm = sm_ir.cohens_kappa(table)
        else:
            sm = sm_ir.cohens_kappa(table, weights=np.arange(k + 1), wt=wt)
        assert res.kappa == pytest.approx(sm.kappa, abs=1e-10)
        assert res.se == pytest.approx(sm.std_kappa, abs=1e-10)
        assert res.se0 == pytest.approx(sm.std_kappa0, abs=1e-10)
        assert res.z == pytest.approx(sm.z_value, rel=1e-9)
        assert res.p_value == pytest.approx(sm.pvalue_two_sided, rel=1e-7, abs=1e-300)
        assert res.ci_low == pytest.approx(sm.kappa_low, abs=1e-10)
        assert res.ci_high == pytest.approx(min(1.0, sm.kappa_upp), abs=1e-10)
        sk = sk_metrics.cohen_kappa_score(a, b, labels=cats, weights=wt)
        assert res.kappa == pytest.approx(sk, abs=1e-10)
        assert res.n == n and res.k == k + 1


def irr_table_est(table, method, weights):
    w = "identity" if weights is None else weights
    out = getattr(irr_table.CAC(pd.DataFrame(table), weights=w, digits=14), method)()["est"]
    return out


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("k", KS)
def test_two_rater_vs_irrcac(seed, k):
    rng = np.random.default_rng(100 + seed * 10 + k)
    a, b = random_pair(rng, k, int(rng.integers(40, 200)), agree=0.5)
    cats = list(range(k + 1))  # one unused category
    table = ag.contingency_table(a, b, categories=cats).to_numpy()
    methods = {
        "percent_agreement": "pa2",
        "cohen_kappa": "cohen",
        "scott_pi": "scott",
        "gwet_ac1": "gwet",
        "brennan_prediger": "bp",
        "krippendorff_alpha": "krippendorff",
    }
    for weights in (None, "linear", "quadratic"):
        ours = ag.two_rater_agreement(table, weights=weights, method="wald_t").set_index(
            "statistic"
        )
        for name, method in methods.items():
            est = irr_table_est(table, method, weights)
            row = ours.loc[name]
            assert row["estimate"] == pytest.approx(est["coefficient_value"], abs=1e-9), name
            assert row["se"] == pytest.approx(float(np.ravel(est["se"])[0]), abs=1e-9), name
            lo, hi = est["confidence_interval"]
            assert row["ci_low"] == pytest.approx(float(np.ravel(lo)[0]), abs=1e-9), name
            assert row["ci_high"] == pytest.approx(float(np.ravel(hi)[0]), abs=1e-9), name


def raw_frame(rng, n_units, n_raters, k, missing):
    truth = rng.integers(0, k, n_units)
    x = np.where(
        rng.random((n_units, n_raters)) < 0.6,
        truth[:, None],
        rng.integers(0, k, (n_units, n_raters)),
    ).astype(float)
    x[rng.random(x.shape) < missing] = np.nan
    x[0, :] = np.arange(n_raters) % k  # every category present, unit fully rated
    return pd.DataFrame(x, columns=[f"r{j}" for j in range(n_raters)])


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("k", [2, 3, 5])
def test_multirater_vs_irrcac(seed, k):
    rng = np.random.default_rng(200 + seed * 10 + k)
    df = raw_frame(rng, int(rng.integers(20, 60)), int(rng.integers(3, 6)), k, missing=0.15)
    cats = [float(c) for c in range(k)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for weights in (None, "quadratic"):
            cac = irr_raw.CAC(
                df, weights="identity" if weights is None else weights, categories=cats, digits=14
            )
            g = cac.gwet()["est"]
            ours = ag.gwet_ac1(df, weights=weights, categories=cats, method="wald_t")
            assert ours.estimate == pytest.approx(g["coefficient_value"], abs=1e-9)
            assert ours.se == pytest.approx(g["se"], abs=1e-9)
            assert ours.ci_low == pytest.approx(g["confidence_interval"][0], abs=1e-9)
            assert ours.ci_high == pytest.approx(g["confidence_interval"][1], abs=1e-9)
        f = irr_raw.CAC(df, categories=cats, digits=14).fleiss()["est"]
    res = ag.fleiss_kappa(counts=ag.ratings_to_counts(df, categories=cats), method="wald_t")
    assert res.kappa == pytest.approx(f["coefficient_value"], abs=1e-9)
    assert res.se == pytest.approx(f["se"], abs=1e-9)
    assert res.ci_low == pytest.approx(f["confidence_interval"][0], abs=1e-9)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fleiss_vs_statsmodels_complete(seed):
    rng = np.random.default_rng(300 + seed)
    k = 4
    df = raw_frame(rng, 50, 5, k, missing=0.0)
    counts = ag.ratings_to_counts(df).to_numpy()
    res = ag.fleiss_kappa(counts=counts)
    assert res.kappa == pytest.approx(sm_ir.fleiss_kappa(counts, method="fleiss"), abs=1e-12)
    # A category kappa is Fleiss' kappa of "this category vs the rest".
    for j in range(k):
        collapsed = np.column_stack([counts[:, j], counts.sum(axis=1) - counts[:, j]])
        assert res.category_kappa[j] == pytest.approx(sm_ir.fleiss_kappa(collapsed), abs=1e-12)


def test_fleiss_se0_matches_null_simulation():
    # Under H0 every rating is an independent draw from p; the SD of kappa over
    # replications must match the Fleiss-Nee-Landis H0 SE.
    rng = np.random.default_rng(7)
    p = np.array([0.1, 0.2, 0.3, 0.4])
    n, m, reps = 40, 5, 4000
    counts = rng.multinomial(m, p, size=(reps, n)).astype(float)
    pj = counts.sum(axis=1) / (n * m)
    pbar = ((counts**2).sum(axis=2) - m).sum(axis=1) / (n * m * (m - 1))
    pe = (pj**2).sum(axis=1)
    kappas = (pbar - pe) / (1 - pe)
    se0 = np.mean([ag.fleiss_kappa(counts=counts[i]).se0 for i in range(50)])
    assert kappas.std() == pytest.approx(se0, rel=0.06)
    assert ag.fleiss_kappa(counts=counts[0]).kappa == pytest.approx(kappas[0], abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
def test_krippendorff_vs_package(seed, level):
    rng = np.random.default_rng(400 + seed)
    k = int(rng.integers(2, 6))
    values = np.sort(rng.choice(np.arange(1, 20), size=k, replace=False)).astype(float)
    df = raw_frame(rng, int(rng.integers(15, 60)), int(rng.integers(2, 6)), k, missing=0.25)
    data = df.to_numpy().T.copy()  # raters x units
    ok = ~np.isnan(data)
    data[ok] = values[data[ok].astype(int)]
    ours = ag.krippendorff_alpha(data.T, level=level)  # units x raters
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement=level)
    assert ours.alpha == pytest.approx(ref, abs=1e-10)


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("level", ["nominal", "interval", "ratio"])
def test_krippendorff_se_vs_irrcac(seed, level):
    rng = np.random.default_rng(500 + seed)
    k = 4
    df = raw_frame(rng, 40, 4, k, missing=0.2) + 1.0
    cats = [1.0, 2.0, 3.0, 4.0]
    v = np.array(cats)
    if level == "nominal":
        w = np.eye(k)
    elif level == "interval":
        w = 1 - (v[:, None] - v[None, :]) ** 2 / 9.0
    else:
        d = ((v[:, None] - v[None, :]) / (v[:, None] + v[None, :])) ** 2
        w = 1 - d / d.max()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = irr_raw.CAC(df, weights=w, categories=cats, digits=14).krippendorff()["est"]
    ours = ag.krippendorff_alpha(df, level=level, method="wald_t")
    assert ours.alpha == pytest.approx(ref["coefficient_value"], abs=1e-9)
    assert ours.se == pytest.approx(ref["se"], abs=1e-9)
    assert ours.ci_low == pytest.approx(ref["confidence_interval"][0], abs=1e-9)


# --------------------------------------------------------------------- vectorised core


def _kappa_from_tables(tables, weights=None):
    """Kappa of (..., k, k) tables by the vectorised core the clustered intervals and the design
    studies share (private: nothing public evaluates many tables at once)."""
    t = np.asarray(tables, dtype=float)
    k = t.shape[-1]
    parts = partial(ag.table_parts, w=ag.weight_matrix(weights, k), kind="cohen")
    return ag.coefficient(parts, t.reshape(*t.shape[:-2], k * k))


def test_kappa_from_tables_vectorised():
    rng = np.random.default_rng(11)
    tables = rng.integers(0, 20, size=(3, 7, 4, 4)).astype(float)
    for weights in (None, "linear", "quadratic"):
        got = _kappa_from_tables(tables, weights)
        assert got.shape == (3, 7)
        for i in range(3):
            for j in range(7):
                ref = ag.cohen_kappa_table(tables[i, j], weights=weights).kappa
                assert got[i, j] == pytest.approx(ref, abs=1e-12)
    w = np.array([[1, 0.5, 0, 0], [0.5, 1, 0.5, 0], [0, 0.5, 1, 0.5], [0, 0, 0.5, 1]])
    assert _kappa_from_tables(tables[0, 0], w) == pytest.approx(
        ag.cohen_kappa_table(tables[0, 0], weights=w).kappa
    )
    # A batch of identical 1-category tables is undefined, not an error.
    single = np.zeros((2, 3, 3))
    single[:, 1, 1] = 5
    assert np.isnan(_kappa_from_tables(single)).all()


# --------------------------------------------------------------------- inputs


def test_input_forms_agree():
    rng = np.random.default_rng(3)
    a, b = random_pair(rng, 3, 200)
    names = np.array(["loss", "tie", "win"], dtype=object)
    ref = ag.cohen_kappa(a, b, weights="linear")
    cat = pd.CategoricalDtype(["loss", "tie", "win"], ordered=True)
    forms = [
        (names[a], names[b]),
        (pd.Series(names[a], dtype="str"), pd.Series(names[b], dtype="str")),
        (pd.Series(names[a]).astype(cat), pd.Series(names[b]).astype(cat)),
        (a.astype(float), b.astype(float)),
        (list(a), list(b)),
        (a + 10, b + 10),
    ]
    for x, y in forms:
        res = ag.cohen_kappa(x, y, weights="linear")
        assert res.kappa == pytest.approx(ref.kappa, abs=1e-12)
        assert res.se == pytest.approx(ref.se, abs=1e-12)
    # Integer labels with a gap: the fast path drops the unused value like the general path.
    res_gap = ag.cohen_kappa(a * 2, b * 2, weights="linear")
    assert res_gap.categories == (0, 2, 4)
    assert res_gap.kappa == pytest.approx(ref.kappa, abs=1e-12)


def test_categorical_keeps_declared_categories():
    cat = pd.CategoricalDtype(["loss", "tie", "win"], ordered=True)
    a = pd.Series(["tie", "win", "win", "tie"]).astype(cat)
    b = pd.Series(["tie", "win", "tie", "tie"]).astype(cat)
    res = ag.cohen_kappa(a, b, weights="linear")
    assert res.k == 3 and res.categories == ("loss", "tie", "win")


def test_missing_pairs_dropped():
    a = np.array([1, 2, np.nan, 2, 1, 3], dtype=float)
    b = np.array([1, 2, 2, None, 1, 3], dtype=object)
    res = ag.cohen_kappa(a, b)
    assert res.n == 4 and res.n_dropped == 2
    assert res.kappa == pytest.approx(1.0)
    s = ag.cohen_kappa(pd.Series(["x", None, "y", "x"]), pd.Series(["x", "y", pd.NA, "y"]))
    assert s.n == 2 and s.n_dropped == 2


def test_unknown_label_with_categories():
    with pytest.raises(ValueError, match="not among categories"):
        ag.cohen_kappa([1, 2, 5], [1, 2, 2], categories=[1, 2, 3])


# --------------------------------------------------------------------- edge cases


def test_perfect_agreement():
    a = [0, 1, 2, 0, 1, 2]
    res = ag.cohen_kappa(a, a)
    assert res.kappa == 1.0 and res.se == 0.0 and res.ci_high == 1.0 and res.se0 > 0
    assert ag.gwet_ac1(a, a).estimate == pytest.approx(1.0)
    assert ag.pabak(a, a).estimate == pytest.approx(1.0)
    assert ag.scott_pi(a, a).estimate == pytest.approx(1.0)


def test_single_category_is_nan_with_note():
    res = ag.cohen_kappa(["a"] * 5, ["a"] * 5)
    assert np.isnan(res.kappa) and "undefined" in res.note
    assert ag.percent_agreement(["a"] * 5, ["a"] * 5).estimate == 1.0
    # A declared second category makes AC1 and PABAK defined.
    assert ag.pabak(["a"] * 5, ["a"] * 5, categories=["a", "b"]).estimate == 1.0
    alpha = ag.krippendorff_alpha([[1.0, 1.0], [1.0, 1.0]])
    assert np.isnan(alpha.alpha) and alpha.note


def test_validation_errors():
    with pytest.raises(ValueError, match="empty"):
        ag.cohen_kappa([], [])
    with pytest.raises(ValueError, match="same length"):
        ag.cohen_kappa([1, 2], [1])
    with pytest.raises(ValueError, match="missing"):
        ag.cohen_kappa([1, None], [None, 2])
    with pytest.raises(ValueError, match="weights"):
        ag.cohen_kappa([1, 2], [1, 2], weights="cubic")
    with pytest.raises(ValueError, match="shape"):
        ag.cohen_kappa([1, 2], [1, 2], weights=np.eye(3))
    with pytest.raises(ValueError, match="symmetric"):
        ag.cohen_kappa([1, 2], [1, 2], weights=np.array([[1, 0.5], [0, 1]]))
    with pytest.raises(ValueError, match="diagonal"):
        ag.cohen_kappa([1, 2], [1, 2], weights=np.array([[0, 1], [1, 0]]))
    with pytest.raises(ValueError, match="confidence"):
        ag.cohen_kappa([1, 2], [1, 2], confidence=95)
    with pytest.raises(ValueError, match="method must be one of"):
        ag.cohen_kappa([1, 2], [1, 2], method="bootstrap")
    with pytest.raises(ValueError, match="square"):
        ag.cohen_kappa_table([[1, 2, 3], [1, 2, 3]])
    with pytest.raises(ValueError, match="non-negative"):
        ag.cohen_kappa_table([[1, -2], [1, 2]])
    with pytest.raises(ValueError, match="no observations"):
        ag.cohen_kappa_table(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="non-negative integers"):
        ag.fleiss_kappa(counts=[[1.5, 1.5]])
    with pytest.raises(ValueError, match="level"):
        ag.krippendorff_alpha([[1, 2], [1, 2]], level="cardinal")
    with pytest.raises(ValueError, match="empty"):
        ag.krippendorff_alpha(np.empty((0, 2)))
    with pytest.raises(ValueError, match="two raters"):
        ag.gwet_ac1(np.array([[1], [2]]))


def test_results_frozen_repr_and_frame():
    res = ag.cohen_kappa([0, 1, 1, 0, 1], [0, 1, 0, 0, 1])
    with pytest.raises(AttributeError):
        res.kappa = 0.0  # type: ignore[misc]
    text = repr(res)
    assert text.startswith("CohenKappaResult(estimate=") and "95% CI" in text
    frame = res.to_frame()
    assert frame.shape[0] == 1 and list(frame.columns) == list(TIDY_COLUMNS)
    assert frame.diagnostics["se0"].item() == res.se0
    f = ag.fleiss_kappa(counts=[[2, 1], [3, 0], [0, 3]])
    assert "FleissKappaResult" in repr(f) and f.to_frame().shape[0] == 1
    alpha = ag.krippendorff_alpha([[1, 2, 3], [1, 2, 2]]).to_frame()
    assert alpha.diagnostics["level_of_measurement"].item() == "nominal"


@pytest.mark.parametrize("name", ["cohen_kappa", "gwet_ac1", "fleiss_kappa", "krippendorff_alpha"])
@pytest.mark.parametrize("method", ["wald_z", "wald_t"])
def test_to_frame_is_the_tidy_row(name, method):
    rng = np.random.default_rng(11)
    a, b = random_pair(rng, 3, 40)
    res = FORM_FUNCS[name](a, b, method=method, confidence=0.9)
    frame = res.to_frame()
    assert list(frame.columns) == list(TIDY_COLUMNS)
    row = frame.iloc[0]
    statistic = "brennan_prediger" if name == "pabak" else name
    assert row["statistic"] == statistic and row["method"] == method == res.method
    assert row["confidence"] == 0.9 and row["n"] == res.n
    for col in ("estimate", "se", "ci_low", "ci_high", "p_value"):
        assert row[col] == pytest.approx(getattr(res, col), nan_ok=True), col
    # the t interval's df, which an independent t quantile reproduces
    if method == "wald_t":
        assert row["df"] == res.n - 1
        q = stats.t.ppf(0.95, row["df"])
    else:
        assert np.isnan(row["df"])
        q = stats.norm.ppf(0.95)
    assert row["ci_low"] == pytest.approx(res.estimate - q * res.se, abs=1e-12)
    assert not {"ci", "level"} & (set(frame.columns) | set(frame.diagnostics.columns))
    assert frame.summary().iloc[0].startswith(f"{res.estimate:.2f} [")


def test_two_rater_agreement_is_one_tidy_frame():
    t = [[13, 0, 0], [0, 20, 7], [0, 4, 56]]
    frame = ag.two_rater_agreement(t, method="wald_t")
    assert list(frame.columns) == list(TIDY_COLUMNS)
    assert frame["statistic"].tolist() == [
        "percent_agreement",
        "cohen_kappa",
        "scott_pi",
        "gwet_ac1",
        "brennan_prediger",
        "krippendorff_alpha",
    ]
    assert (frame["method"] == "wald_t").all() and (frame["df"] == 99).all()
    kappa = ag.cohen_kappa_table(t, method="wald_t")
    assert frame.loc[1, "p_value"] == kappa.p_value  # Cohen's H0 test
    assert frame.diagnostics.loc[1, "z"] == kappa.z and len(frame.diagnostics) == 6


def test_the_coefficient_table_builds_every_public_wrapper():
    import inspect

    import evalstats.stats as st

    assert list(ag.COEFFICIENTS) == [
        "percent_agreement",
        "cohen_kappa",
        "scott_pi",
        "gwet_ac1",
        "pabak",
        "fleiss_kappa",
        "krippendorff_alpha",
    ]
    for name, spec in ag.COEFFICIENTS.items():
        func = getattr(st, name)
        assert func is getattr(ag, name) and func.__name__ == name
        sig = inspect.signature(func)
        assert sig.parameters["method"].default == "wald_z"
        assert sig.return_annotation == spec.result.__name__
        doc = inspect.getdoc(func)
        assert "Examples\n--------\n>>> " in doc and "Parameters\n----------" in doc
        # the wrapper returns the row's result class, named by the row's statistic
        res = func([0, 1, 1, 0, 2, 2], [0, 1, 0, 0, 2, 1])
        assert type(res) is spec.result and res.to_frame()["statistic"].item() == spec.statistic


def test_fleiss_unequal_raters():
    res = ag.fleiss_kappa(counts=[[3, 0], [1, 1], [0, 4], [2, 1]])
    assert np.isfinite(res.kappa) and np.isnan(res.se0) and res.n_raters is None
    assert "different numbers" in res.note


# --------------------------------------------------------------------- one input API


def as_long(df: pd.DataFrame, rng) -> pd.DataFrame:
    """The long form of a units x raters frame: one row per rating, rows shuffled."""
    long = (
        df.rename_axis("task")
        .reset_index()
        .melt(id_vars="task", var_name="judge", value_name="label")
        .dropna(subset=["label"])
    )
    return long.iloc[rng.permutation(len(long))].reset_index(drop=True)


FORM_FUNCS = {
    "cohen_kappa": ag.cohen_kappa,
    "scott_pi": ag.scott_pi,
    "percent_agreement": ag.percent_agreement,
    "pabak": ag.pabak,
    "gwet_ac1": ag.gwet_ac1,
    "fleiss_kappa": ag.fleiss_kappa,
    "krippendorff_alpha": ag.krippendorff_alpha,
}
COMMON = ("estimate", "se", "ci_low", "ci_high", "p_value", "n")


def same_result(x, y) -> None:
    for f in COMMON:
        assert getattr(x, f) == pytest.approx(getattr(y, f), abs=1e-12, nan_ok=True), f


@pytest.mark.parametrize("name", list(FORM_FUNCS))
def test_three_input_forms_agree_two_raters(name):
    rng = np.random.default_rng(600)
    a, b = random_pair(rng, 3, 80)
    a = a.astype(float)
    a[[3, 17]] = np.nan  # incomplete pairs are dropped by every form
    index = [f"t{i:03d}" for i in range(len(a))]
    wide = pd.DataFrame({"judge-x": a, "judge-y": b.astype(float)}, index=index)
    func = FORM_FUNCS[name]
    vectors = func(a, b.astype(float))
    matrix = func(wide.to_numpy())
    frame = func(wide)
    long = func(as_long(wide, rng), unit="task", rater="judge", rating="label")
    for other in (matrix, frame, long):
        same_result(vectors, other)
    assert {f.name for f in dataclasses.fields(vectors)} >= {
        "estimate",
        "se",
        "ci_low",
        "ci_high",
        "p_value",
        "n",
    }


def test_two_vector_form_vs_oracles():
    rng = np.random.default_rng(601)
    a, b = random_pair(rng, 4, 150, agree=0.55)
    assert ag.cohen_kappa(a, b).kappa == pytest.approx(
        sk_metrics.cohen_kappa_score(a, b), abs=1e-12
    )
    table = ag.contingency_table(a, b).to_numpy()
    for name, method in (
        ("gwet_ac1", "gwet"),
        ("scott_pi", "scott"),
        ("pabak", "bp"),
        ("percent_agreement", "pa2"),
    ):
        est = irr_table_est(table, method, None)
        ours = FORM_FUNCS[name](a, b, method="wald_t")
        assert ours.estimate == pytest.approx(est["coefficient_value"], abs=1e-9), name
        assert ours.se == pytest.approx(float(np.ravel(est["se"])[0]), abs=1e-9), name
    alpha = ag.krippendorff_alpha(a, b)
    ref = krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="nominal")
    assert alpha.estimate == pytest.approx(ref, abs=1e-10)
    counts, _ = sm_ir.aggregate_raters(np.column_stack([a, b]))
    assert ag.fleiss_kappa(a, b).estimate == pytest.approx(sm_ir.fleiss_kappa(counts), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matrix_and_long_forms_vs_irrcac_many_raters(seed):
    rng = np.random.default_rng(700 + seed)
    k = 3
    df = raw_frame(rng, 45, 4, k, missing=0.15)
    df.index = [f"task-{i}" for i in range(len(df))]
    cats = [float(c) for c in range(k)]
    long = as_long(df, rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cac = irr_raw.CAC(df, categories=cats, digits=14)
        ref = {
            "gwet_ac1": cac.gwet()["est"],
            "scott_pi": cac.fleiss()["est"],  # Fleiss' kappa is the multi-rater Scott's pi
            "fleiss_kappa": cac.fleiss()["est"],
            "pabak": cac.bp()["est"],
        }
    for name, est in ref.items():
        for form in (
            FORM_FUNCS[name](df, categories=cats, method="wald_t"),
            FORM_FUNCS[name](df.to_numpy(), categories=cats, method="wald_t"),
            FORM_FUNCS[name](long, unit="task", rater="judge", rating="label", method="wald_t"),
        ):
            assert form.estimate == pytest.approx(est["coefficient_value"], abs=1e-9), name
            assert form.se == pytest.approx(est["se"], abs=1e-9), name
            assert form.ci_low == pytest.approx(est["confidence_interval"][0], abs=1e-9), name
            assert form.ci_high == pytest.approx(est["confidence_interval"][1], abs=1e-9), name
    # Multi-rater percent agreement: irrCAC reports it as the p_a of Brennan-Prediger.
    pa = ag.percent_agreement(df, categories=cats)
    assert pa.estimate == pytest.approx(ref["pabak"]["pa"], abs=1e-9)
    assert pa.n_raters == 4
    # Krippendorff's alpha: the krippendorff package (raters x units) and irrCAC (SE, p).
    for form in (
        ag.krippendorff_alpha(df, method="wald_t"),
        ag.krippendorff_alpha(long, unit="task", rater="judge", rating="label", method="wald_t"),
    ):
        assert form.estimate == pytest.approx(
            krippendorff.alpha(reliability_data=df.to_numpy().T, level_of_measurement="nominal"),
            abs=1e-10,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            kr = irr_raw.CAC(df, categories=cats, digits=14).krippendorff()["est"]
        assert form.se == pytest.approx(kr["se"], abs=1e-9)
        assert form.p_value == pytest.approx(float(kr["p_value"]), abs=1e-9)
        assert form.n == form.n_units


def test_percent_agreement_many_raters_se_is_sem_of_unit_agreement():
    rng = np.random.default_rng(702)
    x = raw_frame(rng, 60, 5, 3, missing=0.0).to_numpy()
    # Per unit: the share of agreeing rater pairs, counted pair by pair.
    per_unit = np.array(
        [np.mean([row[i] == row[j] for i in range(5) for j in range(i + 1, 5)]) for row in x]
    )
    res = ag.percent_agreement(x)
    assert res.estimate == pytest.approx(per_unit.mean(), abs=1e-12)
    assert res.se == pytest.approx(stats.sem(per_unit), abs=1e-12)


def test_fleiss_from_ratings_vs_statsmodels():
    rng = np.random.default_rng(703)
    df = raw_frame(rng, 50, 5, 4, missing=0.0)
    counts, _ = sm_ir.aggregate_raters(df.to_numpy())
    res = ag.fleiss_kappa(df)
    assert res.estimate == pytest.approx(sm_ir.fleiss_kappa(counts, method="fleiss"), abs=1e-12)
    assert res.kappa == res.estimate and res.n == res.n_subjects == 50
    same_result(res, ag.fleiss_kappa(counts=ag.ratings_to_counts(df)))


def test_krippendorff_nominal_accepts_labels_and_categoricals():
    rng = np.random.default_rng(704)
    df = raw_frame(rng, 30, 3, 3, missing=0.2)
    names = np.array(["loss", "tie", "win"], dtype=object)
    labels = df.apply(lambda c: pd.Series(np.where(c.isna(), None, names[c.fillna(0).astype(int)])))
    ref = ag.krippendorff_alpha(df)
    same_result(ref, ag.krippendorff_alpha(labels))
    cat = labels.astype(pd.CategoricalDtype(list(names), ordered=True))
    same_result(ref, ag.krippendorff_alpha(cat))
    with pytest.raises(ValueError, match="numeric codes"):
        ag.krippendorff_alpha(labels, level="interval")


def test_long_form_errors():
    long = pd.DataFrame({"task": [1, 1, 2], "judge": ["x", "y", "x"], "label": [1, 2, 1]})
    with pytest.raises(DataError, match="duplicate"):
        ag.gwet_ac1(pd.concat([long, long.iloc[[0]]]), unit="task", rater="judge", rating="label")
    with pytest.raises(DataError, match="lacks column"):
        ag.cohen_kappa(long, unit="task", rater="rater", rating="label")
    with pytest.raises(ValueError, match="all three"):
        ag.cohen_kappa(long, unit="task", rater="judge")
    with pytest.raises(ValueError, match="not both"):
        ag.cohen_kappa(long, [1, 2, 3], unit="task", rater="judge", rating="label")
    with pytest.raises(DataError, match="missing task"):
        ag.cohen_kappa(long.assign(task=[1, None, 2]), unit="task", rater="judge", rating="label")
    with pytest.raises(ValueError, match="dimension"):
        ag.gwet_ac1([1, 2, 3])
    with pytest.raises(ValueError, match="two raters"):
        ag.cohen_kappa(np.array([[1, 1, 2], [2, 2, 2]]))
    with pytest.raises(ValueError, match="either ratings"):
        ag.fleiss_kappa([[1, 1], [2, 2]], counts=[[2, 0], [0, 2]])
    with pytest.raises(ValueError, match="either ratings"):
        ag.fleiss_kappa()


def test_every_result_has_the_common_fields_and_aliases():
    a, b = [0, 1, 2, 1, 0, 2, 1], [0, 1, 1, 1, 0, 2, 2]
    results = [FORM_FUNCS[name](a, b) for name in FORM_FUNCS]
    for res in results:
        for f in COMMON:
            assert isinstance(getattr(res, f), float | int), (type(res).__name__, f)
    assert ag.cohen_kappa(a, b).kappa == ag.cohen_kappa(a, b).estimate
    alpha = ag.krippendorff_alpha(a, b)
    assert alpha.alpha == alpha.estimate and alpha.n_units == alpha.n
    ordinal = ag.krippendorff_alpha(a, b, level="ordinal")
    assert np.isnan(ordinal.se) and np.isnan(ordinal.p_value)


def test_table_and_counts_take_the_long_form_too():
    rng = np.random.default_rng(705)
    df = raw_frame(rng, 40, 3, 3, missing=0.1)
    long = as_long(df, rng)
    counts = ag.ratings_to_counts(long, unit="task", rater="judge", rating="label")
    ref = pd.crosstab(long["task"], long["label"])
    assert np.array_equal(counts.to_numpy(), ref.to_numpy())
    assert counts.index.tolist() == ref.index.tolist()
    two = long[long["judge"].isin(["r0", "r1"])]
    table = ag.contingency_table(two, unit="task", rater="judge", rating="label")
    pair = df[["r0", "r1"]].dropna()
    assert np.array_equal(table.to_numpy(), pd.crosstab(pair["r0"], pair["r1"]).to_numpy())
