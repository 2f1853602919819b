#!/bin/sh
# run_cli.sh: every command-line test (tests/cli/*.sh), TEST_JOBS of them
# at a time (default 2: CI's machine has two cores, and most of these
# tests run one sanitized process at a time, so two at once halve their
# wall time), through tools/run_parallel.sh: a line as each test ends,
# then each test's whole output in name order; exits 1 when any test
# failed, naming them.  MEMPLAN, BUILD and CC pass through to each test.
exec sh tools/run_parallel.sh cli "${TEST_JOBS:-2}" 'sh "$1"' tests/cli/*.sh
