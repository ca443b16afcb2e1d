#!/usr/bin/env bash
# tandem's Grep tool vs ripgrep on the same generated tree, printing figures for docs/benchmarks.md.
#
#   1. `cargo bench -p tandem-core --bench grep` with TANDEM_BENCH_TREE set: the bench generates its tree
#      there (5,000 searched files, ~60 MB, plus .gitignored and hidden files it must skip) and keeps it; a tree
#      already there from an earlier run is reused. Its figures are in-process: Grep tool call to formatted result.
#   2. hyperfine times the equivalent `rg` commands on that tree (whole processes, start-up included).
#   3. Both means side by side, with the ratio tandem / rg.
#
# Usage: bash scripts/bench-grep.sh [RG_RUNS]   (default 20)
# Needs rg, hyperfine, python3. Set TANDEM_BENCH_TREE to put the tree elsewhere (default: target/bench-grep-tree).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
target=${CARGO_TARGET_DIR:-$PWD/target}
tree=${TANDEM_BENCH_TREE:-$target/bench-grep-tree}
mkdir -p "$target"
tree=$(realpath -m "$tree")
for tool in rg hyperfine python3; do
    command -v "$tool" > /dev/null || { echo "bench-grep: $tool is not installed" >&2; exit 1; }
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The searches of crates/core/benches/grep.rs (SEARCHES): name, rg output flag, pattern. Keep the two in step.
searches=(
    "content_rare_literal|-n|TODO\\(perf\\)"
    "content_no_match|-n|frobnicate_quux"
    "files_with_matches_regex|-l|impl (Display|Debug) for \\w+Error"
)

echo "== tandem Grep (criterion, in-process), tree at $tree"
TANDEM_BENCH_TREE=$tree cargo bench -q -p tandem-core --bench grep 2>&1 | tee "$work/bench.log"

echo
echo "== rg $(rg --version | head -1 | cut -d' ' -f2) (hyperfine, whole process, $runs runs)"
rows=()
for search in "${searches[@]}"; do
    IFS='|' read -r name flag pattern <<< "$search"
    # Same rules as the Grep tool: .gitignore honoured outside a git repository, hidden and binary files skipped.
    cmd=(rg --no-require-git "$flag" "$pattern" "$tree")
    found=$("${cmd[@]}" | wc -l || true)
    echo "$name: rg ${cmd[*]:1} → $found lines"
    hyperfine -N -i --style basic --warmup 3 --runs "$runs" --export-json "$work/$name.json" \
        "$(printf '%q ' "${cmd[@]}")" > "$work/$name.hyperfine" 2>&1 || { cat "$work/$name.hyperfine"; exit 1; }
    grep -E "Time \(mean" "$work/$name.hyperfine" | sed 's/^ */  /'
    rows+=("$name")
done

echo
python3 - "$target/criterion/grep_tree" "$work" "${rows[@]}" <<'PY'
import json, sys
criterion, work, names = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"{'search':26} {'tandem Grep':>14} {'rg':>14} {'tandem / rg':>12}")
for name in names:
    est = json.load(open(f"{criterion}/{name}/new/estimates.json"))
    tandem = est["mean"]["point_estimate"] / 1e6  # ns → ms
    rg = json.load(open(f"{work}/{name}.json"))["results"][0]
    rg_mean, rg_sd = rg["mean"] * 1e3, (rg["stddev"] or 0) * 1e3
    print(f"{name:26} {tandem:11.1f} ms {rg_mean:8.1f} ±{rg_sd:4.1f} ms {tandem / rg_mean:11.2f}x")
print("\n(tandem: criterion mean of one Grep tool call, in-process; rg: hyperfine mean of the whole process)")
PY
