# tandem's everyday commands. `just --list` shows them.

# Run tandem (the full-screen app; add `-- -p "prompt"` for headless mode).
run *ARGS:
    cargo run --release -- {{ARGS}}

# Run every test (the command CI runs).
test:
    cargo test --workspace

# Formatting and lints, as CI checks them.
lint:
    cargo fmt --all --check
    cargo clippy --workspace --all-targets -- -D warnings

# Format the code.
fmt:
    cargo fmt --all

# Benchmarks: criterion micro-benchmarks plus whole-process timings (figures go to docs/benchmarks.md).
bench:
    cargo bench -p tandem-core
    bash scripts/bench-process.sh

# Serve the demo scenario on a fixed port: then `ANTHROPIC_API_KEY=x ANTHROPIC_BASE_URL=http://127.0.0.1:8765 tandem -p "…"`.
fake scenario="assets/demo-scenario.json" port="8765":
    cargo run --release -p tandem-testkit --bin tandem-fake-llm -- --scenario {{scenario}} --port {{port}}

# Everything CI does.
ci:
    bash .ci/run
