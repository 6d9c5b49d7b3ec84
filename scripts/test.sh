#!/usr/bin/env bash
# Installs, builds and runs every test: the doctest unit tests and the CLI
# test (through ctest), the Python tests and the notebooks (pytest with
# /usr/bin/python3); then the unit tests and the bad-scenario corpus built
# with AddressSanitizer + UBSan (BUILD-asan), and the scenario loader under
# libFuzzer, two targets for VFSSIM_FUZZ_SECONDS (60) seconds each
# (BUILD-fuzz, clang); each of those counts as one test. BUILD is $VFSSIM_BUILD_DIR (default
# build). Ends with "tests: N passed, N failed" and the total time.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${VFSSIM_BUILD_DIR:-build}
case "$build" in /*) ;; *) build="$root/$build" ;; esac
asan="$build-asan"
fuzz="$build-fuzz"
fuzz_seconds=${VFSSIM_FUZZ_SECONDS:-60}
bash scripts/install-deps.sh || exit 1
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
cmake --build "$build" || { echo "tests: 0 passed, 1 failed (build)"; exit 1; }

results="$build/test-results"
rm -rf "$results" && mkdir -p "$results"
(cd "$build" && ctest --output-on-failure --output-junit "$results/ctest.xml" -j 2)
ctest_rc=$?
PYTHONPATH="$build/python" VFSSIM_BUILD_DIR="$build" \
  /usr/bin/python3 -m pytest -q tests/python --junitxml="$results/pytest.xml"
pytest_rc=$?

# junit FILE NAME RC SECONDS LOG: one test case, failed unless RC is 0, with
# the end of LOG as its failure message.
junit() {
  /usr/bin/python3 - "$@" <<'PY'
import sys, pathlib, xml.etree.ElementTree as ET
path, name, rc, seconds, log = sys.argv[1:6]
suite = ET.Element("testsuite", name=name, tests="1", failures="0" if rc == "0" else "1", time=seconds)
case = ET.SubElement(suite, "testcase", name=name, classname="scripts.test", time=seconds)
if rc != "0":
    text = pathlib.Path(log).read_text(errors="replace") if pathlib.Path(log).exists() else ""
    ET.SubElement(case, "failure", message=f"exit status {rc}").text = text[-20000:]
ET.ElementTree(suite).write(path, encoding="unicode")
PY
}

# Sanitizers: the unit tests, and every bad scenario through the CLI, with
# ASan and UBSan (any report aborts: -fno-sanitize-recover).
t0=$(date +%s)
asan_log="$results/sanitizers.log"
{
  cmake -S . -B "$asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DVFSSIM_SANITIZE=ON -DVFSSIM_PYTHON=OFF \
    >/dev/null &&
  cmake --build "$asan" --target unit_tests vfssim &&
  ASAN_OPTIONS=abort_on_error=1:detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$asan/unit_tests" &&
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 VFSSIM_BUILD_DIR="$asan" \
    /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python/test_bad_scenarios.py
} >"$asan_log" 2>&1
asan_rc=$?
tail -n 4 "$asan_log"
junit "$results/sanitizers.xml" "unit tests and bad scenarios under ASan+UBSan" $asan_rc $(( $(date +%s) - t0 )) "$asan_log"
echo "sanitizers: $([ $asan_rc -eq 0 ] && echo passed || echo "FAILED (see $asan_log)")"

# Fuzzing under libFuzzer (clang, ASan, UBSan), two targets for
# VFSSIM_FUZZ_SECONDS each: fuzz_scenario (the loader) and fuzz_run (load,
# plan and run one small point). Both start from the corpus, the seeds and
# 200 files of the structure-aware generator (scripts/gen_scenarios.py);
# the regressions are replayed first; new corpus entries go to
# BUILD-fuzz/corpus-TARGET. Longer runs before a release: docs/fuzzing.md.
fuzz_rc=0
{
  cmake -S . -B "$fuzz" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DVFSSIM_FUZZ=ON -DVFSSIM_PYTHON=OFF -DVFSSIM_TESTS=OFF >/dev/null &&
  cmake --build "$fuzz" --target fuzz_scenario fuzz_run &&
  rm -rf "$fuzz/generated" && /usr/bin/python3 scripts/gen_scenarios.py "$fuzz/generated" --count 200 --seed 1
} >"$results/fuzz-build.log" 2>&1 || fuzz_rc=$?
for target in fuzz_scenario fuzz_run; do
  t0=$(date +%s)
  fuzz_log="$results/$target.log"
  rc=$fuzz_rc
  if [ $rc -eq 0 ]; then
    {
      mkdir -p "$fuzz/corpus-$target" "$fuzz/artifacts" &&
      { [ -z "$(ls -A tests/fuzz/regressions 2>/dev/null)" ] || "$fuzz/$target" tests/fuzz/regressions/*; } &&
      "$fuzz/$target" -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$fuzz/artifacts/$target-" "$fuzz/corpus-$target" tests/fuzz/corpus scenarios/seed \
        "$fuzz/generated"
    } >"$fuzz_log" 2>&1
    rc=$?
  else
    cp "$results/fuzz-build.log" "$fuzz_log"
  fi
  grep -E "^stat::(number_of_executed_units|new_units_added|peak_rss_mb)|^Done|ERROR|SUMMARY|cov: " "$fuzz_log" |
    tail -n 4
  junit "$results/$target.xml" "$target for ${fuzz_seconds} s" $rc $(( $(date +%s) - t0 )) "$fuzz_log"
  echo "$target: $([ $rc -eq 0 ] && echo "no finding in ${fuzz_seconds} s" || echo "FINDING (see $fuzz_log; input in $fuzz/artifacts/)")"
  # A finding must be reproducible from this output alone (CI keeps no
  # files): the report with its stack, and the input, base64, when small.
  if [ $rc -ne 0 ]; then
    grep -n -m 1 -A 40 -E "runtime error|ERROR: |terminate called|what\(\)|Assertion" "$fuzz_log" | head -n 60
    for a in "$fuzz"/artifacts/"$target"-*; do
      [ -f "$a" ] && [ "$(stat -c %s "$a")" -le 16384 ] && { echo "input $a (base64):"; base64 -w 100 "$a"; }
    done
  fi
  [ $rc -eq 0 ] || fuzz_rc=$rc
done

/usr/bin/python3 - "$results" <<'PY'
import sys, pathlib, xml.etree.ElementTree as ET
passed = failed = skipped = 0
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.xml")):
    for case in ET.parse(f).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed += 1
        elif case.find("skipped") is not None:
            skipped += 1
        else:
            passed += 1
print(f"tests: {passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
echo "test time: $(( $(date +%s) - start )) s"
[ $ctest_rc -eq 0 ] && [ $pytest_rc -eq 0 ] && [ $asan_rc -eq 0 ] && [ $fuzz_rc -eq 0 ]
