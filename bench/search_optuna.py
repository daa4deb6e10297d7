#!/usr/bin/python3
"""bench/search_optuna.py — the reference for `bench/run search`: Optuna's TPESampler (seed=seed,
its defaults otherwise) on the test functions of trials/testfn.c over the same domains as
bench/configs/search_FN.yaml. For each seed prints `SEED BEST_AFTER_50 BEST_AFTER_TRIALS`.
Run with /usr/bin/python3 (Debian's python3-optuna).

  /usr/bin/python3 bench/search_optuna.py --fn branin --seeds 10 --trials 200
"""
import argparse
import math
import sys

import optuna

PI = math.pi


def branin(x):
    b, c, t = 5.1 / (4 * PI * PI), 5 / PI, 1 / (8 * PI)
    u = x[1] - b * x[0] * x[0] + c * x[0] - 6
    return u * u + 10 * (1 - t) * math.cos(x[0]) + 10


H_ALPHA = [1.0, 1.2, 3.0, 3.2]
H_A = [[10, 3, 17, 3.5, 1.7, 8], [0.05, 10, 17, 0.1, 8, 14],
       [3, 3.5, 1.7, 10, 17, 8], [17, 8, 0.05, 10, 0.1, 14]]
H_P = [[1312, 1696, 5569, 124, 8283, 5886], [2329, 4135, 8307, 3736, 1004, 9991],
       [2348, 1451, 3522, 2883, 3047, 6650], [4047, 8828, 8732, 5743, 1091, 381]]


def hartmann6(x):
    f = 0.0
    for i in range(4):
        s = sum(H_A[i][j] * (x[j] - H_P[i][j] * 1e-4) ** 2 for j in range(6))
        f -= H_ALPHA[i] * math.exp(-s)
    return f


def styblinski_tang(x):
    return sum(v ** 4 - 16 * v * v + 5 * v for v in x) / 2


OFFSET = {"a": 0.0, "b": 0.5, "c": 2.0}


def mixed(c, lr, x):
    e = math.log10(lr) + 3
    return e * e + (x - 1) * (x - 1) + OFFSET[c]


def objective(fn):
    """The objective over the same space as bench/configs/search_FN.yaml."""
    if fn == "branin":
        return lambda t: branin([t.suggest_float("x0", -5, 10), t.suggest_float("x1", 0, 15)])
    if fn == "hartmann6":
        return lambda t: hartmann6([t.suggest_float("x%d" % i, 0, 1) for i in range(6)])
    if fn == "styblinski_tang10":
        return lambda t: styblinski_tang([t.suggest_float("x%d" % i, -5, 5) for i in range(10)])
    if fn == "mixed":
        return lambda t: mixed(t.suggest_categorical("c", ["a", "b", "c"]),
                               t.suggest_float("lr", 1e-5, 1, log=True), t.suggest_float("x", -3, 3))
    raise SystemExit("unknown fn %s" % fn)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fn", required=True)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--trials", type=int, default=200)
    a = ap.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    obj = objective(a.fn)
    for seed in range(1, a.seeds + 1):
        study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed), direction="minimize")
        study.optimize(obj, n_trials=a.trials)
        vals = [t.value for t in sorted(study.trials, key=lambda t: t.number)]
        best50 = min(vals[:50])
        print("%d %.17g %.17g" % (seed, best50, min(vals)))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
