//! The status message: what the last key or event did. A message is replaced by the next one
//! and expires on its own; `update` reads no clock, so expiry counts from the time carried by
//! the first `Msg::Tick` after the message was set.

use std::time::{Duration, Instant};

/// How long a message stays: long enough to read a sentence, short enough not to go stale.
pub const INFO_LIFETIME: Duration = Duration::from_secs(5);
/// Errors stay longer: they usually need acting on.
pub const ERROR_LIFETIME: Duration = Duration::from_secs(10);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub error: bool,
    /// When the message was first seen by a tick (`None` until then).
    since: Option<Instant>,
}

impl Status {
    pub fn new(text: String, error: bool) -> Status {
        Status {
            text,
            error,
            since: None,
        }
    }

    /// Whether the message has been shown long enough at `now` (stamping it on first sight).
    pub fn expired(&mut self, now: Instant) -> bool {
        let since = *self.since.get_or_insert(now);
        let lifetime = if self.error {
            ERROR_LIFETIME
        } else {
            INFO_LIFETIME
        };
        now.saturating_duration_since(since) >= lifetime
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_expire_after_their_lifetime_from_first_sight() {
        let t0 = Instant::now();
        let mut s = Status::new("sorted".into(), false);
        assert!(
            !s.expired(t0 + Duration::from_secs(100)),
            "first sight stamps"
        );
        assert!(!s.expired(t0 + Duration::from_secs(104)));
        assert!(s.expired(t0 + Duration::from_secs(105)));
        let mut e = Status::new("bad".into(), true);
        assert!(!e.expired(t0));
        assert!(!e.expired(t0 + INFO_LIFETIME));
        assert!(e.expired(t0 + ERROR_LIFETIME));
    }
}
