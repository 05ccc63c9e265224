//! The end of what a child process writes on stderr (a replay child, an engine), read to its end
//! by a thread of its own so the child never blocks on a full pipe: the last MiB at most (a
//! long-lived child that keeps writing cannot grow our memory), and how much it wrote in all, so
//! that the words of one of its runs are told from those of earlier runs by a mark.

use std::io::Read;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Longest line quoted (longer ones are cut): a message must stay a message.
const MAX_QUOTED_LINE: usize = 4096;

#[derive(Default)]
pub struct StderrTail {
    kept: Vec<u8>,
    total: u64,
}

impl StderrTail {
    const KEEP: usize = 1 << 20;

    /// Read `stderr` to its end on a thread of its own: the tail it fills, and the thread.
    pub fn drain(
        mut stderr: impl Read + Send + 'static,
    ) -> (Arc<Mutex<StderrTail>>, JoinHandle<()>) {
        let tail = Arc::new(Mutex::new(StderrTail::default()));
        let fill = tail.clone();
        let thread = std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            loop {
                match stderr.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        if let Ok(mut t) = fill.lock() {
                            t.push(&buf[..n]);
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
        });
        (tail, thread)
    }

    fn push(&mut self, bytes: &[u8]) {
        self.kept.extend_from_slice(bytes);
        self.total += bytes.len() as u64;
        if self.kept.len() > 2 * Self::KEEP {
            self.kept.drain(..self.kept.len() - Self::KEEP);
        }
    }

    /// How many bytes were written so far (a mark for [`StderrTail::last_lines`]).
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The last `n` lines that are not blank among those written after the first `mark` bytes
    /// (as much of them as is kept), trimmed and joined with " | "; None when there are none.
    pub fn last_lines(&self, mark: u64, n: usize) -> Option<String> {
        let after = usize::try_from(self.total.saturating_sub(mark)).unwrap_or(usize::MAX);
        let from = self.kept.len().saturating_sub(after);
        let text = String::from_utf8_lossy(&self.kept[from..]);
        let lines: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        let tail: Vec<&str> = lines[lines.len().saturating_sub(n)..]
            .iter()
            .map(|l| match l.char_indices().nth(MAX_QUOTED_LINE) {
                Some((cut, _)) => &l[..cut],
                None => l,
            })
            .collect();
        (!tail.is_empty()).then(|| tail.join(" | "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_lines_after_a_mark_are_quoted() {
        let (tail, thread) = StderrTail::drain(&b"old run\n\nfirst\n  second  \nthird\n"[..]);
        thread.join().unwrap();
        let t = tail.lock().unwrap();
        assert_eq!(
            t.last_lines(0, 3).as_deref(),
            Some("first | second | third")
        );
        assert_eq!(
            t.last_lines(8, 9).as_deref(),
            Some("first | second | third")
        );
        assert_eq!(t.last_lines(t.total(), 3), None);
        let mut long = StderrTail::default();
        long.push(&vec![b'x'; 3 * StderrTail::KEEP]);
        assert!(long.kept.len() <= 2 * StderrTail::KEEP);
        assert_eq!(long.last_lines(0, 1).unwrap().len(), MAX_QUOTED_LINE);
    }
}
