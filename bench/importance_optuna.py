# importance_optuna.py T2EXP HOME EXP SPACE_JSON — `t2exp importance EXP` against Optuna's
# FanovaImportanceEvaluator (get_param_importances) on the same trials, five of Optuna's seeds.
# SPACE_JSON: {"name": [low, high], ...}, double hyperparameters only (Optuna fits log ones in raw
# values and one-hot encodes categoricals, t2exp in exponents and by index: the numbers differ by
# design there). Needs Debian's python3-optuna and python3-sklearn (Optuna's forest); not part of the
# test suite. Figures: docs/cli.md#importance.
import csv, json, subprocess, sys
import optuna
from optuna.distributions import FloatDistribution
from optuna.importance import FanovaImportanceEvaluator, get_param_importances
optuna.logging.set_verbosity(optuna.logging.WARNING)
t2, home, exp, space = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
env = {"T2EXP_HOME": home}
rows = list(csv.DictReader(subprocess.run([t2, "trials", exp, "--csv"], capture_output=True, text=True, env=env, check=True).stdout.splitlines()))
dists = {k: FloatDistribution(lo, hi) for k, (lo, hi) in space.items()}
study = optuna.create_study()
for r in rows:
    if r["state"] != "COMPLETED": continue
    hp = json.loads(r["hparams"])
    study.add_trial(optuna.trial.create_trial(params={k: float(hp[k]) for k in space}, distributions=dists, value=float(r["best_validation"])))
res = {}
for seed in range(5):
    imp = get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=seed))
    for k, v in imp.items(): res.setdefault(k, []).append(v)
ours = json.loads(subprocess.run([t2, "importance", exp, "--json"], capture_output=True, text=True, env=env, check=True).stdout)
print("trials", len(study.trials))
for e in ours["importance"]:
    k = e["hyperparameter"]
    o = res.get(k, [float("nan")])
    print(f"{k:6s} t2exp {e['importance']:.4f}  optuna(5 seeds) {min(o):.4f}..{max(o):.4f} mean {sum(o)/len(o):.4f}")
