#!/usr/bin/env bash
# One part of the GPU suite in this process: bash tests/gpu/run-part.sh NAME [RR-TUI]
# (run-suite.sh and run-parts.sh call it; tests/gpu/parts.sh lists the parts). Sources
# tests/gpu/suite-lib.sh, checks what the part needs, sources the part's script and ends with
# "PART NAME: N passed, N failed, N skipped" (exit status 1 when a check failed).
cd "$(dirname "$0")/../.." || exit 2
source tests/gpu/parts.sh
NAME=${1:?usage: run-part.sh NAME [RR-TUI]}
FILE=$(part_field "$NAME" 2) || { echo "run-part.sh: no part named '$NAME' (tests/gpu/run-suite.sh --list)" >&2; exit 2; }
NEEDS=$(part_field "$NAME" 4)
PART=$NAME
source tests/gpu/suite-lib.sh "${2:-}"
echo "== part $PART: $(part_field "$NAME" 5)" | tee -a "$LOG"
missing=""
if [ ! -x "$RR" ]; then
  bad "rr-tui binary" "$RR is not an executable (build it: cargo build --release, and carry it)"
else
  # shellcheck disable=SC2086
  missing=$(what_missing ${NEEDS//,/ })
  [ -n "$missing" ] && skip "part $PART" "$missing"
fi
if [ -x "$RR" ] && [ -z "$missing" ]; then
  # shellcheck disable=SC1090
  source "tests/gpu/$FILE"
fi
summary
