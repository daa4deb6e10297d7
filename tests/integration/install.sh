#!/usr/bin/env bash
# The installed library is usable out of tree: `cmake --install` into a prefix, then build a
# trial-style shared object with pkg-config exactly as the docs say, a program that dlopens it
# and trains a tiny net, and the same program through find_package(t2exp).
set -euo pipefail
: "${T2EXP_BUILD:?}" "${T2EXP_SOURCE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$T2EXP_BUILD" --prefix "$tmp/prefix" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig:$tmp/prefix/lib/x86_64-linux-gnu/pkgconfig"
san=""
if grep -q "T2EXP_SANITIZE:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt"; then san="-fsanitize=address,undefined"; fi

cat > "$tmp/mytrial.c" <<'C'
#include <t2exp.h>
/* Trains y = 2x - 1 with one dense unit; returns the final loss * 1000 rounded. */
int fit_line(void)
{
    t2_net *net = NULL;
    t2_optim *opt = NULL;
    t2_rng rng;
    int in[1] = {1};
    t2_rng_seed(&rng, 3);
    if (t2_net_create(&net, 1, in) || t2_net_dense(net, 1) || t2_net_init(net, &rng)) return -1;
    size_t n;
    t2_net_params(net, &n);
    t2_sgd_params p = t2_sgd_default();
    p.lr = 0.1;
    if (t2_sgd_create(&opt, &p, n)) return -1;
    float xs[8], ys[8], g[8], loss = 0;
    for (int i = 0; i < 8; i++) xs[i] = (float)i / 8, ys[i] = 2 * xs[i] - 1;
    t2_tensor x = t2_tensor_view(xs, 2, (int[]){8, 1}), t = t2_tensor_view(ys, 2, (int[]){8, 1});
    t2_tensor d = t2_tensor_view(g, 2, (int[]){8, 1});
    for (int step = 0; step < 500; step++) {
        const t2_tensor *y;
        t2_net_zero_grad(net);
        if (t2_net_forward(net, &x, T2_TRAIN, &rng, &y) || t2_loss_mse(y, &t, &loss, &d) ||
            t2_net_backward(net, &d, NULL) || t2_optim_step(opt, t2_net_params(net, NULL), t2_net_grads(net, NULL), n))
            return -1;
    }
    t2_optim_free(opt);
    t2_net_free(net);
    return (int)(loss * 1000 + 0.5f);
}
C
cat > "$tmp/main.c" <<'C'
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    int (*fit)(void) = (int (*)(void))dlsym(h, "fit_line");
    int r = fit ? fit() : -1;
    printf("loss_x1000=%d\n", r);
    return argc > 0 && r == 0 ? 0 : 1;
}
C
cc $san -shared -fPIC "$tmp/mytrial.c" $(pkg-config --cflags --libs t2exp) -o "$tmp/mytrial.so"
cc $san "$tmp/main.c" -o "$tmp/main" -ldl
"$tmp/main" "$tmp/mytrial.so"

# The CMake package.
mkdir -p "$tmp/cm"
cat > "$tmp/cm/CMakeLists.txt" <<C
cmake_minimum_required(VERSION 3.25)
project(user C)
find_package(t2exp REQUIRED)
add_library(mytrial MODULE $tmp/mytrial.c)
target_link_libraries(mytrial PRIVATE t2exp::t2exp)
set_target_properties(mytrial PROPERTIES PREFIX "")
C
cmake -S "$tmp/cm" -B "$tmp/cm/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_C_FLAGS="$san" >/dev/null
cmake --build "$tmp/cm/build" >/dev/null
"$tmp/main" "$tmp/cm/build/mytrial.so"
echo "install: pkg-config and find_package builds both work"
