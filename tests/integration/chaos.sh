#!/usr/bin/env bash
# The chaos test (tests/chaos/chaos.sh) with CI's 3 rounds; 1 round in a sanitizer build, where the
# MPI CNN runs several times slower (CI's sanitized pass leaves it out: tests/CMakeLists.txt). By hand: ROUNDS=50 bash tests/chaos/chaos.sh (see there).
: "${T2EXP_BUILD:?set by ctest}" "${T2EXP_SOURCE:?set by ctest}"
rounds=3
grep -q "T2EXP_SANITIZE:BOOL=ON" "$T2EXP_BUILD/CMakeCache.txt" 2>/dev/null && rounds=1
ROUNDS=${ROUNDS:-$rounds} exec bash "$T2EXP_SOURCE/tests/chaos/chaos.sh"
