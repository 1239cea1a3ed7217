# Shared by the end-to-end shell tests of the octet command and runtime; sourced, not run. It gives a temporary folder
# removed on exit, pass/fail counting (ctest fails a test whose output holds "FAILED:"), a command run with its output
# captured, the fixed-string expectation on a command's status and output, byte-equal files, and the closing summary.
#
#   source "$(dirname "${BASH_SOURCE[0]}")/../cli/test_lib.sh"
#   test_begin octet_cli_test   # $TMP: a new folder, removed on exit; passed=0, failed=0
#   ...checks...
#   test_end "cli"              # prints the counts; last command of the script: its status is 0 only with no failure

test_begin() {
  TMP=$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")
  trap 'rm -rf "$TMP"' EXIT
  passed=0
  failed=0
}

pass() { passed=$((passed + 1)); }

# fail MESSAGE...: counts a failure and prints it with the head of the stderr that `run` last captured.
fail() {
  failed=$((failed + 1))
  echo "FAILED: $*"
  if [[ -s "$TMP/stderr" ]]; then sed 's/^/  stderr: /' "$TMP/stderr" | head -5; fi
}

# run CMD...: runs CMD with stdout and stderr captured in $TMP/stdout, $TMP/stderr; sets $rc.
run() {
  "$@" >"$TMP/stdout" 2>"$TMP/stderr"
  rc=$?
}

# expect_output STATUS PATTERN -- CMD...: CMD exits STATUS and PATTERN (a fixed string; "" = anything) is in its
# stdout+stderr, which stays in $output for further checks.
expect_output() {
  local want=$1 pattern=$2
  shift 3
  local status
  output=$("$@" 2>&1)
  status=$?
  if [[ $status -ne $want ]]; then
    fail "'$*' exited $status, expected $want: $output"
  elif [[ -n "$pattern" ]] && ! grep -qF -- "$pattern" <<<"$output"; then
    fail "'$*' output lacks '$pattern': $output"
  else
    pass
  fi
}

# expect_ok CMD...: CMD succeeds (its output is shown only when it fails).
expect_ok() { expect_output 0 "" -- "$@"; }

# expect_same FILE1 FILE2 WHAT: the two files are byte-identical.
expect_same() {
  if cmp -s "$1" "$2"; then pass; else fail "$3: '$1' and '$2' differ"; fi
}

# test_end NAME: prints NAME and the counts; its status is 0 only when nothing failed.
test_end() {
  echo "$1: $passed passed, $failed failed"
  [[ $failed -eq 0 ]]
}
