#!/usr/bin/env bash
# Prints, after a failed ctest run, each failed test's assertion messages in a
# few lines, so the end of a CI log (often all a CI summary keeps) says why it
# failed, not only which test. Run from the build folder.
set -uo pipefail
log=Testing/Temporary/LastTest.log
failed=Testing/Temporary/LastTestsFailed.log
[[ -f $failed && -f $log ]] || exit 0
echo "=== why the failed tests failed (from $log) ==="
# gtest writes "<file>:<line>: Failure" and then the assertion and its message;
# skip the "Which is: 4-byte object" lines that say nothing.
grep -h -A8 ": Failure$" "$log" | grep -v -e "Which is:" -e "^--$" -e "Expected equality" |
  cut -c1-400 | tail -n 24
echo "=== failed: $(cut -d: -f2 "$failed" | tr '\n' ' ')"
