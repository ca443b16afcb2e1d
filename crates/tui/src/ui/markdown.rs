//! Assistant text as Markdown in a terminal: styled lines, already wrapped to a width.
//!
//! The transcript takes a message's height to be its number of lines, so everything here (paragraphs, list
//! items with hanging indents, quotes, code, tables) comes out at most `width` columns wide. Answers arrive
//! streamed, so any prefix of a document must render sensibly: pulldown-cmark closes whatever is still open
//! at the end of its input (an unclosed fence becomes a code block running to the end), and nothing here
//! assumes a block is complete.
//!
//! One pass over the parser's events, with no look-back over the output, keeps a long answer linear.

mod code;
mod partial;
mod table;
#[cfg(test)]
mod tests;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};
use std::borrow::Cow;

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use unicode_segmentation::UnicodeSegmentation;

use super::theme::Theme;
use super::wrap::{width as text_width, wrap_line_into};
use code::fence_lang;
pub use code::{CodeBlock, code_blocks};
pub(crate) use partial::close_open_inline;
use table::TableState;

/// The parser extensions this module understands; other syntax stays literal text.
pub(crate) fn markdown_options() -> Options {
    Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS
}

/// Renders Markdown `text` as styled lines, each at most `width` columns (0 counts as 1). Blocks are
/// separated by one blank line; there is none at the start or the end.
pub fn render_markdown(text: &str, width: usize, theme: &Theme) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    render_markdown_into(text, width, theme, &mut |line| lines.push(line));
    lines
}

