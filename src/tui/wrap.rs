//! Text broken into lines for the screen: at spaces, so nothing is cut mid-word that need not
//! be (the help popup, the descriptor screen).

/// `text` in lines of at most `width` characters, broken at spaces (a word longer than a line
/// is broken where it must be).
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let mut word: Vec<char> = word.chars().collect();
        loop {
            let used = line.chars().count();
            let gap = usize::from(used > 0);
            if used + gap + word.len() <= width {
                if gap == 1 {
                    line.push(' ');
                }
                line.extend(word.iter());
                break;
            }
            if used > 0 {
                lines.push(std::mem::take(&mut line));
                continue;
            }
            // A word wider than the line: as much as fits, the rest on the next.
            let rest = word.split_off(width.min(word.len()));
            lines.push(word.iter().collect());
            word = rest;
            if word.is_empty() {
                break;
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// A `Field        value` line of `inspect` (the first `head` columns name the field) in lines
/// of at most `width` columns: the value wraps under itself.
pub fn wrap_field(line: &str, head: usize, width: usize) -> Vec<String> {
    if line.chars().count() <= width || width <= head + 8 {
        return vec![line.to_string()];
    }
    let cut = line.char_indices().nth(head).map_or(line.len(), |(i, _)| i);
    let (name, value) = line.split_at(cut);
    let indent = " ".repeat(head);
    wrap(value, width - head)
        .into_iter()
        .enumerate()
        .map(|(i, part)| format!("{}{part}", if i == 0 { name } else { &indent }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_break_at_spaces_and_long_words_where_they_must() {
        assert_eq!(wrap("aaaa bb", 4), ["aaaa", "bb"]);
        assert_eq!(wrap("abcdefghij", 4), ["abcd", "efgh", "ij"]);
        assert_eq!(
            wrap_field("Kernel       a very long name indeed", 13, 24),
            ["Kernel       a very long", "             name indeed"]
        );
    }
}
