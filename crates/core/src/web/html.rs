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

/// A page's title and content as Markdown.
#[derive(Debug, PartialEq, Eq)]
pub struct Page {
    pub title: Option<String>,
    pub markdown: String,
}

/// Converts an HTML document to Markdown, keeping its main content.
pub fn to_markdown(html: &str) -> Page {
    let converter = HtmlToMarkdown::builder().skip_tags(NOT_CONTENT.to_vec()).build();
    let Ok(document) = converter.html_to_tree(html) else {
        return Page { title: None, markdown: String::new() };
    };
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
    Page { title, markdown: squeeze_blank_lines(&markdown) }
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
    fn text_that_is_not_html_survives() {
        assert_eq!(to_markdown("just text").markdown, "just text");
        assert_eq!(to_markdown("").markdown, "");
    }
}
