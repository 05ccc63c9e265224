//! Loading a recorded input onto the device: the snapshot's mapping as the source of a
//! streamed upload (`rr_cuda::upload`), read by several threads so page faults and disk reads
//! overlap, with holes cleared on the device; and progress (bytes, rate, time left) as
//! `loading` phases, a few a second, for the CLI's stderr and the explorer's replay line.

use std::time::Instant;

use humansize::{format_size, BINARY};
use rr_cuda::upload::UploadSource;

use super::protocol::Event;
use crate::snapshot::Snapshot;

/// A snapshot mapping as an upload source.
pub struct SnapshotSource<'a>(pub &'a Snapshot);

impl UploadSource for SnapshotSource<'_> {
    type Error = crate::error::Error;

    fn fill(&self, offset: usize, dst: &mut [u8]) -> Result<(), Self::Error> {
        self.0.read_at(offset as u64, dst)
    }

    fn is_zero(&self, offset: usize, len: usize) -> bool {
        // Only composed snapshots know their holes; a plain file is read whole.
        self.0
            .data_ranges()
            .is_some_and(|data| no_data_in(data, offset as u64, offset as u64 + len as u64))
    }
}

/// A device range of an instance with the input blob it holds once restored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resident {
    pub addr: u64,
    /// Where the range lies in that instance's snapshot.
    pub offset: usize,
    pub len: usize,
    pub blob: String,
}

/// The device ranges of an instance (`copies`) with their input blobs (`ids`); empty when the
/// record names none.
pub fn resident(copies: &[(u64, usize, usize)], ids: Option<&[&str]>) -> Vec<Resident> {
    let Some(ids) = ids.filter(|ids| ids.len() == copies.len()) else {
        return Vec::new();
    };
    copies
        .iter()
        .zip(ids)
        .map(|(&(addr, offset, len), &id)| Resident {
            addr,
            offset,
            len,
            blob: id.to_string(),
        })
        .collect()
}

/// The ranges of the instance on the device that the next one needs as they are: the same
/// address, length and input blob.
pub fn kept(now: &[Resident], next: &[Resident]) -> Vec<Resident> {
    let wanted: std::collections::HashSet<(u64, usize, &str)> = next
        .iter()
        .map(|r| (r.addr, r.len, r.blob.as_str()))
        .collect();
    now.iter()
        .filter(|r| wanted.contains(&(r.addr, r.len, r.blob.as_str())))
        .cloned()
        .collect()
}

/// The ranges to upload, and the device-to-device copies that fill the others: a range whose
/// input blob (`ids[i]`, same length) an earlier range or a range already on the device
/// (`on_device`: in place, never overwritten) holds is copied from it on the device instead of
/// read and sent again, and a range that already holds its blob is left alone. Without ids
/// every range is uploaded.
#[allow(clippy::type_complexity)]
pub fn dedupe(
    copies: &[(u64, usize, usize)],
    ids: Option<&[&str]>,
    on_device: &[Resident],
) -> (Vec<(u64, usize, usize)>, Vec<(u64, u64, usize)>) {
    let Some(ids) = ids.filter(|ids| ids.len() == copies.len()) else {
        return (copies.to_vec(), Vec::new());
    };
    let mut first: std::collections::HashMap<(&str, usize), u64> = on_device
        .iter()
        .map(|r| ((r.blob.as_str(), r.len), r.addr))
        .collect();
    let in_place: std::collections::HashSet<(u64, usize, &str)> = on_device
        .iter()
        .map(|r| (r.addr, r.len, r.blob.as_str()))
        .collect();
    let (mut upload, mut device) = (Vec::new(), Vec::new());
    for (&(addr, off, len), &id) in copies.iter().zip(ids) {
        if in_place.contains(&(addr, len, id)) {
            continue;
        }
        match first.get(&(id, len)) {
            Some(&src) => device.push((addr, src, len)),
            None => {
                first.insert((id, len), addr);
                upload.push((addr, off, len));
            }
        }
    }
    (upload, device)
}

/// Whether `[start, end)` meets none of the sorted, disjoint `data` ranges.
fn no_data_in(data: &[(u64, u64)], start: u64, end: u64) -> bool {
    let i = data.partition_point(|&(_, e)| e <= start);
    data.get(i).is_none_or(|&(s, _)| s >= end)
}

/// Progress of one load, reported at most every `EVERY` seconds once it takes long enough to
/// be worth watching.
pub struct Loading<'a> {
    total: u64,
    started: Instant,
    last: f64,
    progress: &'a mut dyn FnMut(Event),
}

const EVERY: f64 = 0.5;

