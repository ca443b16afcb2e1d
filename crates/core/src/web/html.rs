//! A web page as Markdown, keeping what a reader came for: the page's `<main>` (or its biggest `<article>`, or
//! else the body without the site's header and footer), without scripts, styles, navigation, forms, sidebars
//! and anything the page itself hides. The conversion is `htmd`'s; this module only picks and prunes the tree.

use std::rc::Rc;

use htmd::HtmlToMarkdown;
use markup5ever_rcdom::{Node, NodeData};

/// Elements that never carry the page's content.
const NOT_CONTENT: &[&str] = &[
    "script", "style", "noscript", "template", "svg", "canvas", "iframe", "object", "embed", "form", "button",
    "select", "nav", "aside", "head", "link", "meta",
];

/// ARIA roles of page furniture.
const FURNITURE_ROLES: &[&str] = &["navigation", "banner", "contentinfo", "complementary", "search", "dialog"];

/// Elements nested deeper than this keep only their text. Everything after the parse walks the tree
/// recursively (here and in htmd), and a page of 100,000 nested `<div>`s would otherwise overflow the stack and
/// abort tandem.
const MAX_DEPTH: usize = 128;

/// A page's title and content as Markdown.
#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    pub title: Option<String>,
    pub markdown: String,
    /// Only the first [`MAX_PARSE_BYTES`] of the page were converted.
    pub cut: bool,
}

/// HTML given to the parser at most; the rest of a bigger page is left out (and said).
pub const MAX_PARSE_BYTES: usize = 1024 * 1024;

/// Past these (as a scan of the tags finds them) a page is not parsed but given as plain text. The parser's
/// cost grows with the depth of open elements times the tags, and each run of text re-opens every formatting
/// element still active (`<b>`, `<i>`, `<a>`…), so a small page can make millions of nodes.
const MAX_NESTING: usize = 400;
const MAX_OPEN_FORMATTING: usize = 8;
const MAX_TAGS: usize = 100_000;

/// Elements that take no end tag, or whose end tag may be left out (they close themselves): they don't nest.
const NOT_NESTING: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr", "p",
    "li", "dt", "dd", "option", "optgroup", "tr", "td", "th", "thead", "tbody", "tfoot", "colgroup", "rb", "rt", "rp",
    "caption", "!doctype",
];

/// The formatting elements the parser re-opens for each run of text.
const FORMATTING: &[&str] =
    &["a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u"];

/// Converts an HTML document to Markdown, keeping its main content. Only the first [`MAX_PARSE_BYTES`] are
/// read ([`Page::cut`] says so).
pub fn to_markdown(html: &str) -> Page {
    let cut = html.len() > MAX_PARSE_BYTES;
    let html = if cut {
        let mut end = MAX_PARSE_BYTES;
        while !html.is_char_boundary(end) {
            end -= 1;
        }
        &html[..end]
    } else {
        html
    };
    if let Some(why) = too_complex(html) {
        return Page {
            title: None,
            markdown: format!(
                "[The page {why}; its text follows without structure.]\n\n{}",
                squeeze_blank_lines(&strip_tags(html))
            ),
            cut,
        };
    }
    let converter = HtmlToMarkdown::builder().skip_tags(NOT_CONTENT.to_vec()).build();
    let Ok(document) = converter.html_to_tree(html) else {
        return Page { title: None, markdown: String::new(), cut };
    };
    limit_depth(&document, MAX_DEPTH);
    let title = find(&document, &|node| tag(node) == Some("title")).map(|node| text_of(&node)).and_then(|title| {
        let title = title.split_whitespace().collect::<Vec<_>>().join(" ");
        (!title.is_empty()).then_some(title)
    });
    prune(&document);
    let main = find(&document, &|node| tag(node) == Some("main") || attr(node, "role").as_deref() == Some("main"))
        .or_else(|| biggest_article(&document));
    let markdown = match main.map(|node| converter.tree_to_markdown(&node)).filter(|text| !text.trim().is_empty()) {
        Some(markdown) => markdown,
        None => {
            drop_site_chrome(&document);
            converter.tree_to_markdown(&document)
        }
    };
    Page { title, markdown: squeeze_blank_lines(&markdown), cut }
}

