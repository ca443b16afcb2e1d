#!/usr/bin/env bash
# What a deny rule naming a big directory costs the calls judged: a workspace with vendor/ holding 9,500 files
# (95 directories of 100, all older than the scans' 2 s settling time), and a headless session of 20 calls
# (7 Read, 7 Grep of src, 6 `ls src`), run with and without `Read(vendor/**)` — whose directory is searched for
# the links in it (their targets are covered too). Prints the wall time of each run.
# Usage: bash scripts/bench-rule-links.sh [RUNS] (default 3). NO_BUILD=1 uses the binaries in target/release;
# TANDEM_BIN=path measures another tandem (TANDEM_FAKE=path another fake server).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
if [ -z "${NO_BUILD:-}" ]; then cargo build --release -q -p tandem-tui -p tandem-testkit; fi
bin=${TANDEM_BIN:-$PWD/target/release/tandem}
fake=${TANDEM_FAKE:-$PWD/target/release/tandem-fake-llm}
# Outside /tmp: a workspace there makes every sandboxed command list /tmp (never settled) to split around it.
mkdir -p target/bench
work=$(mktemp -d -p "$PWD/target/bench")
trap 'rm -rf "$work"' EXIT
ws=$work/ws
mkdir -p "$ws/src"
echo 'fn main() {}' > "$ws/src/main.rs"
for d in $(seq 1 95); do mkdir -p "$ws/vendor/d$d"; for f in $(seq 1 100); do : > "$ws/vendor/d$d/f$f"; done; done
find "$ws/vendor" -exec touch -h -d '1 hour ago' {} +
python3 - "$work/scenario.json" "$ws" <<'PY'
import json, sys
path, ws = sys.argv[1], sys.argv[2]
calls = [("Read", {"file_path": f"{ws}/src/main.rs"}), ("Grep", {"pattern": "main", "path": "src"}),
         ("Bash", {"command": "ls src"})]
replies = [{"blocks": [{"type": "tool_use", "id": f"t{i}", "name": calls[i % 3][0], "input": calls[i % 3][1]}]}
           for i in range(20)]
replies.append({"blocks": [{"type": "text", "text": "Done."}]})
json.dump({"replies": replies}, open(path, "w"))
PY
for rules in '{}' '{"permissions": {"deny": ["Read(vendor/**)"]}}'; do
    mkdir -p "$ws/.claude"; echo "$rules" > "$ws/.claude/settings.json"
    for run in $(seq 1 "$runs"); do
        port_file=$work/port; "$fake" --scenario "$work/scenario.json" > "$port_file" & fake_pid=$!
        while ! grep -q listening "$port_file" 2>/dev/null; do sleep 0.05; done
        url=$(sed -n 's/listening on //p' "$port_file")
        start=$(date +%s.%N)
        (cd "$ws" && ANTHROPIC_API_KEY=bench TANDEM_CONFIG_DIR=$work/cfg TANDEM_DATA_DIR=$work/data \
            "$bin" -p go --provider anthropic --base-url "$url" --model claude-sonnet-4-5 --permission-mode acceptEdits \
            --output-format json > /dev/null)
        end=$(date +%s.%N)
        kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true
        printf '%-60s run %d: %.2f s\n' "rules: $rules" "$run" "$(echo "$end - $start" | bc)"
    done
done
