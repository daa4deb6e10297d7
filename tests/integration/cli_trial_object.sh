#!/usr/bin/env bash
# A trial object missing several callbacks is refused naming every one of them, and t2exp.pc
# carries what a trial calling libm needs (-lm), checked with a link that allows no undefined symbol.
source "$(dirname "$0")/common.bash"
cat > "$WORK/c.yaml" <<Y
name: q
hyperparameters: {global_batch_size: 1}
searcher: {name: single, metric: loss, max_length: {batches: 3}}
Y
cat > "$WORK/two.c" <<C
#include <t2exp.h>
static int build_model(t2_ctx *ctx, void **state) { (void)ctx; *state = 0; return 0; }
T2_TRIAL(.name = "two_missing", .build_model = build_model);
C
cc -shared -fPIC -I"$T2EXP_SOURCE/framework/include" "$WORK/two.c" -o "$WORK/two.so"
expect_exit 2 "$T2EXP" create "$WORK/c.yaml" "$WORK/two.so"
expect_in "$OUT" "does not set .build_training_loader, .build_validation_loader, .train_batch, .evaluate_batch"

# pkg-config from the build tree: its .pc points at the install prefix, so only its Libs line is read.
libs=$(PKG_CONFIG_PATH="$T2EXP_BUILD" pkg-config --libs t2exp)
case " $libs " in *" -lm "*) ;; *) fail "t2exp.pc has no -lm: $libs" ;; esac
cat > "$WORK/m.c" <<C
#include <math.h>
float wave(float x) { return sinf(x) + expf(x); }
C
cc -shared -fPIC -fno-builtin "$WORK/m.c" -Wl,--no-undefined -o "$WORK/m.so" \
  $(sed 's/-L[^ ]*//g; s/-Wl,-rpath,[^ ]*//g; s/-lt2exp//' <<<"$libs") || fail "a trial using sinf does not link with t2exp.pc's flags"
echo "trial object: every missing callback named; t2exp.pc carries -lm"
