//! The Grep tool on a large generated source tree: 5,000 searched files (about 60 MB of Rust, Python,
//! TypeScript and Markdown) plus 1,300 files it must skip (`.gitignore`d `target/`, `node_modules/` and
//! `*.log`, and a hidden `.cache/`), searched through the public tool API as the agent calls it.
//!
//! The tree is deterministic (seeded generator), so figures can be compared with `rg` on the same tree:
//! `scripts/bench-grep.sh` sets `TANDEM_BENCH_TREE=/some/path` to generate the tree there and keep it (a tree
//! already there from an earlier run is reused), then times the equivalent `rg` commands. Without the variable
//! the tree lives in a temporary directory removed at the end.
//!
//! Run: `cargo bench -p tandem-core --bench grep`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};
use tandem_core::tools::{ToolContext, ToolRegistry};

const CRATES: usize = 25;
const MODULES: usize = 20;
const FILES_PER_MODULE: usize = 10;
/// Files of each ignored kind (under `target/`, `node_modules/`, `.cache/`).
const IGNORED_FILES: usize = 400;
const SEED: u64 = 42;
/// Written at the root of a generated tree; a tree with another marker is regenerated.
const MARKER: &str = ".tandem-bench-tree";
const MARKER_TEXT: &str = "tandem grep bench tree v2 (crates=25 modules=20 files=10 ignored=400 seed=42)\n";

/// The searches, with the `rg` command line that does the same (scripts/bench-grep.sh runs those).
const SEARCHES: &[(&str, &str, &str)] = &[
    // name, output_mode, pattern
    ("content_rare_literal", "content", r"TODO\(perf\)"),
    ("content_no_match", "content", "frobnicate_quux"),
    ("files_with_matches_regex", "files_with_matches", r"impl (Display|Debug) for \w+Error"),
];

const WORDS: &[&str] = &[
    "request", "buffer", "config", "session", "token", "stream", "parser", "handle", "index", "cache", "state",
    "value", "entry", "reader", "writer", "client", "server", "message", "event", "limit", "offset", "path",
];

struct Gen {
    rng: fastrand::Rng,
}