/// Why the tags of `html` are too much for the parser, if they are (a scan of the tags, not a parse): open
/// elements nested past [`MAX_NESTING`], more than [`MAX_OPEN_FORMATTING`] formatting elements open at once, or
/// more than [`MAX_TAGS`] tags. A `/>` closes nothing (HTML ignores it on all but void elements, which never
/// nest); an end tag closes the innermost open element of its name, and one that matches none is ignored.
fn too_complex(html: &str) -> Option<String> {
    let bytes = html.as_bytes();
    let mut open: Vec<String> = Vec::new();
    let mut formatting = 0usize;
    let mut tags = 0usize;
    let mut at = 0;
    while let Some(offset) = bytes[at..].iter().position(|&b| b == b'<') {
        at += offset + 1;
        if bytes[at..].starts_with(b"!--") {
            match html[at..].find("-->") {
                Some(end) => at += end + 3,
                None => break,
            }
            continue;
        }
        let closing = bytes.get(at) == Some(&b'/');
        let name_start = at + usize::from(closing);
        let name: String = bytes[name_start..]
            .iter()
            .take_while(|b| b.is_ascii_alphanumeric() || **b == b'!' || **b == b'-')
            .map(|b| b.to_ascii_lowercase() as char)
            .collect();
        if name.is_empty() {
            continue;
        }
        // The tag ends at its `>`; without one, nothing after it is a tag.
        let Some(end) = bytes[name_start..].iter().position(|&b| b == b'>') else { break };
        at = name_start + end + 1;
        tags += 1;
        if tags > MAX_TAGS {
            return Some(format!("has more than {MAX_TAGS} tags"));
        }
        if NOT_NESTING.contains(&name.as_str()) {
            continue;
        }
        if closing {
            if let Some(position) = open.iter().rposition(|tag| *tag == name) {
                formatting -= open[position..].iter().filter(|tag| FORMATTING.contains(&tag.as_str())).count();
                open.truncate(position);
            }
            continue;
        }
        if FORMATTING.contains(&name.as_str()) {
            formatting += 1;
            if formatting > MAX_OPEN_FORMATTING {
                return Some(format!("keeps more than {MAX_OPEN_FORMATTING} formatting elements open at once"));
            }
        }
        open.push(name);
        if open.len() > MAX_NESTING {
            return Some(format!("nests its elements more than {MAX_NESTING} deep"));
        }
    }
    None
}

/// The text of `html` with every tag removed (entities left as written).
fn strip_tags(html: &str) -> String {
    let mut text = String::with_capacity(html.len() / 2);
    let mut in_tag = false;
    for ch in html.chars() {
        match ch {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => text.push(ch),
            _ => {}
        }
    }
    text
}

/// Replaces the children of every node at `max` depth by one text node with their text, without recursion.
fn limit_depth(root: &Rc<Node>, max: usize) {
    let mut stack = vec![(root.clone(), 0usize)];
    while let Some((node, depth)) = stack.pop() {
        if depth < max {
            stack.extend(node.children.borrow().iter().map(|child| (child.clone(), depth + 1)));
            continue;
        }
        if node.children.borrow().is_empty() {
            continue;
        }
        let text = flat_text(&node);
        // rcdom drops a subtree without recursion.
        let dropped = std::mem::take(&mut *node.children.borrow_mut());
        drop(dropped);
        if !text.trim().is_empty() {
            let contents = std::cell::RefCell::new(text.as_str().into());
            node.children.borrow_mut().push(Node::new(NodeData::Text { contents }));
        }
    }
}

/// The text under `node` in document order, without recursion.
fn flat_text(node: &Rc<Node>) -> String {
    let mut text = String::new();
    let mut stack = vec![node.clone()];
    while let Some(next) = stack.pop() {
        if let NodeData::Text { contents } = &next.data {
            text.push_str(&contents.borrow());
        }
        stack.extend(next.children.borrow().iter().rev().cloned());
    }
    text
}

