#!/usr/bin/env bash
# Installs, builds and runs every test: the doctest unit tests and the CLI
# test (through ctest), the Python module tests and the notebooks (pytest
# with /usr/bin/python3). Ends with one line "tests: N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=${VFSSIM_BUILD_DIR:-build}
bash scripts/install-deps.sh || exit 1
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
cmake --build "$build" || { echo "tests: 0 passed, 1 failed (build)"; exit 1; }

results="$build/test-results"
rm -rf "$results" && mkdir -p "$results"
(cd "$build" && ctest --output-on-failure --output-junit "$root/$results/ctest.xml" -j 2)
ctest_rc=$?
PYTHONPATH="$root/$build/python" VFSSIM_BUILD_DIR="$root/$build" \
  /usr/bin/python3 -m pytest -q tests/python --junitxml="$results/pytest.xml"
pytest_rc=$?

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
[ $ctest_rc -eq 0 ] && [ $pytest_rc -eq 0 ]
