#!/bin/sh
# tests/fuzz/run_fuzz.sh — build and run putmd's libFuzzer targets.
#
#   run_fuzz.sh build  BUILD_DIR              configure (clang++) and build the targets
#   run_fuzz.sh corpus BUILD_DIR TARGET       run TARGET once over its seeds and regressions
#   run_fuzz.sh fuzz   BUILD_DIR TARGET SECS  fuzz TARGET for SECS seconds
#   run_fuzz.sh all    BUILD_DIR SECS         build, then corpus and fuzz for every target
#
# TARGET is gro, top, mdp or checkpoint. Fuzzing starts from a copy of the
# seeds (BUILD_DIR/work/TARGET, kept between runs, so later runs start from
# what earlier ones found) and writes crash, leak and timeout inputs to
# BUILD_DIR/artifacts/TARGET/. Exit status: 0 when nothing was found.
# FUZZ_JOBS sets the build parallelism (default 2); FUZZ_ARGS adds libFuzzer
# options (e.g. FUZZ_ARGS=-jobs=1).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
targets="gro top mdp checkpoint"
mode=${1:?usage: run_fuzz.sh build|corpus|fuzz|all BUILD_DIR [TARGET] [SECS]}
build=${2:?usage: run_fuzz.sh $mode BUILD_DIR ...}

# libFuzzer options common to every run: 10 s per input is a hang, 2 GiB a
# memory blow-up; leaks are findings (ASan's leak check at exit of each input)
common="-timeout=10 -rss_limit_mb=2048 -print_final_stats=1"

do_build() {
  cmake -S "$here/targets" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" -j"${FUZZ_JOBS:-2}"
}

dict_args() {
  if [ -f "$here/dict/$1.dict" ]; then echo "-dict=$here/dict/$1.dict"; fi
}

do_corpus() {
  t=$1
  # (a target may have no regressions directory yet: git keeps no empty ones)
  files=$(find "$here/corpus/$t" "$here/regressions/$t" -type f ! -name README.md 2>/dev/null | sort || true)
  n=$(echo "$files" | grep -c . || true)
  echo "fuzz_$t: $n seed and regression inputs"
  if [ "$n" -eq 0 ]; then
    # without inputs libFuzzer would start fuzzing, without end
    echo "no seed inputs in $here/corpus/$t" >&2
    exit 1
  fi
  # with file arguments libFuzzer runs each input once and stops at a finding
  # shellcheck disable=SC2086
  "$build/fuzz_$t" $common $files
}

do_fuzz() {
  t=$1
  secs=$2
  mkdir -p "$build/work/$t" "$build/artifacts/$t"
  cp -n "$here/corpus/$t"/* "$build/work/$t/" 2>/dev/null || true
  # shellcheck disable=SC2086
  "$build/fuzz_$t" $common $(dict_args "$t") -max_total_time="$secs" \
    -artifact_prefix="$build/artifacts/$t/" ${FUZZ_ARGS:-} "$build/work/$t"
}

case $mode in
  build) do_build ;;
  corpus) do_corpus "${3:?target}" ;;
  fuzz) do_fuzz "${3:?target}" "${4:?seconds}" ;;
  all)
    secs=${3:-20}
    do_build
    for t in $targets; do do_corpus "$t"; done
    for t in $targets; do do_fuzz "$t" "$secs"; done
    ;;
  *) echo "unknown mode '$mode' (build, corpus, fuzz or all)" >&2; exit 2 ;;
esac