fn tag(node: &Node) -> Option<&str> {
    match &node.data {
        NodeData::Element { name, .. } => Some(&name.local),
        _ => None,
    }
}

fn attr(node: &Node, wanted: &str) -> Option<String> {
    match &node.data {
        NodeData::Element { attrs, .. } => {
            attrs.borrow().iter().find(|a| &*a.name.local == wanted).map(|a| a.value.to_string())
        }
        _ => None,
    }
}

/// The first node, in document order, that `wanted` accepts.
fn find(node: &Rc<Node>, wanted: &dyn Fn(&Node) -> bool) -> Option<Rc<Node>> {
    if wanted(node) {
        return Some(node.clone());
    }
    node.children.borrow().iter().find_map(|child| find(child, wanted))
}

fn text_of(node: &Node) -> String {
    let mut text = String::new();
    collect_text(node, &mut text);
    text
}

fn collect_text(node: &Node, out: &mut String) {
    if let NodeData::Text { contents } = &node.data {
        out.push_str(&contents.borrow());
    }
    for child in node.children.borrow().iter() {
        collect_text(child, out);
    }
}

/// Removes what the page hides (`hidden`, `aria-hidden="true"`) and page furniture marked by its role.
fn prune(node: &Node) {
    node.children.borrow_mut().retain(|child| {
        let hidden = attr(child, "hidden").is_some() || attr(child, "aria-hidden").as_deref() == Some("true");
        let furniture = attr(child, "role")
            .is_some_and(|role| FURNITURE_ROLES.contains(&role.trim().to_ascii_lowercase().as_str()));
        !(hidden || furniture)
    });
    for child in node.children.borrow().iter() {
        prune(child);
    }
}

fn biggest_article(document: &Rc<Node>) -> Option<Rc<Node>> {
    let mut articles = Vec::new();
    collect(document, &mut |node| tag(node) == Some("article"), &mut articles);
    articles.into_iter().max_by_key(|node| text_of(node).trim().len())
}

fn collect(node: &Rc<Node>, wanted: &mut dyn FnMut(&Node) -> bool, out: &mut Vec<Rc<Node>>) {
    if wanted(node) {
        out.push(node.clone());
        return;
    }
    for child in node.children.borrow().iter() {
        collect(child, wanted, out);
    }
}

/// Removes `<header>` and `<footer>` elements outside any `<article>`: the site's, not the content's.
fn drop_site_chrome(node: &Node) {
    if tag(node) == Some("article") {
        return;
    }
    node.children.borrow_mut().retain(|child| !matches!(tag(child), Some("header" | "footer")));
    for child in node.children.borrow().iter() {
        drop_site_chrome(child);
    }
}

