#!/usr/bin/env bash
# Whole-process memory of one Edit (and optionally one Write) of a large file, headless:
# `tandem -p --permission-mode acceptEdits` against the fake server, which replies Read → Edit → "Done.".
# Prints the process's max RSS (/usr/bin/time) next to the file's size.
# Usage: bash scripts/bench-large-edit.sh [MB] [write]   (default 300 MB; `write` also measures a Write of it)
# NO_BUILD=1 uses the release binaries already in target/release.
set -euo pipefail
cd "$(dirname "$0")/.."
mb=${1:-300}
if [ -z "${NO_BUILD:-}" ]; then cargo build --release -q -p tandem-tui -p tandem-testkit; fi
bin=$PWD/target/release/tandem
fake=$PWD/target/release/tandem-fake-llm

work=$(mktemp -d)
fake_pid=
cleanup() {
    if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
    rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/project" "$work/config"

python3 - "$work" "$mb" "${2:-}" <<'PY'
import json, sys
work, mb, write = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "write"
line = "let value = compute(alpha, beta, gamma); // a line of ordinary source code\n"
count = mb * 1_000_000 // len(line)
with open(f"{work}/big.rs", "w") as out:
    for n in range(count):
        out.write("fn needle_to_change() {}\n" if n == count // 2 else line)
path = f"{work}/project/big.rs"
read = {"blocks": [{"type": "tool_use", "name": "Read", "input": {"file_path": path}}]}
done = {"blocks": [{"type": "text", "text": "Done."}]}
edit = {"type": "tool_use", "name": "Edit",
        "input": {"file_path": path, "old_string": "fn needle_to_change() {}", "new_string": "fn needle_changed() {}"}}
json.dump({"replies": [read, {"blocks": [edit]}, done]}, open(f"{work}/edit.json", "w"))
if write:
    content = open(f"{work}/big.rs").read().replace("needle_to_change", "needle_rewritten")
    # Streamed the way the real API streams a tool input: many small `input_json_delta`s (16 KB here).
    block = {"type": "tool_use", "name": "Write", "input": {"file_path": path, "content": content},
             "chunks": max(1, len(content) // 16384)}
    json.dump({"replies": [read, {"blocks": [block]}, done]}, open(f"{work}/write.json", "w"))
PY

run() {
    local scenario=$1 expect=$2
    cp "$work/big.rs" "$work/project/big.rs"
    "$fake" --scenario "$work/$scenario.json" > "$work/fake.out" &
    fake_pid=$!
    for _ in $(seq 600); do grep -q listening "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
    local url
    url=$(sed -n 's/^listening on //p' "$work/fake.out")
    (cd "$work/project" && TANDEM_CONFIG_DIR="$work/config" ANTHROPIC_API_KEY=x ANTHROPIC_BASE_URL="$url" \
        /usr/bin/time -f "  $scenario of a $mb MB file: max RSS %M kB, wall %e s" \
        "$bin" -p "change it" --permission-mode acceptEdits --output-format text > /dev/null)
    grep -q "$expect" "$work/project/big.rs" || { echo "  the $scenario did not happen" >&2; exit 1; }
    kill "$fake_pid"; wait "$fake_pid" 2>/dev/null || true; fake_pid=
}
run edit needle_changed
if [ "${2:-}" = write ]; then run write needle_rewritten; fi