impl Gen {
    fn word(&mut self) -> &'static str {
        WORDS[self.rng.usize(0..WORDS.len())]
    }

    fn ident(&mut self) -> String {
        format!("{}_{}_{}", self.word(), self.word(), self.rng.u32(0..1000))
    }

    fn type_name(&mut self) -> String {
        let mut name = String::new();
        for word in [self.word(), self.word()] {
            name.push(word.as_bytes()[0].to_ascii_uppercase() as char);
            name.push_str(&word[1..]);
        }
        name
    }

    fn rust_line(&mut self, out: &mut String) {
        let line = match self.rng.u8(0..12) {
            0 => format!("pub fn {}(ctx: &mut Context, input: &[u8]) -> Result<usize> {{\n", self.ident()),
            1 => format!("    let {} = ctx.{}().get({})?;\n", self.ident(), self.word(), self.rng.u32(0..4096)),
            2 => format!("    if {}.len() > {} {{ return Err(Error::TooLong); }}\n", self.ident(), self.rng.u32(..)),
            3 => format!("    // Keeps the {} in sync with the {} before writing.\n", self.word(), self.word()),
            4 => format!("    tracing::debug!({} = %{}, \"{} updated\");\n", self.word(), self.ident(), self.word()),
            5 => format!("#[derive(Clone, Debug)]\npub struct {} {{ {}: u64 }}\n", self.type_name(), self.ident()),
            6 => format!("impl {} {{\n    pub fn new() -> Self {{ Self::default() }}\n}}\n", self.type_name()),
            7 if self.rng.u8(0..20) == 0 => {
                let kind = if self.rng.bool() { "Display" } else { "Debug" };
                format!("impl {kind} for {}Error {{\n", self.type_name())
            }
            8 => format!("use crate::{}::{{{}, {}}};\n", self.word(), self.type_name(), self.type_name()),
            9 => "    }\n}\n\n".to_string(),
            _ => format!("    {}.push({});\n", self.ident(), self.ident()),
        };
        out.push_str(&line);
    }

    fn python_line(&mut self, out: &mut String) {
        let line = match self.rng.u8(0..8) {
            0 => format!("def {}(self, {}, {}=None):\n", self.ident(), self.word(), self.word()),
            1 => {
                format!("    {} = self.{}.get(\"{}\", {})\n", self.ident(), self.word(), self.word(), self.rng.u32(..))
            }
            2 => format!("    # Keeps the {} in sync with the {}.\n", self.word(), self.word()),
            3 => format!("class {}({}):\n", self.type_name(), self.type_name()),
            4 => format!("    return {}({})\n", self.ident(), self.ident()),
            _ => format!("        self.{}.append({})\n", self.ident(), self.ident()),
        };
        out.push_str(&line);
    }

    fn ts_line(&mut self, out: &mut String) {
        let line = match self.rng.u8(0..8) {
            0 => format!("export function {}({}: {}): number {{\n", self.ident(), self.word(), self.type_name()),
            1 => format!("  const {} = await this.{}.get('{}');\n", self.ident(), self.word(), self.word()),
            2 => format!("  // Keeps the {} in sync with the {}.\n", self.word(), self.word()),
            3 => format!("interface {} {{ {}: string; {}: number }}\n", self.type_name(), self.word(), self.word()),
            4 => "}\n".to_string(),
            _ => format!("  {}.push({});\n", self.ident(), self.ident()),
        };
        out.push_str(&line);
    }

    fn markdown_line(&mut self, out: &mut String) {
        let line = match self.rng.u8(0..6) {
            0 => format!("## The {} {}\n\n", self.word(), self.word()),
            1 => format!("- `{}`: the {} of the {}.\n", self.ident(), self.word(), self.word()),
            _ => format!(
                "The {} reads the {} and writes the {} ({}).\n",
                self.word(),
                self.word(),
                self.word(),
                self.ident()
            ),
        };
        out.push_str(&line);
    }

    /// A file of `ext` of about 2–22 KB; one in 25 gets a `TODO(perf)` comment.
    fn file(&mut self, ext: &str) -> String {
        let size = self.rng.usize(2_000..22_000);
        let mut todo_at = (self.rng.u8(0..25) == 0).then(|| self.rng.usize(0..size));
        let mut out = String::with_capacity(size + 200);
        while out.len() < size {
            if todo_at.is_some_and(|at| out.len() >= at) {
                todo_at = None;
                let comment = match ext {
                    "py" => "#",
                    "md" => "-",
                    _ => "//",
                };
                out.push_str(&format!("{comment} TODO(perf): cache the {} lookup\n", self.word()));
            }
            match ext {
                "rs" => self.rust_line(&mut out),
                "py" => self.python_line(&mut out),
                "ts" | "js" => self.ts_line(&mut out),
                _ => self.markdown_line(&mut out),
            }
        }
        out
    }
}

