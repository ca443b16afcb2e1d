#!/usr/bin/env bash
# Start-up cost of MCP servers: `tandem -p hi` against the zero-latency fake server, with no MCP server and with
# five `tandem-fake-mcp` stdio servers given by --mcp-config. Prints median, min and max wall time of RUNS timed
# runs (after one warm-up) for each, release build.
# Usage: bash scripts/bench-mcp.sh [RUNS]   (default 15). Needs python3.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-15}

cargo build --release -q -p tandem-tui -p tandem-testkit
bin=$PWD/target/release/tandem
fake=$PWD/target/release/tandem-fake-llm
mcp=$PWD/target/release/tandem-fake-mcp
work=$(mktemp -d)
fake_pid=
trap 'kill $fake_pid 2>/dev/null || true; rm -rf "$work"' EXIT

python3 - "$runs" > "$work/scenario.json" <<'PY'
import json, sys
print(json.dumps({"replies": [{"blocks": [{"type": "text", "text": "hello"}]}] * (2 * (int(sys.argv[1]) + 1))}))
PY
"$fake" --scenario "$work/scenario.json" > "$work/fake.out" &
fake_pid=$!
for _ in $(seq 100); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$work/fake.out")
five=$(python3 -c "import json,sys; print(json.dumps({'mcpServers': {f's{i}': {'command': sys.argv[1], 'args': ['--name', f's{i}']} for i in range(5)}}))" "$mcp")
mkdir -p "$work/project" "$work/config"

python3 - "$bin" "$url" "$work" "$runs" "$five" <<'PY'
import os, statistics, subprocess, sys, time
bin, url, work, runs, five = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
env = dict(os.environ, ANTHROPIC_API_KEY="x", ANTHROPIC_BASE_URL=url, TANDEM_CONFIG_DIR=f"{work}/config",
           CLAUDE_CONFIG_DIR=f"{work}/config/claude")
for label, extra in [("none", []), ("5 stdio", ["--mcp-config", five])]:
    times = []
    for i in range(runs + 1):
        start = time.perf_counter()
        subprocess.run([bin, "-p", "hi", *extra], cwd=f"{work}/project", env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if i:
            times.append((time.perf_counter() - start) * 1000)
    print(f"{label:8} median {statistics.median(times):6.1f} ms  min {min(times):6.1f} ms  max {max(times):6.1f} ms")
PY
