"""What each of the checker's rules costs and catches, and whether weighing them would do better.

    .venv/bin/python scripts/bench/grounding_ledger.py [--part PART|all]

Over the labelled sets of grounding.py, every rule is asked about every
sentence (checker.refusals: all of them, not only the first that fires, as
check_lines does). Printed:

- the ledger: for each rule, the faithful sentences it refuses and the false
  ones it catches, in all and alone (no other rule refuses them: what taking
  the rule out would change);
- the rules weighed: a sentence is dropped when any rule refuses it; a
  logistic regression over which rules refuse it might weigh a noisy rule
  less (its last feature, how many refuse, is the sum of the others: it
  adds no information to a linear model, only a share of the ridge). It is
  trained leave-one-part-out (on every other part, tested on the one left
  out), and each part's faithful kept, false dropped
  and weakest kind are printed both ways, with their means. A weighing that
  beat "any rule" on parts it never saw would be worth shipping; one that
  only moves along the same trade-off says the rules lack information, not
  balance.
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _common as C  # noqa: E402
import grounding as G  # noqa: E402

from nasfs.lines import LineIndex  # noqa: E402
from nasfs.summaries.checker import refusals, split_answer  # noqa: E402

RULES = ("citation", "length", "overlap", "number", "range", "name", "tool", "judgement", "binding", "polarity",
         "restriction", "pairs", "version", "table")
RIDGE = 1.0  # L2 weight of the regression, as scikit-learn's C=1
ROUNDS = 25  # Newton steps


def refused_by(case: G.Case, data: dict[str, bytes]) -> set[str]:
    """The rules that refuse any sentence of the case ("citation" when none is found)."""
    index = LineIndex(data[case.file])

    def lines(a: int, b: int) -> str:
        return index.slice(a, b).decode("utf-8", errors="replace")

    sentences = split_answer(case.text)
    if not sentences:
        return {"citation"}
    return {rule for s in sentences for rule, _ in refusals(s, index.count, lines, case.path)}


def ledger(cases: list[G.Case], refused: list[set[str]]) -> None:
    rows = []
    for rule in RULES:
        true = [r for c, r in zip(cases, refused) if c.label == "true" and rule in r]
        false = [(c.label, r) for c, r in zip(cases, refused) if c.label != "true" and rule in r]
        alone = Counter(label for label, r in false if r == {rule})
        rows.append((rule, len(true), sum(r == {rule} for r in true), len(false), sum(alone.values()),
                     ", ".join(f"{k} {n}" for k, n in sorted(alone.items())) or "-"))
    faithful = sum(c.label == "true" for c in cases)
    C.table(("rule", "faithful refused", "alone", "false caught", "alone", "caught alone, by kind"), rows,
            f"each rule over {faithful} faithful and {len(cases) - faithful} false sentences "
            "(alone: no other rule refuses it)")


def features(r: set[str]) -> list[float]:
    return [1.0, *(1.0 if rule in r else 0.0 for rule in RULES), float(len(r))]


def fit(xs: list[list[float]], ys: list[int]) -> list[float]:
    """Logistic regression, classes weighed to balance, by Newton's method (small: a dozen features)."""
    n, d = len(xs), len(xs[0])
    pos = sum(ys)
    weight = {1: n / (2 * pos), 0: n / (2 * (n - pos))}
    w = [0.0] * d
    for _ in range(ROUNDS):
        grad = [RIDGE * w[j] if j else 0.0 for j in range(d)]
        hess = [[(RIDGE if i == j and i else 0.0) for j in range(d)] for i in range(d)]
        for x, y in zip(xs, ys):
            z = sum(wj * xj for wj, xj in zip(w, x))
            p = 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))
            c = weight[y]
            for i in range(d):
                grad[i] += c * (p - y) * x[i]
                if x[i]:
                    for j in range(d):
                        hess[i][j] += c * p * (1 - p) * x[i] * x[j]
        step = _solve(hess, grad)
        w = [wj - sj for wj, sj in zip(w, step)]
    return w


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """a x = b by Gaussian elimination with partial pivoting (a is small and, with the ridge, regular)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col and m[r][col]:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] if abs(m[i][i]) >= 1e-12 else 0.0 for i in range(n)]


def rates(cases: list[G.Case], kept: list[bool]) -> tuple[float, float, float]:
    """Faithful kept, false dropped, and the weakest kind's dropped rate."""
    true = [k for c, k in zip(cases, kept) if c.label == "true"]
    by_kind: dict[str, list[bool]] = {}
    for c, k in zip(cases, kept):
        if c.label != "true":
            by_kind.setdefault(c.label, []).append(not k)
    dropped = [d for v in by_kind.values() for d in v]
    return (sum(true) / len(true), sum(dropped) / len(dropped),
            min(sum(v) / len(v) for v in by_kind.values()))


def weighed(cases: list[G.Case], refused: list[set[str]], parts: tuple[str, ...]) -> None:
    rows, both = [], []
    for part in parts:
        test = [i for i, c in enumerate(cases) if c.part == part]
        train = [i for i, c in enumerate(cases) if c.part != part]
        if not test or not train:
            continue
        w = fit([features(refused[i]) for i in train], [int(cases[i].label == "true") for i in train])
        kept = [sum(a * b for a, b in zip(w, features(refused[i]))) >= 0 for i in test]
        any_rule = rates([cases[i] for i in test], [not refused[i] for i in test])
        mine = rates([cases[i] for i in test], kept)
        both.append(any_rule + mine)
        rows.append((part, *(f"{x:.0%}" for x in any_rule + mine)))
    if both:
        rows.append(("mean", *(f"{sum(b[j] for b in both) / len(both):.1%}" for j in range(6))))
    C.table(("part left out", "any rule: kept", "dropped", "weakest kind", "weighed: kept", "dropped", "weakest kind"),
            rows, "the rules weighed, leave-one-part-out (a logistic regression over which rules refuse)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=(*G.PARTS, "all"), default="all")
    args = ap.parse_args()
    parts = G.PARTS if args.part == "all" else (args.part,)
    C.banner("grounding ledger: what each of the checker's rules refuses, and the rules weighed (issue 25)")
    data, cases = G.load(None, parts)
    refused = [refused_by(c, data) for c in cases]
    ledger(cases, refused)
    if len(parts) > 1:
        weighed(cases, refused, parts)
    C.finish()


if __name__ == "__main__":
    main()