/// Generates the tree at `root` (which must not exist or be empty); returns the bytes of the searched files.
fn generate(root: &Path) -> u64 {
    let mut g = Gen { rng: fastrand::Rng::with_seed(SEED) };
    let mut searched = 0;
    let write = |path: PathBuf, text: &str| {
        fs::create_dir_all(path.parent().expect("a parent")).expect("create a directory");
        fs::write(&path, text).expect("write a file");
    };
    fs::create_dir_all(root).expect("create the tree root");
    write(root.join(".gitignore"), "target/\nnode_modules/\n*.log\n");
    for c in 0..CRATES {
        for m in 0..MODULES {
            for f in 0..FILES_PER_MODULE {
                let ext = match (c * MODULES + m + f) % 10 {
                    0..=4 => "rs",
                    5..=7 => "py",
                    8 => "ts",
                    _ => "md",
                };
                let text = g.file(ext);
                searched += text.len() as u64;
                write(root.join(format!("crates/c{c:02}/src/m{m:02}/f{f}.{ext}")), &text);
            }
        }
    }
    for i in 0..IGNORED_FILES {
        write(root.join(format!("target/debug/build/b{}/out/gen{i}.rs", i % 20)), &g.file("rs"));
        write(root.join(format!("node_modules/pkg{}/lib/index{i}.js", i % 40)), &g.file("js"));
        write(root.join(format!(".cache/c{}/entry{i}.rs", i % 10)), &g.file("rs"));
    }
    for i in 0..IGNORED_FILES / 4 {
        write(root.join(format!("logs/run{i}.log")), &g.file("md"));
    }
    fs::write(root.join(MARKER), format!("{MARKER_TEXT}{searched}\n")).expect("write the marker");
    searched
}

/// The tree to search: `$TANDEM_BENCH_TREE` (generated there once and kept), or a temporary one.
fn tree() -> (PathBuf, u64, Option<tempfile::TempDir>) {
    let Some(root) = std::env::var_os("TANDEM_BENCH_TREE").filter(|p| !p.is_empty()).map(PathBuf::from) else {
        let dir = tempfile::tempdir().expect("a temp dir");
        let root = dir.path().join("tree");
        let bytes = generate(&root);
        return (root, bytes, Some(dir));
    };
    if let Ok(marker) = fs::read_to_string(root.join(MARKER)) {
        if let Some(bytes) = marker.strip_prefix(MARKER_TEXT).and_then(|rest| rest.trim().parse().ok()) {
            eprintln!("reusing the tree at {}", root.display());
            return (root, bytes, None);
        }
        // A tree from another version of this generator: ours to replace.
        fs::remove_dir_all(&root).expect("remove the old tree");
    } else if fs::read_dir(&root).is_ok_and(|mut entries| entries.next().is_some()) {
        panic!("TANDEM_BENCH_TREE={} is a non-empty directory that this bench did not generate", root.display());
    }
    eprintln!("generating the tree at {}", root.display());
    let bytes = generate(&root);
    (root, bytes, None)
}

fn input(root: &Path, mode: &str, pattern: &str) -> Value {
    json!({"pattern": pattern, "path": root.to_str().expect("a UTF-8 path"), "output_mode": mode})
}

fn bench_grep(c: &mut Criterion) {
    let (root, bytes, _temp) = tree();
    let rt = tokio::runtime::Builder::new_current_thread().build().expect("a tokio runtime");
    let ctx = ToolContext::new(root.clone());
    let grep = ToolRegistry::builtin().get("Grep").expect("Grep");
    eprintln!("tree: {} searched files, {bytes} bytes searched", CRATES * MODULES * FILES_PER_MODULE);

    // Check once that each search does the work measured: ignored files skipped, matches found.
    for &(name, mode, pattern) in SEARCHES {
        let out = rt.block_on(grep.run(input(&root, mode, pattern).into(), &ctx));
        assert!(!out.is_error, "{name}: {}", out.content);
        let relative = out.content.replace(root.to_str().expect("a UTF-8 path"), "");
        for skipped in ["/target/", "/node_modules/", "/.cache/", "/logs/"] {
            assert!(!relative.contains(skipped), "{name} searched an ignored file ({skipped})");
        }
        let lines = out.content.lines().count();
        let first = out.content.lines().next().unwrap_or_default();
        eprintln!("{name}: {lines} output lines; first: {first}");
    }

    let mut group = c.benchmark_group("grep_tree");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Bytes(bytes));
    for &(name, mode, pattern) in SEARCHES {
        let input = input(&root, mode, pattern);
        group.bench_function(name, |b| b.iter(|| rt.block_on(grep.run(input.clone().into(), &ctx))));
    }
    group.finish();
}

criterion_group!(benches, bench_grep);
criterion_main!(benches);
