#!/usr/bin/env bash
# Whole-process benchmarks of the real release binary, printing figures for docs/benchmarks.md:
#   1. a scripted read → edit → answer task against the zero-latency fake server (wall, CPU, max RSS)
#   2. `tandem --version` start-up time
#   3. Grep (through tandem's Grep tool, via its criterion bench) is in `cargo bench -p tandem-core`.
# Usage: bash scripts/bench-process.sh [RUNS]   (default 20). Needs hyperfine and python3 (apt-get install hyperfine).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}

cargo build --release -q -p tandem-tui -p tandem-testkit
bin=$PWD/target/release/tandem
fake=$PWD/target/release/tandem-fake-llm

work=$(mktemp -d)
trap 'kill $fake_pid 2>/dev/null || true; rm -rf "$work"' EXIT

# The demo scenario (read → edit → answer) repeated once per run, with no delays.
python3 - "$runs" > "$work/scenario.json" <<'PY'
import json, sys
demo = json.load(open("assets/demo-scenario.json"))
for reply in demo["replies"]:
    reply.pop("delay_ms", None)
# Enough copies for the timed runs, hyperfine's warm-up and the RSS runs.
print(json.dumps({"replies": demo["replies"] * (3 * int(sys.argv[1]) + 10)}))
PY

"$fake" --scenario "$work/scenario.json" > "$work/fake.out" &
fake_pid=$!
for _ in $(seq 100); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$work/fake.out")

mkdir -p "$work/project" "$work/config"
cd "$work/project"
export TANDEM_CONFIG_DIR="$work/config" ANTHROPIC_API_KEY=bench ANTHROPIC_BASE_URL="$url"
task="$bin -p 'Greet tandem instead' --permission-mode acceptEdits --output-format json"

echo "read → edit → answer task against the zero-latency fake server:"
hyperfine -N --warmup 5 --runs "$runs" --prepare "sh -c 'printf \"Hello, world\\n\" > hello.txt'" "$task" 2>/dev/null | sed -n '2,3p'

: > "$work/times"
for _ in $(seq "$runs"); do
    printf 'Hello, world\n' > hello.txt
    /usr/bin/time -f "%e %U %S %M" -a -o "$work/times" \
        "$bin" -p "Greet tandem instead" --permission-mode acceptEdits --output-format json > /dev/null
    grep -q "Hello, tandem" hello.txt || { echo "the edit did not happen" >&2; exit 1; }
done
python3 - "$work/times" <<'PY'
import statistics, sys
rss = [float(line.split()[3]) / 1024 for line in open(sys.argv[1]) if line.strip()]
print(f"  max RSS: median {statistics.median(rss):.1f} MB  [{min(rss):.1f} – {max(rss):.1f}] over {len(rss)} runs")
PY

echo "tandem --version:"
hyperfine -N --warmup 20 --runs 200 "$bin --version" 2>/dev/null | sed -n '2,3p'
echo "release binary size: $(du -h "$bin" | cut -f1)"
