#!/usr/bin/env bash
# Every test case of octet_tests is run by some CTest entry: ctest runs the binary once per area tag
# (tests/CMakeLists.txt), so a test case whose tags are all unregistered would never run. Compares the names Catch2
# lists for the registered tags with those of every non-hidden test case.
#
#   check_test_tags.sh OCTET_TESTS TAG...
set -u
bin=$1
shift
filter=$(printf '[%s],' "$@")
# A missing or broken binary lists nothing, which would compare equal: fail on it instead. (The exit status of
# --list-test-names-only is Catch2's count of tests, not an error flag.)
[ -x "$bin" ] || { echo "FAILED: $bin is not an executable (build octet_tests first)"; exit 1; }
all=$("$bin" '~[.]' --list-test-names-only | grep -v '^octet tests:' | sed '/^$/d' | sort)
covered=$("$bin" "${filter%,}" --list-test-names-only | grep -v '^octet tests:' | sed '/^$/d' | sort)
[ -n "$all" ] || { echo "FAILED: $bin lists no test cases"; exit 1; }
missing=$(comm -23 <(echo "$all") <(echo "$covered"))
if [ -n "$missing" ]; then
  echo "FAILED: test cases whose tags no CTest entry runs (add the tag to OCTET_TEST_TAGS in tests/CMakeLists.txt):"
  echo "$missing" | sed 's/^/  /'
  exit 1
fi
echo "all $(echo "$all" | wc -l) test cases are run by a CTest entry"