impl<'a> Loading<'a> {
    pub fn new(total: u64, progress: &'a mut dyn FnMut(Event)) -> Loading<'a> {
        Loading {
            total,
            started: Instant::now(),
            last: 0.0,
            progress,
        }
    }

    /// `done` bytes of `total` are on their way to the device.
    pub fn done(&mut self, done: u64) {
        let t = self.started.elapsed().as_secs_f64();
        if t - self.last < EVERY {
            return;
        }
        self.last = t;
        (self.progress)(Event::Phase {
            name: "loading".into(),
            detail: describe(done, self.total, t),
        });
    }
}

/// "3.20 GiB of 24 GiB (13 %), 6.9 GB/s, about 3 s left".
fn describe(done: u64, total: u64, seconds: f64) -> String {
    let rate = if seconds > 0.0 {
        done as f64 / seconds
    } else {
        0.0
    };
    let left = if rate > 0.0 {
        format!(
            ", about {:.0} s left",
            (total.saturating_sub(done)) as f64 / rate
        )
    } else {
        String::new()
    };
    format!(
        "{} of {} ({:.0} %), {:.1} GB/s{left}",
        format_size(done, BINARY),
        format_size(total, BINARY),
        if total > 0 {
            100.0 * done as f64 / total as f64
        } else {
            100.0
        },
        rate / 1e9
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_blobs_are_uploaded_once_and_copied_on_the_device() {
        let copies = [
            (0x1000, 0, 64),
            (0x2000, 64, 64),
            (0x3000, 128, 32),
            (0x4000, 160, 64),
        ];
        let (up, dev) = dedupe(&copies, Some(&["a", "b", "a", "a"]), &[]);
        assert_eq!(
            up,
            [(0x1000, 0, 64), (0x2000, 64, 64), (0x3000, 128, 32)],
            "another length is another blob"
        );
        assert_eq!(dev, [(0x4000, 0x1000, 64)]);
        assert_eq!(dedupe(&copies, None, &[]).0, copies);
        assert_eq!(
            dedupe(&copies, Some(&["a"]), &[]).0,
            copies,
            "ids that do not match the ranges are ignored"
        );
    }

    #[test]
    fn a_switch_uploads_only_what_the_device_does_not_hold() {
        // The instance on the device: a, b, c at 0x1000, 0x2000, 0x3000.
        let now = resident(
            &[(0x1000, 0, 64), (0x2000, 64, 64), (0x3000, 128, 64)],
            Some(&["a", "b", "c"]),
        );
        // The next: a unchanged; b replaced by d; c moved into 0x3000's place as "a"; and a
        // range whose blob b is gone from the device (overwritten by d) must be uploaded.
        let copies = [
            (0x1000, 0, 64),
            (0x2000, 64, 64),
            (0x3000, 128, 64),
            (0x4000, 192, 64),
        ];
        let ids = ["a", "d", "a", "c"];
        let next = resident(&copies, Some(&ids));
        let kept = kept(&now, &next);
        assert_eq!(
            kept.iter().map(|k| k.addr).collect::<Vec<_>>(),
            [0x1000],
            "only a range with the same address, length and blob stays"
        );
        let (up, dev) = dedupe(&copies, Some(&ids), &kept);
        assert_eq!(up, [(0x2000, 64, 64), (0x4000, 192, 64)]);
        assert_eq!(dev, [(0x3000, 0x1000, 64)], "copied from the kept range");
        // Nothing kept (no blob ids): everything uploaded, as a fresh load.
        assert!(resident(&copies, None).is_empty());
        assert_eq!(dedupe(&copies, None, &kept).0, copies);
        // The same instance again: nothing to move.
        let (up, dev) = dedupe(&copies, Some(&ids), &next);
        assert!(up.is_empty() && dev.is_empty());
    }

    #[test]
    fn a_piece_is_a_hole_only_when_no_data_range_meets_it() {
        let data = [(4096, 8192), (16384, 20480)];
        assert!(no_data_in(&data, 0, 4096));
        assert!(!no_data_in(&data, 0, 4097));
        assert!(no_data_in(&data, 8192, 16384));
        assert!(!no_data_in(&data, 8191, 8192));
        assert!(!no_data_in(&data, 20479, 30000));
        assert!(no_data_in(&data, 20480, 1 << 30));
        assert!(no_data_in(&[], 0, 1 << 30));
    }

    #[test]
    fn progress_says_bytes_rate_and_time_left() {
        assert_eq!(
            describe(1 << 30, 4 << 30, 0.5),
            "1 GiB of 4 GiB (25 %), 2.1 GB/s, about 2 s left"
        );
        assert_eq!(describe(0, 0, 0.0), "0 B of 0 B (100 %), 0.0 GB/s");
    }

    #[test]
    fn loading_reports_only_every_half_second() {
        let mut seen = Vec::new();
        let mut sink = |e: Event| seen.push(e);
        {
            let mut l = Loading::new(100, &mut sink);
            l.done(10);
            l.done(20);
        }
        assert!(seen.is_empty(), "nothing within the first half second");
    }
}
