#!/usr/bin/env bash
# The BLAS core a run uses: chosen for the CPU when the user did not choose, the user's choice
# otherwise, a nonsense choice warned about and survived; `t2exp info` and every trial log say
# which core it was.
source "$(dirname "$0")/common.bash"

# What CPUID says (the kernel's flags line is CPUID's, less what the OS cannot save).
flags=$(grep -m1 '^flags' /proc/cpuinfo || true)
has() { grep -qw "$1" <<<"$flags"; }

# 1. No OPENBLAS_CORETYPE: the program decides (measuring once, then from its cache).
expect_exit 0 env -u OPENBLAS_CORETYPE "$T2EXP" info
echo "$OUT"
core=$(awk '$1 == "blas_core" {print $2}' <<<"$OUT")
why=$(awk '$1 == "blas_core_why" {$1 = ""; print}' <<<"$OUT")
[ -n "$core" ] || fail "info printed no blas_core"
if has avx512f && has avx512bw && has avx512vl; then
  case "$core" in SkylakeX|Cooperlake) ;; *) fail "CPU has AVX-512F but the core is $core ($why)" ;; esac
elif has avx2 && has fma; then
  case "$core" in Haswell|Zen|SkylakeX|Cooperlake) ;; *) fail "CPU has AVX2+FMA but the core is $core" ;; esac
fi
expect_in "$OUT" "cpu_features"
# The convolution kernels follow the same CPUID facts.
if has avx512f; then expect_in "$OUT" "conv2d                   direct AVX-512"
else expect_in "$OUT" "conv2d                   im2col + BLAS"; fi
expect_in "$OUT" "sqlite"
expect_in "$OUT" "store                    $T2EXP_HOME"
# The decision is cached per machine: a second run reads it and says the same.
if [ -f "$T2EXP_HOME/cache/blas-core" ]; then
  [ "$(stat -c %a "$T2EXP_HOME/cache/blas-core")" = 600 ] || fail "blas-core cache is not private"
  expect_exit 0 env -u OPENBLAS_CORETYPE "$T2EXP" info
  [ "$(awk '$1 == "blas_core" {print $2}' <<<"$OUT")" = "$core" ] || fail "second run chose another core"
  # A damaged cache is measured around (never trusted) and written again.
  printf 't2exp-blas 1\tgarbage\n' > "$T2EXP_HOME/cache/blas-core"
  expect_exit 0 env -u OPENBLAS_CORETYPE "$T2EXP" info
  again=$(awk '$1 == "blas_core" {print $2}' <<<"$OUT")
  case "$core/$again" in SkylakeX/Cooperlake|Cooperlake/SkylakeX|"$core/$core") ;;
    *) fail "a damaged cache made the core $again (was $core)" ;; esac
  [ "$(awk -F'\t' 'NR == 1 {print $1 "/" NF}' "$T2EXP_HOME/cache/blas-core")" = "t2exp-blas 1/4" ] \
    || fail "the damaged cache was not written again"
fi

# 2. The user's choice always wins, and is reported as theirs.
expect_exit 0 env OPENBLAS_CORETYPE=PRESCOTT "$T2EXP" info --json
expect_in "$OUT" '"blas_core": "Prescott"'
expect_in "$OUT" 'set by the user (OPENBLAS_CORETYPE=PRESCOTT)'

# 3. Nonsense: OpenBLAS's own behaviour, a warning, no crash.
expect_exit 0 env OPENBLAS_CORETYPE=NOT_A_CORE "$T2EXP" info
expect_in "$OUT" "t2exp: warning: OPENBLAS_CORETYPE=NOT_A_CORE is not a core this OpenBLAS could take"

# 4. Trials run on the chosen core and their logs begin with the same line. (The damaged cache
# above was measured again, so on a busy machine the core may be the other AVX-512 one now.)
expect_exit 0 env -u OPENBLAS_CORETYPE "$T2EXP" info
core=$(awk '$1 == "blas_core" {print $2}' <<<"$OUT")
expect_exit 0 env -u OPENBLAS_CORETYPE "$T2EXP" create "$EXAMPLES/quadratic_random.yaml" "$TRIALS/quadratic.so" \
  --config searcher.max_trials=2 --quiet
expect_exit 0 "$T2EXP" logs 1.0
first=$(head -n1 <<<"$OUT")
case "$first" in "BLAS: OpenBLAS "*", core $core "*) ;; *) fail "trial log does not begin with the BLAS line of core $core: $first" ;; esac
if has avx512f; then expect_in "$first" "; conv2d: direct AVX-512"; else expect_in "$first" "; conv2d: im2col + BLAS"; fi
echo "ok: core $core; trial log: $first"
# The store keeps each trial's line, and describe shows the kernels the experiment's results came from.
expect_exit 0 "$T2EXP" describe 1
expect_in "$OUT" "$first"
[ "$(sql "SELECT count(*) FROM trials WHERE experiment_id = 1 AND blas_id IS NOT NULL")" = 2 ] || fail "trials do not record their BLAS line"
[ "$(sql "SELECT DISTINCT l.line FROM trials t JOIN blas_lines l ON l.id = t.blas_id WHERE t.experiment_id = 1")" = "$first" ] ||
  fail "the stored BLAS line is not the log's"