/// [`render_markdown`], handing each line to `out` as it is laid out: a long answer is never held whole as
/// lines on top of wherever they are kept.
pub fn render_markdown_into(text: &str, width: usize, theme: &Theme, out: &mut dyn FnMut(Line<'static>)) {
    let mut renderer = Renderer::new(width.max(1), theme, out);
    for event in Parser::new_ext(text, markdown_options()) {
        renderer.event(event);
    }
    renderer.finish();
}

/// Blocks that nest and put something before each of their lines.
enum Container {
    /// `│ ` on every line.
    Quote,
    /// The marker on the item's first line, as many spaces on the others (the hanging indent).
    Item { marker: Span<'static>, cols: usize, used: bool },
}

/// An open list: the next number for ordered ones.
struct List {
    next: Option<u64>,
}

/// An open link or image: where it points and the text shown for it so far.
struct Link {
    dest: String,
    text: String,
    image: bool,
}

/// A code block being collected.
struct Code {
    lang: Option<String>,
    text: String,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    out: &'t mut dyn FnMut(Line<'static>),
    /// Whether a line has gone out yet (no blank line before the first block).
    emitted: bool,
    containers: Vec<Container>,
    lists: Vec<List>,
    /// The pending paragraph's logical lines (split at hard breaks), not yet wrapped.
    inline: Vec<Vec<Span<'static>>>,
    /// Style patches of open inline tags (emphasis, links…), applied over the block's base style.
    styles: Vec<Style>,
    links: Vec<Link>,
    in_heading: bool,
    code: Option<Code>,
    html: Option<String>,
    table: Option<TableState>,
    /// A block ended: the next line emitted is preceded by a blank one, prefixed by the containers that
    /// were open at both times (a quote's `│` continues across its paragraphs, not into the next block).
    pending_blank: bool,
    blank_depth: usize,
}

impl<'t> Renderer<'t> {
    fn new(width: usize, theme: &'t Theme, out: &'t mut dyn FnMut(Line<'static>)) -> Self {
        Renderer {
            theme,
            width,
            out,
            emitted: false,
            containers: Vec::new(),
            lists: Vec::new(),
            inline: Vec::new(),
            styles: Vec::new(),
            links: Vec::new(),
            in_heading: false,
            code: None,
            html: None,
            table: None,
            pending_blank: false,
            blank_depth: 0,
        }
    }

    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) | Event::InlineMath(text) | Event::DisplayMath(text) => self.text(&text),
            Event::Code(code) => self.inline_code(&code),
            Event::Html(html) | Event::InlineHtml(html) => match self.html.as_mut() {
                Some(block) => block.push_str(&html),
                None => self.text(&html),
            },
            Event::FootnoteReference(label) => self.text(&format!("[^{label}]")),
            Event::SoftBreak => self.text(" "),
            Event::HardBreak => {
                if self.table.is_some() {
                    self.text(" ");
                } else {
                    self.inline.push(Vec::new());
                }
            }
            Event::Rule => {
                self.flush_inline();
                let rule = "─".repeat(self.avail());
                self.emit(vec![Span::styled(rule, self.theme.dim)]);
                self.block_done();
            }
            Event::TaskListMarker(done) => self.task_marker(done),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.flush_inline(),
            Tag::Heading { .. } => {
                self.flush_inline();
                self.in_heading = true;
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush_inline();
                let lang = match kind {
                    CodeBlockKind::Fenced(info) => fence_lang(&info),
                    CodeBlockKind::Indented => None,
                };
                self.code = Some(Code { lang, text: String::new() });
            }
            Tag::HtmlBlock => {
                self.flush_inline();
                self.html = Some(String::new());
            }
            Tag::List(start) => {
                self.flush_inline();
                self.lists.push(List { next: start });
            }
            Tag::Item => {
                self.flush_inline();
                self.start_item();
            }
            Tag::Table(alignments) => {
                self.flush_inline();
                self.table = Some(TableState::new(alignments));
            }
            Tag::TableHead => {
                if let Some(table) = self.table.as_mut() {
                    table.in_head = true;
                }
            }
            Tag::TableRow | Tag::TableCell => self.inline.clear(),
            Tag::Emphasis => self.styles.push(Style::new().add_modifier(Modifier::ITALIC)),
            Tag::Strong => self.styles.push(Style::new().add_modifier(Modifier::BOLD)),
            Tag::Strikethrough => self.styles.push(Style::new().add_modifier(Modifier::CROSSED_OUT)),
            Tag::Superscript | Tag::Subscript => self.styles.push(Style::new()),
            Tag::Link { dest_url, .. } => self.start_link(dest_url.to_string(), false),
            Tag::Image { dest_url, .. } => self.start_link(dest_url.to_string(), true),
            Tag::FootnoteDefinition(_)
            | Tag::DefinitionList
            | Tag::DefinitionListTitle
            | Tag::DefinitionListDefinition
            | Tag::MetadataBlock(_) => self.flush_inline(),
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush_inline();
                self.block_done();
            }
            TagEnd::Heading(_) => {
                self.flush_inline();
                self.in_heading = false;
                self.block_done();
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.pop_container();
                self.block_done();
            }
            TagEnd::CodeBlock => {
                if let Some(code) = self.code.take() {
                    self.code_block(code);
                }
                self.block_done();
            }
            TagEnd::HtmlBlock => {
                if let Some(html) = self.html.take() {
                    for line in html.trim_end_matches('\n').split('\n') {
                        self.inline.push(vec![Span::styled(printable(line, false).into_owned(), self.base_style())]);
                    }
                    self.flush_inline();
                }
                self.block_done();
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.lists.pop();
                // A nested list belongs to its item: no gap before the item's next sibling.
                if !matches!(self.containers.last(), Some(Container::Item { .. })) {
                    self.block_done();
                }
            }
            TagEnd::Item => {
                self.flush_inline();
                if matches!(self.containers.last(), Some(Container::Item { used: false, .. })) {
                    self.emit(Vec::new());
                }
                self.pop_container();
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    let lines = table.render(self.avail(), self.theme);
                    for line in lines {
                        self.emit(line);
                    }
                }
                self.inline.clear();
                self.block_done();
            }
            TagEnd::TableHead | TagEnd::TableRow => {
                if let Some(table) = self.table.as_mut() {
                    table.end_row();
                    table.in_head = false;
                }
            }
            TagEnd::TableCell => {
                let cell: Vec<Span<'static>> = std::mem::take(&mut self.inline).into_iter().flatten().collect();
                if let Some(table) = self.table.as_mut() {
                    table.push_cell(cell);
                }
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough | TagEnd::Superscript | TagEnd::Subscript => {
                self.styles.pop();
            }
            TagEnd::Link | TagEnd::Image => self.end_link(),
            TagEnd::FootnoteDefinition
            | TagEnd::DefinitionList
            | TagEnd::DefinitionListTitle
            | TagEnd::DefinitionListDefinition
            | TagEnd::MetadataBlock(_) => {
                self.flush_inline();
                self.block_done();
            }
        }
    }

    /// Whatever the parser left open (it shouldn't) is drawn rather than lost.
    fn finish(mut self) {
        if let Some(code) = self.code.take() {
            self.code_block(code);
        }
        if let Some(table) = self.table.take() {
            for line in table.render(self.avail(), self.theme) {
                self.emit(line);
            }
        }
        self.flush_inline();
    }

    /// The style text gets before inline tags: headings and quotes colour everything in them.
    fn base_style(&self) -> Style {
        let base = if self.in_heading {
            self.theme.heading
        } else if self.containers.iter().any(|c| matches!(c, Container::Quote)) {
            self.theme.quote
        } else {
            self.theme.text
        };
        if self.table.as_ref().is_some_and(|table| table.in_head) { base.patch(self.theme.bold) } else { base }
    }

    fn current_style(&self) -> Style {
        self.styles.iter().fold(self.base_style(), |style, patch| style.patch(*patch))
    }

    fn text(&mut self, text: &str) {
        if let Some(code) = self.code.as_mut() {
            code.text.push_str(text);
            return;
        }
        if let Some(html) = self.html.as_mut() {
            html.push_str(text);
            return;
        }
        if let Some(link) = self.links.last_mut() {
            link.text.push_str(text);
        }
        let style = self.current_style();
        self.push_span(text, style);
    }

    /// Inline code: coloured, without backticks; but where the theme gives it no look at all (NO_COLOR)
    /// the backticks stay, or code would be indistinguishable from prose.
    fn inline_code(&mut self, code: &str) {
        if let Some(link) = self.links.last_mut() {
            link.text.push_str(code);
        }
        let style = self.current_style().patch(self.theme.inline_code);
        if looks_plain(self.theme.inline_code) {
            self.push_span(&format!("`{code}`"), style);
        } else {
            self.push_span(code, style);
        }
    }

    fn push_span(&mut self, text: &str, style: Style) {
        if self.inline.is_empty() {
            self.inline.push(Vec::new());
        }
        let Some(line) = self.inline.last_mut() else { return };
        let text = printable(text, false);
        match line.last_mut() {
            Some(last) if last.style == style => last.content.to_mut().push_str(&text),
            _ => line.push(Span::styled(text.into_owned(), style)),
        }
    }

    fn start_link(&mut self, dest: String, image: bool) {
        self.styles.push(self.theme.link);
        self.links.push(Link { dest, text: String::new(), image });
    }

    /// Links show their text, then the address dimmed when it says something the text doesn't.
    fn end_link(&mut self) {
        let Some(link) = self.links.pop() else { return };
        if link.image && link.text.is_empty() {
            let style = self.current_style();
            self.push_span("image", style);
        }
        self.styles.pop();
        let dest = link.dest.trim();
        let redundant = dest.is_empty() || dest == link.text || dest.strip_prefix("mailto:") == Some(&link.text);
        if !redundant {
            let dim = self.base_style().patch(self.theme.dim);
            self.push_span(&format!(" ({dest})"), dim);
        }
        if let Some(outer) = self.links.last_mut() {
            outer.text.push_str(&link.text);
        }
    }

    fn start_item(&mut self) {
        let depth = self.lists.len().saturating_sub(1);
        let (text, style) = match self.lists.last_mut() {
            Some(List { next: Some(number) }) => {
                let marker = format!("{number}. ");
                *number += 1;
                (marker, self.theme.text)
            }
            _ => {
                let bullet = ["•", "◦", "▪"][depth % 3];
                (format!("{bullet} "), self.theme.dim)
            }
        };
        let cols = text_width(&text);
        self.containers.push(Container::Item { marker: Span::styled(text, style), cols, used: false });
    }

    /// `[ ]`/`[x]` replace a bullet (or follow a number) while the item has shown nothing yet.
    fn task_marker(&mut self, done: bool) {
        let (check, check_style) = if done { ("[x] ", self.theme.success) } else { ("[ ] ", self.theme.dim) };
        let ordered = matches!(self.lists.last(), Some(List { next: Some(_) }));
        if self.inline.iter().all(Vec::is_empty)
            && let Some(Container::Item { marker, cols, used: false }) = self.containers.last_mut()
        {
            let text = if ordered { format!("{}{check}", marker.content) } else { check.to_owned() };
            *cols = text_width(&text);
            *marker = Span::styled(text, check_style);
            return;
        }
        self.push_span(check, check_style);
    }

    fn pop_container(&mut self) {
        self.containers.pop();
        self.blank_depth = self.blank_depth.min(self.containers.len());
    }

    fn block_done(&mut self) {
        self.pending_blank = true;
        self.blank_depth = self.containers.len();
    }

    /// Columns the containers' prefixes may take: text keeps at least half the width (up to 20 columns), so
    /// deep nesting on a narrow screen doesn't squeeze it to a column.
    fn prefix_cols(&self) -> usize {
        let cols: usize = self
            .containers
            .iter()
            .map(|container| match container {
                Container::Quote => 2,
                Container::Item { cols, .. } => *cols,
            })
            .sum();
        cols.min(self.width - (self.width / 2).clamp(1, 20))
    }

    /// Columns left for content after the prefixes.
    fn avail(&self) -> usize {
        (self.width - self.prefix_cols()).max(1)
    }

    /// The prefix for the next line of the innermost `depth` containers: item markers on their first line.
    fn prefix(&mut self, depth: usize, first: bool) -> Vec<Span<'static>> {
        let max = self.prefix_cols();
        let quote = self.theme.quote.remove_modifier(Modifier::ITALIC);
        let mut spans = Vec::new();
        for container in &mut self.containers[..depth] {
            match container {
                Container::Quote => spans.push(Span::styled("│ ", quote)),
                Container::Item { marker, cols, used } => {
                    if first && !*used {
                        spans.push(marker.clone());
                        *used = true;
                    } else {
                        spans.push(Span::raw(" ".repeat(*cols)));
                    }
                }
            }
        }
        drop_leading_cols(spans, max)
    }

    /// Adds one output line (content already fitting [`Self::avail`]) under the containers' prefixes.
    fn emit(&mut self, content: Vec<Span<'static>>) {
        if self.pending_blank {
            self.pending_blank = false;
            if self.emitted {
                let mut blank = self.prefix(self.blank_depth, false);
                trim_trailing_spaces(&mut blank);
                (self.out)(Line::from(blank));
            }
        }
        let mut spans = self.prefix(self.containers.len(), true);
        if content.is_empty() {
            trim_trailing_spaces(&mut spans);
        }
        spans.extend(content);
        self.emitted = true;
        (self.out)(Line::from(spans));
    }

    /// Wraps and emits the pending paragraph, if any.
    fn flush_inline(&mut self) {
        if self.inline.iter().all(|line| line.iter().all(|span| span.content.is_empty())) {
            self.inline.clear();
            return;
        }
        let avail = self.avail();
        for spans in std::mem::take(&mut self.inline) {
            wrap_line_into(&Line::from(spans), avail, &[], &mut |line| self.emit(line.spans));
        }
    }
}

