#!/usr/bin/env bash
# Build the rr-tui wheel: the recorder library first (maturin builds the root crate's binary
# only), placed where the wheel installs it next to `rr-tui`, then the wheel, into
# target/wheels/. Needs maturin (pip install maturin). Usage: python/build-wheel.sh [maturin args]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked -p rr-recorder
mkdir -p python/rr_tui.data/scripts
install -m 755 target/release/librr_recorder.so python/rr_tui.data/scripts/librr_recorder.so
strip python/rr_tui.data/scripts/librr_recorder.so 2>/dev/null || true
maturin build --release --locked "$@"
ls -l target/wheels/
