//! Tool output cut to what the model is shown: the start and the end kept, the middle left
//! out with a note saying how much (the budget comes from the model's family, see
//! `catalog::families::tool_output_bytes`, or from the call's own `max_output_tokens`).

/// `text` with its middle left out when it is over `limit` bytes (the start and the end kept,
/// the cut marked); cuts fall on character boundaries.
pub fn middle_cut(text: &str, limit: usize) -> String {
    if text.len() <= limit {
        return text.to_owned();
    }
    let mut head = limit / 2;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (limit - limit / 2);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[… {} bytes left out …]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_kept_and_long_text_loses_its_middle() {
        assert_eq!(middle_cut("abc", 3), "abc");
        let cut = middle_cut("0123456789", 4);
        assert_eq!(cut, "01\n[… 6 bytes left out …]\n89");
    }

    #[test]
    fn cuts_fall_on_character_boundaries() {
        let text = "ééééé";
        let cut = middle_cut(text, 5);
        assert!(cut.starts_with('é') && cut.ends_with('é'), "{cut}");
    }
}
