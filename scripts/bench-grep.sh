#!/usr/bin/env bash
# tandem's Grep tool vs ripgrep on the same generated tree, printing figures for docs/benchmarks.md.
#
#   1. `cargo bench -p tandem-core --bench grep` with TANDEM_BENCH_TREE set: the bench generates its tree
#      there (5,000 searched files, ~60 MB, plus .gitignored and hidden files it must skip) and keeps it; a tree
#      already there from an earlier run is reused. Its figures are in-process: Grep tool call to formatted result.
#   2. hyperfine times the equivalent `rg` commands on that tree (whole processes, start-up included).
#   3. Both medians side by side, with the ratio tandem / rg.
#
# Usage: bash scripts/bench-grep.sh [RG_RUNS]   (default 20)
# Needs rg, hyperfine, python3. Set TANDEM_BENCH_TREE to put the tree elsewhere (default:
# $TMPDIR/tandem-bench-grep-tree, outside the repository so that no parent .gitignore applies to it).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-20}
target=${CARGO_TARGET_DIR:-$PWD/target}
tree=$(realpath -m "${TANDEM_BENCH_TREE:-${TMPDIR:-/tmp}/tandem-bench-grep-tree}")
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
rg_version=$(rg --version)
rg_version=${rg_version%%$'\n'*}
echo "== $rg_version (hyperfine, whole process, $runs runs)"
rows=()
for search in "${searches[@]}"; do
    IFS='|' read -r name flag pattern <<< "$search"
    # Same rules as the Grep tool: .gitignore honoured outside a git repository, hidden and binary files skipped.
    cmd=(rg --no-require-git "$flag" "$pattern" "$tree")
    rc=0
    found=$("${cmd[@]}" | wc -l) || rc=$?
    [ "$rc" -le 1 ] || { echo "bench-grep: ${cmd[*]} failed" >&2; exit 1; }
    echo "$name: ${cmd[*]}  → $found lines"
    # rg exits 1 when nothing matches; only then may hyperfine ignore the exit status.
    ignore=()
    [ "$found" -gt 0 ] || ignore=(--ignore-failure)
    hyperfine -N "${ignore[@]}" --style basic --warmup 3 --runs "$runs" --export-json "$work/$name.json" \
        "rg --no-require-git $flag '$pattern' '$tree'" > "$work/$name.hyperfine" 2>&1 ||
        { cat "$work/$name.hyperfine"; exit 1; }
    grep -E "Time \(mean" "$work/$name.hyperfine" | sed 's/^ */  /'
    rows+=("$name")
done

# What of rg's time is process start-up rather than search: the same command on an empty directory.
mkdir "$work/empty"
hyperfine -N --ignore-failure --style basic --warmup 3 --runs "$runs" --export-json "$work/startup.json" \
    "rg --no-require-git -n frobnicate_quux '$work/empty'" > "$work/startup.hyperfine" 2>&1 ||
    { cat "$work/startup.hyperfine"; exit 1; }

echo
python3 - "$target/criterion/grep_tree" "$work" "${rows[@]}" <<'PY'
import json, sys
criterion, work, names = sys.argv[1], sys.argv[2], sys.argv[3:]
# Medians, and the fastest sample (a criterion sample is the mean of several calls): on a shared machine the
# odd slow run moves a mean, rarely a median and never a minimum.
print(f"{'search':26} {'tandem Grep':>12} {'rg':>10} {'tandem / rg':>12}   {'min: tandem':>11} {'rg':>8} {'ratio':>6}")
for name in names:
    tandem = json.load(open(f"{criterion}/{name}/new/estimates.json"))["median"]["point_estimate"] / 1e6  # ns → ms
    sample = json.load(open(f"{criterion}/{name}/new/sample.json"))
    tandem_min = min(t / n for t, n in zip(sample["times"], sample["iters"])) / 1e6
    rg = json.load(open(f"{work}/{name}.json"))["results"][0]
    rg_median, rg_min = rg["median"] * 1e3, rg["min"] * 1e3  # s → ms
    print(f"{name:26} {tandem:9.1f} ms {rg_median:7.1f} ms {tandem / rg_median:11.2f}x   "
          f"{tandem_min:8.1f} ms {rg_min:5.1f} ms {tandem_min / rg_min:5.2f}x")
startup = json.load(open(f"{work}/startup.json"))["results"][0]["median"] * 1e3
print(f"\nrg start-up (same command on an empty directory): {startup:.1f} ms")
print("(medians; tandem: one Grep tool call in-process, by criterion; rg: the whole process, by hyperfine)")
PY