/// Text as it should reach the terminal: control characters in a model's answer would be obeyed by the
/// terminal rather than shown, so they become their visible Unicode "control pictures" (`␛` for escape).
/// Tabs become spaces (code expands them first); newlines too unless `keep_newlines`.
fn printable(text: &str, keep_newlines: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| c.is_control() && !(keep_newlines && c == '\n')) {
        return Cow::Borrowed(text);
    }
    let visible = |c: char| match c {
        '\n' if keep_newlines => c,
        '\t' | '\n' => ' ',
        '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + u32::from(c)).unwrap_or(char::REPLACEMENT_CHARACTER),
        '\u{7f}' => '\u{2421}',
        c if c.is_control() => char::REPLACEMENT_CHARACTER,
        c => c,
    };
    Cow::Owned(text.chars().map(visible).collect())
}

/// Whether a style shows as nothing at all (no colours, or only the terminal's default ones; no attributes).
fn looks_plain(style: Style) -> bool {
    let plain = |color: Option<Color>| matches!(color, None | Some(Color::Reset));
    plain(style.fg) && plain(style.bg) && style.add_modifier.is_empty()
}

/// Keeps the last `max` columns of a prefix: with deep nesting on a narrow screen, the innermost marker
/// matters more than the outer indentation.
fn drop_leading_cols(spans: Vec<Span<'static>>, max: usize) -> Vec<Span<'static>> {
    let total: usize = spans.iter().map(|span| text_width(&span.content)).sum();
    let mut excess = total.saturating_sub(max);
    if excess == 0 {
        return spans;
    }
    let mut out = Vec::new();
    for span in spans {
        if excess == 0 {
            out.push(span);
            continue;
        }
        let mut kept = String::new();
        for grapheme in span.content.graphemes(true) {
            if excess > 0 {
                excess = excess.saturating_sub(text_width(grapheme));
            } else {
                kept.push_str(grapheme);
            }
        }
        if !kept.is_empty() {
            out.push(Span::styled(kept, span.style));
        }
    }
    out
}

fn trim_trailing_spaces(spans: &mut Vec<Span<'static>>) {
    while let Some(last) = spans.last_mut() {
        let trimmed = last.content.trim_end();
        if trimmed.is_empty() {
            spans.pop();
        } else {
            if trimmed.len() != last.content.len() {
                last.content = trimmed.to_owned().into();
            }
            break;
        }
    }
}
