//! WebFetch's page conversion: picking the main content of an HTML page and turning it into Markdown (html5ever's
//! parse, the pruning, htmd), for a typical documentation page and a large one.
//!
//! Run: `cargo bench -p tandem-core --bench web`. Prints figures; asserts nothing about time.

// Test code: a panic is how a failure is reported.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tandem_core::web::html::to_markdown;

/// A documentation-like page: navigation, a sidebar, and `sections` sections of prose, code and lists.
fn page(sections: usize) -> String {
    let mut html = String::from(
        "<html><head><title>Guide</title><script>var x = 1;</script><style>body{}</style></head><body>\
         <header><nav><a href='/'>Home</a> <a href='/docs'>Docs</a></nav></header><aside>Related links</aside><main>",
    );
    for i in 0..sections {
        html.push_str(&format!(
            "<h2 id='s{i}'>Section {i}</h2><p>Some <em>prose</em> about <a href='/x/{i}'>item {i}</a> with \
             <code>inline()</code> code, long enough to look like a real paragraph of documentation text.</p>\
             <pre><code class='language-rust'>fn example_{i}() {{\n    println!(\"{i}\");\n}}\n</code></pre>\
             <ul><li>first point</li><li>second point</li></ul>"
        ));
    }
    html.push_str("</main><footer>Footer</footer></body></html>");
    html
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("html to markdown");
    group.measurement_time(Duration::from_secs(5));
    for (name, sections) in [("doc page (~37 KiB)", 120), ("large page (~1.6 MiB)", 5_000)] {
        let html = page(sections);
        group.throughput(Throughput::Bytes(html.len() as u64));
        group.bench_function(name, |b| b.iter(|| to_markdown(&html)));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
