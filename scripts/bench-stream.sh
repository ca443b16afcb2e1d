#!/usr/bin/env bash
# Whole-process cost of drawing a streaming answer: the release binary in tmux at 120×40, the fake server
# streaming one 46 KB Markdown answer (120 sections, each a heading, a paragraph, a list and a Rust code block)
# in 3,000 deltas with a pause between SSE events (~7 s in all). Prints tandem's CPU time (utime + stime from
# /proc) for the whole run and per second of stream, and the wall time from Enter to the last line on screen.
# Usage: bash scripts/bench-stream.sh [RUNS] [DELAY_MS] [DELTAS]   (defaults 3, 2 and 3000). Needs tmux.
# NO_BUILD=1 uses the release binaries already in target/release; TANDEM_BIN=path measures another tandem.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
delay=${2:-2}
deltas=${3:-3000}

if [ -z "${NO_BUILD:-}" ]; then cargo build --release -q -p tandem-tui -p tandem-testkit; fi
bin=${TANDEM_BIN:-$PWD/target/release/tandem}
fake=$PWD/target/release/tandem-fake-llm
work=$(mktemp -d)
session=tandem-bench-stream-$$
fake_pid=
cleanup() {
    tmux kill-session -t "$session" 2>/dev/null || true
    if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT

python3 - "$work/stream.json" "$runs" "$delay" "$deltas" <<'PY'
import json, sys
path, runs, delay, deltas = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
sections = []
for n in range(1, 121):
    sections.append(
        f"## Section {n}: the window\n\n"
        f"Step {n} keeps the look-ahead window small and refills it lazily, once per peek.\n\n"
        f"- ring buffer of {n % 7 + 2} tokens\n- refill on peek\n- byte offsets in errors\n\n"
        "```rust\n"
        f"fn refill_{n}(&mut self) -> Result<(), LexError> {{\n"
        "    while self.window.len() < LOOKAHEAD {\n"
        "        let token = self.next_raw()?;\n"
        "        self.window.push_back(token);\n"
        "    }\n"
        "    Ok(())\n"
        "}\n"
        "```\n\n"
    )
text = "".join(sections) + "stream-complete"
reply = {"blocks": [{"type": "text", "text": text, "chunks": deltas}], "delay_ms": delay}
json.dump({"replies": [reply] * runs}, open(path, "w"))
print(f"answer: {len(text)} bytes in {deltas} deltas, {delay} ms between SSE events")
PY

"$fake" --scenario "$work/stream.json" > "$work/fake.out" &
fake_pid=$!
for _ in $(seq 200); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.05; done
base_url=$(sed -n 's/^listening on //p' "$work/fake.out")
mkdir -p "$work/project" "$work/config"

ticks=$(getconf CLK_TCK)
cpu_of() { awk -v t="$ticks" '{ sub(/.*\) /, ""); split($0, f, " "); printf "%.3f", (f[12] + f[13]) / t }' "/proc/$1/stat"; }

for run in $(seq "$runs"); do
    tmux kill-session -t "$session" 2>/dev/null || true
    tmux new-session -d -s "$session" -x 120 -y 40 -c "$work/project" \
        "env TANDEM_CONFIG_DIR=$work/config ANTHROPIC_API_KEY=x ANTHROPIC_BASE_URL=$base_url TERM=xterm-256color $bin"
    for _ in $(seq 100); do
        tmux capture-pane -p -t "$session" | grep -q "Ask tandem anything" && break
        sleep 0.05
    done
    # The pane's shell execs env, which execs tandem: the pane's process is tandem.
    pid=$(tmux display -p -t "$session" '#{pane_pid}')
    [ "$(readlink "/proc/$pid/exe")" = "$(readlink -f "$bin")" ] || { echo "pane process is $(cat "/proc/$pid/comm"), not tandem" >&2; exit 1; }
    before=$(cpu_of "$pid")
    start=$(date +%s.%N)
    tmux send-keys -t "$session" "Explain the window refill, section by section." Enter
    for _ in $(seq 1200); do
        tmux capture-pane -p -t "$session" | grep -q "stream-complete" && break
        sleep 0.05
    done
    end=$(date +%s.%N)
    sleep 0.3
    after=$(cpu_of "$pid")
    awk -v b="$before" -v a="$after" -v s="$start" -v e="$end" -v r="$run" 'BEGIN {
        cpu = a - b; wall = e - s;
        printf "run %d: stream on screen in %.2f s, tandem CPU %.2f s (%.0f ms per second of stream)\n", r, wall, cpu, cpu / wall * 1000 }'
    tmux kill-session -t "$session"
done
