#!/usr/bin/env bash
# Whole-process benchmarks of the real release binary, printing figures for docs/benchmarks.md:
#   1. a scripted read → edit → answer task against the zero-latency fake server (wall, CPU, max RSS)
#   2. `tandem --version` start-up time
#   3. Grep (through tandem's Grep tool, via its criterion bench) is in `cargo bench -p tandem-core`.
# Usage: bash scripts/bench-process.sh [RUNS]   (default 20)
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
print(json.dumps({"replies": demo["replies"] * int(sys.argv[1])}))
PY

"$fake" --scenario "$work/scenario.json" > "$work/fake.out" &
fake_pid=$!
for _ in $(seq 100); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.05; done
url=$(sed -n 's/^listening on //p' "$work/fake.out")

mkdir -p "$work/project" "$work/config"
cd "$work/project"
: > "$work/times"
for _ in $(seq "$runs"); do
    printf 'Hello, world\n' > hello.txt
    TANDEM_CONFIG_DIR="$work/config" ANTHROPIC_API_KEY=bench ANTHROPIC_BASE_URL="$url" \
        /usr/bin/time -f "%e %U %S %M" -a -o "$work/times" \
        "$bin" -p "Greet tandem instead" --permission-mode acceptEdits --output-format json > /dev/null
    grep -q "Hello, tandem" hello.txt || { echo "the edit did not happen" >&2; exit 1; }
done

echo "read → edit → answer task, $runs runs (median, [min – max]):"
python3 - "$work/times" <<'PY'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
wall = [r[0] for r in rows]; cpu = [r[1] + r[2] for r in rows]; rss = [r[3] / 1024 for r in rows]
def show(name, xs, unit, fmt):
    print(f"  {name:8} {statistics.median(xs):{fmt}} {unit}  [{min(xs):{fmt}} – {max(xs):{fmt}}]")
show("wall", wall, "s", ".3f"); show("cpu", cpu, "s", ".3f"); show("max RSS", rss, "MB", ".1f")
PY

echo "tandem --version, 200 runs:"
start=$(date +%s%N)
for _ in $(seq 200); do "$bin" --version > /dev/null; done
end=$(date +%s%N)
python3 -c "print(f'  mean {($end - $start) / 200 / 1e6:.2f} ms per run')"
if command -v hyperfine > /dev/null; then
    hyperfine -N --warmup 20 --runs 200 "$bin --version" 2>/dev/null | sed -n '2,3p'
fi
