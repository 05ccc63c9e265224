//! Lines from another process (an engine, an engine hub, ncu, a tuner's commands), read at
//! most `max` bytes at a time: the rest of a longer line is read and dropped, never taken for
//! the start of the next one, so a flood without newlines neither grows memory nor smuggles a
//! line in behind it. Bytes are kept as they are; callers decode leniently.

use std::io::{self, BufRead, Read};

/// How a line came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Line {
    /// Whole (at most `max` bytes, its newline included when it had one).
    Whole,
    /// Longer than `max`: `buf` holds its first `max` bytes; [`next`] dropped the rest,
    /// [`next_job_line`] left it unread (its reader ends there).
    Cut,
}

/// Read the next line into `buf` (cleared first). `Ok(None)` at the end of the stream.
pub fn next(r: &mut impl BufRead, max: u64, buf: &mut Vec<u8>) -> io::Result<Option<Line>> {
    buf.clear();
    let n = r.by_ref().take(max).read_until(b'\n', buf)?;
    if n == 0 {
        return Ok(None);
    }
    if buf.ends_with(b"\n") || (n as u64) < max {
        return Ok(Some(Line::Whole));
    }
    skip_rest(r);
    Ok(Some(Line::Cut))
}

/// Read and drop up to and including the next newline (or to the end).
fn skip_rest(r: &mut impl BufRead) {
    loop {
        let (used, found) = match r.fill_buf() {
            Ok([]) | Err(_) => return,
            Ok(b) => match b.iter().position(|&c| c == b'\n') {
                Some(i) => (i + 1, true),
                None => (b.len(), false),
            },
        };
        r.consume(used);
        if found {
            return;
        }
    }
}

/// The next non-blank line of a stream that ends at a line over `max` bytes (a job, an engine's
/// commands: a longer line is no line of ours), never reading past what makes it too long: a
/// line of at most `max` bytes (its newline not counted) is whole; the blank lines skipped
/// before it count toward the same `max`, so a flood of them ends the stream too (as `Cut`).
pub fn next_job_line(
    r: &mut impl BufRead,
    max: u64,
    buf: &mut Vec<u8>,
) -> io::Result<Option<Line>> {
    let mut budget = max.saturating_add(1);
    loop {
        buf.clear();
        let n = r.by_ref().take(budget).read_until(b'\n', buf)? as u64;
        if n == 0 {
            return Ok(None);
        }
        if !buf.ends_with(b"\n") && n == budget {
            return Ok(Some(Line::Cut));
        }
        if !buf.trim_ascii().is_empty() {
            return Ok(Some(Line::Whole));
        }
        budget -= n;
        if budget == 0 {
            return Ok(Some(Line::Cut));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An endless line (no newline ever) is refused after `max` bytes, not read to its end.
    #[test]
    fn a_job_line_over_the_limit_is_not_read_further() {
        let mut endless = io::BufReader::new(io::repeat(b'x'));
        let mut buf = Vec::new();
        assert_eq!(
            next_job_line(&mut endless, 16, &mut buf).unwrap(),
            Some(Line::Cut)
        );
        assert_eq!(buf.len(), 17);
        // A line of exactly the limit is whole, with its newline or at the end of input.
        for line in [&b"0123456789abcdef\n"[..], &b"0123456789abcdef"[..]] {
            let mut r = io::BufReader::new(line);
            assert_eq!(
                next_job_line(&mut r, 16, &mut buf).unwrap(),
                Some(Line::Whole)
            );
        }
        // Blank lines count toward the limit: an endless stream of them ends too.
        let mut blanks = io::BufReader::new(io::repeat(b'\n'));
        assert_eq!(
            next_job_line(&mut blanks, 16, &mut buf).unwrap(),
            Some(Line::Cut)
        );
        let mut r = io::BufReader::new(&b"\n\n{}\n"[..]);
        assert_eq!(
            next_job_line(&mut r, 16, &mut buf).unwrap(),
            Some(Line::Whole)
        );
        assert_eq!(buf, b"{}\n");
    }

    #[test]
    fn a_long_line_is_cut_and_its_rest_never_becomes_the_next_line() {
        let mut text = vec![b'x'; 100];
        text.extend_from_slice(b"{\"smuggled\":1}\nnext\nlast");
        let mut r = io::BufReader::with_capacity(7, &text[..]);
        let mut buf = Vec::new();
        assert_eq!(next(&mut r, 10, &mut buf).unwrap(), Some(Line::Cut));
        assert_eq!(buf, vec![b'x'; 10]);
        assert_eq!(next(&mut r, 10, &mut buf).unwrap(), Some(Line::Whole));
        assert_eq!(buf, b"next\n");
        assert_eq!(next(&mut r, 10, &mut buf).unwrap(), Some(Line::Whole));
        assert_eq!(buf, b"last");
        assert_eq!(next(&mut r, 10, &mut buf).unwrap(), None);
        // A line of exactly `max` bytes with its newline is whole.
        let mut r = io::BufReader::new(&b"abc\nd"[..]);
        assert_eq!(next(&mut r, 4, &mut buf).unwrap(), Some(Line::Whole));
        assert_eq!(buf, b"abc\n");
    }
}
