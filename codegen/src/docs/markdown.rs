//! Doc strings as HTML: the protocol's doc comments are Markdown (code spans, emphasis, lists,
//! paragraphs), rendered with pulldown-cmark for the reference site.
//!
//! Nothing in a doc string becomes markup of its own: raw HTML is shown as text (escaped), and
//! links and images keep only their text, so every link of the site stays one the generator
//! made (relative, checked by the link checker) and no doc string can add a script.

use pulldown_cmark::{Event, Parser, Tag, TagEnd, html};

/// `text` as HTML blocks (paragraphs, lists, code blocks).
pub fn block(text: &str) -> String {
    let events = Parser::new(text).filter_map(|event| match event {
        Event::Html(raw) | Event::InlineHtml(raw) => Some(Event::Text(raw)),
        Event::Start(Tag::Link { .. } | Tag::Image { .. })
        | Event::End(TagEnd::Link | TagEnd::Image) => None,
        other => Some(other),
    });
    let mut out = String::new();
    html::push_html(&mut out, events);
    out
}

/// `text` as inline HTML: a single paragraph without its `<p>` (a table cell, a summary); more
/// than one block stays as [`block`] renders it.
pub fn inline(text: &str) -> String {
    let html = block(text);
    let trimmed = html.trim_end();
    match trimmed
        .strip_prefix("<p>")
        .and_then(|rest| rest.strip_suffix("</p>"))
    {
        Some(inner) if !inner.contains("<p>") => inner.to_owned(),
        _ => html,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_spans_and_emphasis_render() {
        assert_eq!(
            inline("Starts a `turn/start` *now*."),
            "Starts a <code>turn/start</code> <em>now</em>."
        );
        assert_eq!(
            block("One.\n\n- a\n- b"),
            "<p>One.</p>\n<ul>\n<li>a</li>\n<li>b</li>\n</ul>\n"
        );
    }

    #[test]
    fn raw_html_and_links_never_become_markup() {
        let html = inline("Keeps <script>alert(1)</script> and <b>x</b> as text.");
        assert!(!html.contains("<script") && !html.contains("<b>"), "{html}");
        assert!(html.contains("&lt;script&gt;"), "{html}");
        let html = block("<div onclick=x>\nraw block\n</div>");
        assert!(!html.contains("<div"), "{html}");
        let html =
            inline("See [the spec](https://example.com/x) and ![i](y.png) and <https://a.b>.");
        assert!(!html.contains("<a") && !html.contains("<img"), "{html}");
        assert!(html.contains("the spec"), "{html}");
        assert_eq!(
            inline("`Vec<u8>` and 1 < 2"),
            "<code>Vec&lt;u8&gt;</code> and 1 &lt; 2"
        );
    }
}
