"""Case-study findings are Markdown: a model or annotator name from the data stays text."""

from __future__ import annotations

import json

from evalstats.report import compute

BEACON = "m![x](https://e.example/b.png)<img src=x>"


def test_alpaca_findings_escape_names(tmp_path):
    recs = [
        {"instruction": f"q{i}", "generator_1": "base", "generator_2": BEACON,
         "annotator": judge, "preference": 1.0 + (i * k) % 3 / 2,
         "output_1": "a" * (5 + i), "output_2": "b" * (3 + 2 * i)}
        for i in range(12)
        for k, judge in enumerate(["judge-a", "judge![y](https://e.example/c.png)"], start=1)
    ]  # fmt: skip
    (tmp_path / "annotations.json").write_text(json.dumps(recs), encoding="utf-8")
    res = compute("alpaca_eval", tmp_path, n_resamples=50, seed=1)
    texts = res.tables["findings"]["text"].tolist()
    named = [t for t in texts if "e.example" in t]
    assert {"Agreement", "Length"} <= {t.split(",")[0].strip("* ") for t in named}
    for t in named:
        assert "](" not in t.replace("\\](", "") and "<img" not in t, t
