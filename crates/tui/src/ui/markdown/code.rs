//! Code blocks: drawn highlighted and hard-broken (code can't be reflowed), and extracted for copying.

use pulldown_cmark::{CodeBlockKind, Event, Parser, Tag, TagEnd};
use ratatui::text::Span;
use unicode_segmentation::UnicodeSegmentation;

use super::{Code, Renderer, markdown_options, printable};
use crate::ui::highlight::highlight_growing;
use crate::ui::wrap::width as text_width;

/// A fenced code block of a message, for copying to the clipboard.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeBlock {
    /// The first word of the fence's info string (`rust` for "```rust,ignore"), if any.
    pub lang: Option<String>,
    /// The code, without the newline that ends its last line (pasting into a shell must not run it).
    pub code: String,
}

/// The fenced code blocks of `text`, in order (indented blocks are usually accidental, so they're left out).
pub fn code_blocks(text: &str) -> Vec<CodeBlock> {
    let mut blocks = Vec::new();
    let mut current: Option<CodeBlock> = None;
    for event in Parser::new_ext(text, markdown_options()) {
        match event {
            Event::Start(Tag::CodeBlock(CodeBlockKind::Fenced(info))) => {
                current = Some(CodeBlock { lang: fence_lang(&info), code: String::new() });
            }
            Event::Text(text) => {
                if let Some(block) = current.as_mut() {
                    block.code.push_str(&text);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(mut block) = current.take() {
                    if block.code.ends_with('\n') {
                        block.code.pop();
                    }
                    blocks.push(block);
                }
            }
            _ => {}
        }
    }
    blocks
}

/// The language of a fence's info string: its first word, without `{.` `}` decorations or `,attributes`.
pub(super) fn fence_lang(info: &str) -> Option<String> {
    let word = info.split(|c: char| c.is_whitespace() || c == ',').find(|word| !word.is_empty())?;
    let word = word.trim_matches(|c| c == '{' || c == '}' || c == '.');
    (!word.is_empty()).then(|| word.to_owned())
}

/// Prefix of a hard-broken code line, so code stands apart from prose even without colours.
const CODE_GUTTER: &str = "  ";
/// The gutter of the rest of a code line broken at the screen's edge: code has no words to wrap at, so the
/// break is marked, never mistaken for a line of its own.
const CONTINUED_GUTTER: &str = "↪ ";

impl Renderer<'_> {
    /// Code keeps its layout: highlighted when the language is known, long lines hard-broken, not wrapped.
    pub(super) fn code_block(&mut self, code: Code) {
        let mut text = code.text.replace('\t', "    ");
        text.retain(|c| c != '\r');
        let text = printable(&text, true);
        let lines = highlight_growing(&text, code.lang.as_deref().unwrap_or(""), self.theme).unwrap_or_else(|| {
            text.lines().map(|line| vec![Span::styled(line.to_owned(), self.theme.code_block)]).collect()
        });
        let avail = self.avail();
        let gutter = if avail > 2 * CODE_GUTTER.len() { CODE_GUTTER } else { "" };
        let room = avail - gutter.len();
        let lines = if lines.is_empty() { vec![Vec::new()] } else { lines };
        for spans in lines {
            let spans = spans
                .into_iter()
                .map(|span| Span::styled(span.content, self.theme.code_block.patch(span.style)))
                .collect();
            for (index, chunk) in hard_break(spans, room).into_iter().enumerate() {
                let gutter = if index > 0 && !gutter.is_empty() { CONTINUED_GUTTER } else { gutter };
                let mut content = vec![Span::styled(gutter, self.theme.dim)];
                content.extend(chunk);
                self.emit(content);
            }
        }
    }
}

/// Splits a line into pieces of at most `width` columns, anywhere (code can't be reflowed at words).
fn hard_break(spans: Vec<Span<'static>>, width: usize) -> Vec<Vec<Span<'static>>> {
    let width = width.max(1);
    let mut out = Vec::new();
    let mut current: Vec<Span<'static>> = Vec::new();
    let mut used = 0;
    for span in spans {
        let span_width = text_width(&span.content);
        if used + span_width <= width {
            used += span_width;
            current.push(span);
            continue;
        }
        let mut piece = String::new();
        for grapheme in span.content.graphemes(true) {
            let grapheme_width = text_width(grapheme);
            if used + grapheme_width > width && used > 0 {
                if !piece.is_empty() {
                    current.push(Span::styled(std::mem::take(&mut piece), span.style));
                }
                out.push(std::mem::take(&mut current));
                used = 0;
            }
            piece.push_str(grapheme);
            used += grapheme_width;
        }
        if !piece.is_empty() {
            current.push(Span::styled(piece, span.style));
        }
    }
    out.push(current);
    out
}
