#!/usr/bin/env bash
# Build the rr-tui wheel into target/wheels/. Needs maturin (pip install maturin).
# Usage: python/build-wheel.sh [maturin args]
#
# The README's build comes first, as it is (`cargo build --release` at the root: every member,
# so rr-tui and librr_recorder.so): after that build it has nothing to do, and the recorder comes
# from it. Building the recorder alone (`-p rr-recorder`) would unify other features for shared
# crates and recompile them, and the whole recorder above them. maturin then builds the root
# crate's binary only (which reuses everything but the stripped executable's link) and packs the
# recorder from python/rr_tui.data, next to `rr-tui`, where `record` looks for it.
#
# maturin reads the manifests of every platform's dependencies (`cargo metadata` without a
# platform filter): once those are on this machine, it runs offline and fetches nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked
mkdir -p python/rr_tui.data/scripts
install -m 755 target/release/librr_recorder.so python/rr_tui.data/scripts/librr_recorder.so
strip python/rr_tui.data/scripts/librr_recorder.so 2>/dev/null || true
offline=()
if cargo metadata --offline --locked --format-version 1 >/dev/null 2>&1; then
  offline=(--offline)
else
  echo "build-wheel: fetching the crates of other platforms once (maturin reads their manifests)" >&2
fi
# build.rs reruns when PATH changes (it looks for the tests' tools), and rr-tui with it; pyenv's
# shims put directories of their own in front of PATH for what they start. So maturin is started
# from where pip put it for python3 (when there), and cargo sees the PATH the build above saw.
maturin=maturin
scripts=$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))' 2>/dev/null || true)
if [ -n "$scripts" ] && [ -x "$scripts/maturin" ]; then
  maturin="$scripts/maturin"
fi
"$maturin" build --release --locked "${offline[@]}" "$@"
ls -l target/wheels/
