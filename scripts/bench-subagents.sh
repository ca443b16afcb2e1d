#!/usr/bin/env bash
# Whole-process cost of subagents: one prompt whose model starts N Task calls at once (default 8), each
# subagent streaming a 2 KB answer in 100 deltas 10 ms apart (about 1 s, like a fast model), against the
# fake server. Prints wall time, CPU (user+sys) and max RSS of the tandem process, for N and for 1 subagent,
# and checks that every answer came back.
# Usage: bash scripts/bench-subagents.sh [N] [RUNS]   (defaults 8 and 5). Needs python3 and /usr/bin/time.
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-8}
runs=${2:-5}

cargo build --release -q -p tandem-tui -p tandem-testkit
bin=$PWD/target/release/tandem
fake=$PWD/target/release/tandem-fake-llm
work=$(mktemp -d)
fake_pid=
trap 'kill $fake_pid 2>/dev/null || true; rm -rf "$work"' EXIT

measure() {
    local n=$1
    python3 - "$n" "$runs" > "$work/scenario.json" <<'PY'
import json, sys
n, runs = int(sys.argv[1]), int(sys.argv[2])
tasks = [{"type": "tool_use", "id": f"toolu_{i}", "name": "Task",
          "input": {"description": f"part {i}", "prompt": f"Look into part {i}.", "subagent_type": "Explore"}}
         for i in range(n)]
answer = {"blocks": [{"type": "text", "text": ("Part findings. " * 140)[:2048], "chunks": 100}], "delay_ms": 10}
one_run = [{"blocks": tasks}] + [answer] * n + [{"blocks": [{"type": "text", "text": "All parts done."}]}]
print(json.dumps({"replies": one_run * runs}))
PY
    kill $fake_pid 2>/dev/null || true
    "$fake" --scenario "$work/scenario.json" > "$work/fake.out" &
    fake_pid=$!
    for _ in $(seq 100); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.05; done
    local url
    url=$(sed -n 's/^listening on //p' "$work/fake.out")
    mkdir -p "$work/project" "$work/config"
    : > "$work/times"
    for _ in $(seq "$runs"); do
        (cd "$work/project" && TANDEM_CONFIG_DIR="$work/config" CLAUDE_CONFIG_DIR="$work/config/claude" \
            ANTHROPIC_API_KEY=bench ANTHROPIC_BASE_URL="$url" \
            /usr/bin/time -f "%e %U %S %M" -a -o "$work/times" \
            "$bin" -p "Look into every part" --output-format json > "$work/out.json")
        grep -q '"All parts done."' "$work/out.json" || { echo "the run did not finish" >&2; cat "$work/out.json" >&2; exit 1; }
    done
    python3 - "$work/times" "$n" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
wall = statistics.median(r[0] for r in rows)
cpu = statistics.median(r[1] + r[2] for r in rows)
rss = statistics.median(r[3] / 1024 for r in rows)
print(f"  {sys.argv[2]} subagent(s): wall {wall:.2f} s, CPU {cpu*1000:.0f} ms, max RSS {rss:.1f} MB (median of {len(rows)})")
PY
}

echo "subagents streaming at once (release binary, fake server):"
measure 1
measure "$count"
