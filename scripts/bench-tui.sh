#!/usr/bin/env bash
# Whole-process figures of the full-screen app, driven in a pseudo-terminal (scripts/tui_probe.py):
#   1. first paint: spawn → status line on screen, answering the terminal queries like a terminal would
#      (device attributes only; kitty keyboard protocol too) and not answering them at all
#   2. idle RSS and CPU after first paint
#   3. memory growth over 500 turns against the zero-latency fake server (~1.5 KB Markdown answers, every
#      5th turn reads a file first), RSS after turn 10 and after turn 500
#   4. memory for one 20 MB answer (one paragraph): RSS before, peak, and once idle again
# Frame, ingest and diff times are criterion benches: `cargo bench -p tandem-tui` (crates/tui/benches).
# Usage: bash scripts/bench-tui.sh [RUNS] [TURNS]   (defaults 20 and 500). Needs python3.
# NO_BUILD=1 uses the release binaries already in target/release.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
turns=${2:-500}

if [ -z "${NO_BUILD:-}" ]; then cargo build --release -q -p tandem-tui -p tandem-testkit; fi
bin=$PWD/target/release/tandem
fake=$PWD/target/release/tandem-fake-llm
probe=$PWD/scripts/tui_probe.py

work=$(mktemp -d)
fake_pid=
cleanup() {
    if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

# Starts the fake server on a scenario file and exports its URL.
start_fake() {
    if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
    "$fake" --scenario "$1" > "$work/fake.out" &
    fake_pid=$!
    for _ in $(seq 200); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.05; done
    ANTHROPIC_BASE_URL=$(sed -n 's/^listening on //p' "$work/fake.out")
    [ -n "$ANTHROPIC_BASE_URL" ] || { echo "the fake server did not start" >&2; exit 1; }
    export ANTHROPIC_BASE_URL
}

mkdir -p "$work/project" "$work/config"
printf 'Notes for the parser:\n- keep the token window small\n- errors point at the first byte\n' > "$work/project/notes.txt"
export TANDEM_CONFIG_DIR="$work/config" ANTHROPIC_API_KEY=x

echo '{"replies": []}' > "$work/empty.json"
start_fake "$work/empty.json"
python3 "$probe" first-paint --tandem "$bin" --cwd "$work/project" --runs "$runs" --modes da kitty silent
python3 "$probe" idle --tandem "$bin" --cwd "$work/project"

python3 "$probe" scenario --turns "$turns" --read-file "$work/project/notes.txt" > "$work/turns.json"
start_fake "$work/turns.json"
echo "$turns turns (~1.5 KB answers, every 5th turn reads a file; --permission-mode acceptEdits):"
python3 "$probe" turns --tandem "$bin" --cwd "$work/project" --turns "$turns" -- --permission-mode acceptEdits

python3 "$probe" big-scenario --mb 20 > "$work/big.json"
start_fake "$work/big.json"
python3 "$probe" big-answer --tandem "$bin" --cwd "$work/project" --timeout 120
