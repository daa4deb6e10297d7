#!/usr/bin/env bash
# Bash completion as a user gets it: installed with t2exp, found by Debian's bash-completion on
# first use, then offering the commands, each command's own options (the same the parser accepts:
# each one offered is checked to be accepted), sub-commands (model's too), experiment ids (importance
# and evaluate's too), EXP.N trial addresses and files.
source "$(dirname "$0")/common.bash"
bc=/usr/share/bash-completion/bash_completion
[ -r "$bc" ] || { echo "bash_completion: skipped (no bash-completion package)"; exit 77; }
prefix="$WORK/prefix"
cmake --install "$T2EXP_BUILD" --prefix "$prefix" >/dev/null
[ -r "$prefix/share/bash-completion/completions/t2exp" ] || fail "the install put no completion in $prefix/share"
expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_grid.yaml" "$TRIALS/quadratic.so" --quiet
expect_exit 0 "$T2EXP" create "$EXAMPLES/quadratic_grid.yaml" "$TRIALS/quadratic.so" --quiet
ntrials=$(sql "SELECT count(*) FROM trials WHERE experiment_id = 2")
mkdir -p "$WORK/files/sub" && touch "$WORK/files/const.yaml" "$WORK/files/trial.so"

# complete WORDS... — the completions bash offers for the last word (which may be empty), run in a
# fresh interactive-like bash that loads bash-completion and finds t2exp's through XDG_DATA_DIRS.
complete_words() {
  PATH="$prefix/bin:$PATH" XDG_DATA_DIRS="$prefix/share:/usr/share" bash --norc -c '
    source '"$bc"'
    __load_completion t2exp || { echo "NOT-LOADED"; exit 0; }
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
    spec=$(complete -p t2exp); fn=${spec#*-F }; fn=${fn%% *}
    "$fn" t2exp "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
    printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$@"
}
cd "$WORK/files"
got=$(complete_words t2exp "")
[ "$got" != NOT-LOADED ] || fail "bash-completion did not find t2exp's completion under $prefix/share"
for c in create resume describe metrics logs dashboard init plot pipeline info; do
  grep -qx "$c" <<<"$got" || fail "command $c not offered: $got"
done
[ "$(complete_words t2exp de)" = "$(printf 'delete\ndescribe')" ] || fail "t2exp de<TAB>: $(complete_words t2exp de)"
# Every command's options: each offered option is one the command accepts (not "unknown option").
for c in create resume describe trials metrics checkpoints list preview evaluate export delete dashboard init plot; do
  opts=$(complete_words t2exp "$c" --)
  [ -n "$opts" ] || fail "no options offered for $c"
  for o in $opts; do
    set +e
    msg=$("$T2EXP" "$c" "$o" 2>&1 </dev/null | head -n 3)
    set -e
    ! grep -q "unknown option" <<<"$msg" || fail "$c offers $o but refuses it: $msg"
  done
done
got=$(complete_words t2exp describe --)
[ "$got" = "$(printf -- '--csv\n--help\n--home\n--json\n--top')" ] || fail "describe's options: $got"
grep -qx -- "--port" <<<"$(complete_words t2exp dashboard --)" || fail "dashboard's --port not offered"
! grep -qx -- "--top" <<<"$(complete_words t2exp create --)" || fail "create offers describe's --top"
# Experiment ids and trial addresses, from this store (T2EXP_HOME) and from --home.
[ "$(complete_words t2exp describe "")" = "$(printf '1\n2')" ] || fail "ids: $(complete_words t2exp describe "")"
[ "$(complete_words t2exp logs 2. | wc -l)" = "$ntrials" ] || fail "trials of 2: $(complete_words t2exp logs 2.)"
grep -qx "2.0" <<<"$(complete_words t2exp logs 2.)" || fail "2.0 not offered"
[ "$(complete_words t2exp --home "$WORK/none" describe "")" = "" ] || fail "ids from an empty --home"
[ "$(T2EXP_HOME=/nonexistent complete_words t2exp --home "$T2EXP_HOME" describe "")" = "$(printf '1\n2')" ] ||
  fail "--home not followed"
# Files and option values.
[ "$(complete_words t2exp create con)" = "const.yaml" ] || fail "create's file: $(complete_words t2exp create con)"
[ "$(complete_words t2exp metrics 1 --kind v)" = validation ] || fail "--kind value"
[ "$(complete_words t2exp plot 1 --format "")" = "$(printf 'png\nsvg')" ] || fail "--format values"
[ "$(complete_words t2exp plot --out s)" = sub ] || fail "--out's directory"
[ "$(complete_words t2exp plot "")" = "$(printf '1\n2')" ] || fail "plot's ids"
[ "$(complete_words t2exp init s)" = sub ] || fail "init's directory"
[ "$(complete_words t2exp pipeline "")" = "$(printf 'run\nstatus')" ] || fail "pipeline's sub-commands"
# The model registry's sub-commands, from the program itself, and an EXP for register's CHECKPOINT.
[ "$("$T2EXP" __complete subcommands model)" = "$(printf 'register\nlist\ndescribe\ndelete')" ] ||
  fail "__complete subcommands model: $("$T2EXP" __complete subcommands model)"
[ "$(complete_words t2exp model "")" = "$(printf 'delete\ndescribe\nlist\nregister')" ] ||
  fail "model's sub-commands: $(complete_words t2exp model "")"
[ "$(complete_words t2exp model d)" = "$(printf 'delete\ndescribe')" ] || fail "model d<TAB>: $(complete_words t2exp model d)"
[ "$(complete_words t2exp model register best "")" = "$(printf '1\n2')" ] ||
  fail "model register's CHECKPOINT: $(complete_words t2exp model register best "")"
[ "$(complete_words t2exp model register --description x best "")" = "$(printf '1\n2')" ] ||
  fail "model register's CHECKPOINT after --description: $(complete_words t2exp model register --description x best "")"
[ "$(complete_words t2exp model list "")" = "" ] || fail "model list takes no operand: $(complete_words t2exp model list "")"
# importance takes an EXP; evaluate's CHECKPOINT is an EXP, EXP.N or a file, then files.
[ "$(complete_words t2exp importance "")" = "$(printf '1\n2')" ] || fail "importance's ids: $(complete_words t2exp importance "")"
got=$(complete_words t2exp evaluate "")
grep -qx 1 <<<"$got" && grep -qx 2 <<<"$got" && grep -qx const.yaml <<<"$got" || fail "evaluate's CHECKPOINT: $got"
grep -qx "2.0" <<<"$(complete_words t2exp evaluate 2.)" || fail "evaluate's EXP.N: $(complete_words t2exp evaluate 2.)"
[ "$(complete_words t2exp evaluate 1 tr)" = "trial.so" ] || fail "evaluate's TRIAL.so: $(complete_words t2exp evaluate 1 tr)"
echo "bash_completion: ok"