fn squeeze_blank_lines(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut blank_run = 0;
    for line in text.lines() {
        if line.trim().is_empty() {
            blank_run += 1;
            if blank_run > 1 {
                continue;
            }
        } else {
            blank_run = 0;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<!doctype html><html><head><title>  Serde
        guide </title><style>body{color:red}</style><script>alert(1)</script></head>
        <body><header><a href="/">Site</a> <nav><a href="/a">A</a></nav></header>
        <div role="navigation">Breadcrumbs</div>
        <main><h1>Derive</h1><p>Use <code>#[derive(Serialize)]</code> on <a href="https://serde.rs/x">structs</a>.</p>
        <pre><code class="language-rust">fn main() {}
</code></pre><ul><li>one</li><li>two</li></ul>
        <div hidden>secret menu</div><div aria-hidden="true">icon</div>
        <form><input name=q><button>Go</button></form></main>
        <aside>Related</aside><footer>© 2026</footer></body></html>"#;

    #[test]
    fn the_main_content_becomes_markdown() {
        let page = to_markdown(PAGE);
        assert_eq!(page.title.as_deref(), Some("Serde guide"));
        let md = &page.markdown;
        assert!(md.starts_with("# Derive"), "{md}");
        assert!(md.contains("Use `#[derive(Serialize)]` on [structs](https://serde.rs/x)."), "{md}");
        assert!(md.contains("```rust\nfn main() {}\n```") || md.contains("```\nfn main() {}\n```"), "{md}");
        assert!(md.contains("*   one") || md.contains("- one") || md.contains("* one"), "{md}");
        for furniture in ["alert", "color:red", "Site", "Breadcrumbs", "secret", "icon", "Go", "Related", "2026"] {
            assert!(!md.contains(furniture), "{furniture} must be dropped: {md}");
        }
    }

    #[test]
    fn without_main_the_biggest_article_or_the_body_without_site_chrome() {
        let articles = "<body><article><p>short</p></article><article><h2>Long one</h2><p>much more text here</p></article></body>";
        assert!(to_markdown(articles).markdown.starts_with("## Long one"));
        let plain = "<body><header>Logo</header><h1>Hello</h1><section><header>Intro</header><p>x</p></section><footer>Contact</footer></body>";
        let md = to_markdown(plain).markdown;
        assert!(md.contains("# Hello") && md.contains('x'), "{md}");
        assert!(!md.contains("Logo") && !md.contains("Contact") && !md.contains("Intro"), "{md}");
        let article =
            "<body><header>Logo</header><article><header><h1>Title</h1>Byline</header><p>x</p></article></body>";
        let md = to_markdown(article).markdown;
        assert!(md.contains("# Title") && md.contains("Byline") && !md.contains("Logo"), "{md}");
    }

    #[test]
    fn a_page_nested_a_hundred_thousand_deep_is_text_not_a_crash_nor_a_hang() {
        let html =
            format!("<body><p>before</p>{}deep text{}</body>", "<div>".repeat(100_000), "</div>".repeat(100_000));
        let page = to_markdown(&html).markdown;
        assert!(page.starts_with("[The page nests its elements more than 400 deep"), "{page}");
        assert!(page.ends_with("before\ndeep text") || page.ends_with("beforedeep text"), "{page}");
        // Below the parse limit, what is deeper than the tree walks allow keeps its text.
        let html = format!("<body><p>before</p>{}deep text{}</body>", "<div>".repeat(390), "</div>".repeat(390));
        // The stack of a runtime's blocking thread, where WebFetch converts pages.
        let converted = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || to_markdown(&html).markdown)
            .unwrap()
            .join()
            .unwrap();
        assert!(converted.starts_with("before") && converted.ends_with("deep text"), "{converted}");
        assert_eq!(too_complex("<p>a<p>b<br><img src=x><li>c<div></div><!-- <div> -->"), None);
    }

    #[test]
    fn pages_that_would_make_the_parser_work_for_hours_are_plain_text() {
        let ignored_slash = "<div/>".repeat(1_000);
        assert!(too_complex(&ignored_slash).unwrap().contains("400 deep"), "HTML ignores /> on a div");
        let formatting: String =
            (0..20).map(|i| format!("<b id={i}>")).collect::<String>() + &"<div>x</div>".repeat(100);
        assert!(too_complex(&formatting).unwrap().contains("formatting"));
        let unmatched = format!("{}{}", "</span>".repeat(500), "<div>".repeat(401));
        assert!(too_complex(&unmatched).is_some(), "end tags that match nothing close nothing");
        // No `>` after a `<`: the scan stops instead of searching the rest again for every `<`.
        let started = std::time::Instant::now();
        assert_eq!(too_complex(&"</a".repeat(300_000)), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
        assert!(to_markdown(&formatting).markdown.starts_with("[The page keeps more than 8 formatting"));
        let big = format!("<p>{}</p>", "word ".repeat(300_000));
        let page = to_markdown(&big);
        assert!(page.cut && page.markdown.len() < MAX_PARSE_BYTES, "only the first megabyte is read");
    }

    #[test]
    fn text_that_is_not_html_survives() {
        assert_eq!(to_markdown("just text").markdown, "just text");
        assert_eq!(to_markdown("").markdown, "");
    }
}
