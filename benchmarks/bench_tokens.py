"""Throughput of evalstats.count_tokens against raw tiktoken on ~10 MB of mixed text.

Both sides use the same ``tiktoken.Encoding`` (evalstats.tokens.encoding()) and two threads, in
the same process, best of 3. The reference is ``enc.encode_ordinary_batch(texts,
num_threads=2)``, which returns the ids; count_tokens returns only the counts, so the ratio
measures what the counting wrapper (validation, scheduling, result array) costs or saves.
Goal: ratio >= 0.8.

The corpus is generated from a fixed seed: prose paragraphs, Python/JS-like code, JSON
tool output, some non-ASCII text, in documents of log-normal size (agent transcripts and
answers). Nothing is downloaded.

Run: .venv/bin/python benchmarks/bench_tokens.py [--mb 10] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from evalstats.tokens import count_tokens, encoding

_WORDS = (
    "the of and to in is that for it with as was on be by this are or from at which an have "
    "not but all were when we there can been has more if will one about their would so no "
    "what out up into its some them only time than other new these two may do could test "
    "function return value error file module import class method request response cache "
    "bootstrap cluster interval estimate variance judge verdict replicate agent tool budget"
).split()
_UNICODE = ["café", "naïve", "Straße", "日本語", "данные", "αβγ", "😀", "✅", "→", "—", "東京"]
_IDENTS = ["data", "frame", "idx", "result", "count", "tokens", "path", "rng", "value", "items"]


def _prose(rng: np.random.Generator, n_words: int) -> str:
    words = rng.choice(_WORDS, size=n_words)
    out, sentence = [], []
    for i, w in enumerate(words):
        sentence.append(w)
        if rng.random() < 0.01:
            sentence.append(str(rng.choice(_UNICODE)))
        if len(sentence) > 8 and rng.random() < 0.12 or i == len(words) - 1:
            text = " ".join(sentence)
            out.append(text[0].upper() + text[1:] + rng.choice([".", ".", "?", "!", ":"]))
            sentence = []
    return " ".join(out)


def _code(rng: np.random.Generator, n_funcs: int) -> str:
    lines = []
    for _ in range(n_funcs):
        name = f"{rng.choice(_IDENTS)}_{rng.choice(_IDENTS)}_{int(rng.integers(100))}"
        args = ", ".join(rng.choice(_IDENTS, size=int(rng.integers(1, 4)), replace=False))
        lines.append(f"def {name}({args}):")
        lines.append(f'    """{_prose(rng, int(rng.integers(5, 15)))}"""')
        for _ in range(int(rng.integers(2, 8))):
            a, b = rng.choice(_IDENTS, size=2)
            op = rng.choice(["+", "-", "*", "//", "%"])
            lines.append(f"    {a} = {b} {op} {int(rng.integers(1000))}  # {rng.choice(_WORDS)}")
            if rng.random() < 0.3:
                lines.append(
                    f"    if {a} > {b}:\n        return {{'{a}': {a}, '{b}': [{b}, 0x{int(rng.integers(1 << 16)):04x}]}}"
                )
        lines.append(f"    return {rng.choice(_IDENTS)}\n")
    return "\n".join(lines)


def _tool_json(rng: np.random.Generator, n_rows: int) -> str:
    rows = [
        {
            "id": int(rng.integers(1 << 30)),
            "path": f"src/{rng.choice(_IDENTS)}/{rng.choice(_IDENTS)}.py",
            "line": int(rng.integers(1, 5000)),
            "score": round(float(rng.random()), 6),
            "match": _prose(rng, 6),
        }
        for _ in range(n_rows)
    ]
    return json.dumps(rows, indent=2, ensure_ascii=False)


def make_corpus(target_bytes: int, seed: int = 20240601) -> list[str]:
    rng = np.random.default_rng(seed)
    docs: list[str] = []
    total = 0
    while total < target_bytes:
        # A transcript interleaves prose, code and tool output; sizes ~ log-normal(8 KB).
        size = int(np.clip(rng.lognormal(np.log(8000), 1.0), 50, 400_000))
        parts, n = [], 0
        while n < size:
            kind = rng.random()
            if kind < 0.45:
                part = _prose(rng, int(rng.integers(20, 200)))
            elif kind < 0.85:
                part = _code(rng, int(rng.integers(1, 4)))
            else:
                part = _tool_json(rng, int(rng.integers(1, 6)))
            parts.append(part)
            n += len(part)
        doc = "\n\n".join(parts)
        docs.append(doc)
        total += len(doc.encode("utf-8"))
    return docs


def _best_of(fn, repeats: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=10.0, help="corpus size in MB (UTF-8)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    enc = encoding()
    docs = make_corpus(int(args.mb * 1_000_000))
    n_bytes = sum(len(d.encode("utf-8")) for d in docs)
    mb = n_bytes / 1e6
    # Warm both paths (thread start-up, regex JIT of the Rust side) outside the timing.
    count_tokens(docs[:50], num_threads=args.threads)
    enc.encode_ordinary_batch(docs[:50], num_threads=args.threads)

    t_raw, ids = _best_of(
        lambda: enc.encode_ordinary_batch(docs, num_threads=args.threads), args.repeats
    )
    t_ours, counts = _best_of(lambda: count_tokens(docs, num_threads=args.threads), args.repeats)
    n_tokens = int(np.sum(counts))
    assert counts.tolist() == [len(x) for x in ids], "count_tokens disagrees with tiktoken"

    print(f"corpus: {len(docs)} documents, {mb:.2f} MB UTF-8, {n_tokens:,} tokens (cl100k_base)")
    print(f"threads: {args.threads}, best of {args.repeats}")
    for label, t in (("tiktoken encode_ordinary_batch", t_raw), ("evalstats count_tokens", t_ours)):
        print(f"{label:32s} {t:7.3f} s  {mb / t:7.2f} MB/s  {n_tokens / t / 1e6:6.2f} M tokens/s")
    ratio = t_raw / t_ours
    print(f"throughput ratio count_tokens / tiktoken: {ratio:.2f} (goal >= 0.8)")


if __name__ == "__main__":
    main()
