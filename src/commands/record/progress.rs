//! What `record` tells while the program runs and at the end, from the recorders' progress
//! datagrams: instances and bytes so far, then the totals, each instance's cost, the launches
//! not recorded and what a replay would stumble on.

use std::os::unix::net::UnixDatagram;
use std::path::Path;
use std::time::{Duration, Instant};

use humansize::{format_size, BINARY};

use crate::output;

/// What the recorders said, summed over processes.
pub(super) struct Progress {
    tty: bool,
    state: std::cell::RefCell<ProgressState>,
}

#[derive(Default)]
struct ProgressState {
    by_pid: std::collections::HashMap<u64, (u64, u64, u64)>,
    /// Each process's latest account of its launches.
    summaries: std::collections::HashMap<u64, rr_format::report::RecorderSummary>,
    messages: Vec<String>,
    /// What each instance's snapshots cost, in arrival order (at most `MAX_COSTS`).
    costs: Vec<InstanceCost>,
    /// Instances whose cost arrived past `MAX_COSTS` (counted, not kept).
    costs_dropped: u64,
    last_line: Option<Instant>,
    /// When the first datagram arrived, and the bytes recorded by then (for the rate).
    first: Option<(Instant, u64)>,
    changed: bool,
}

/// Instance costs kept for the end of `record` (each about 100 bytes, its name cut to
/// `MAX_NAME`), processes and messages heard: what a misbehaving recorder sends stays bounded.
const MAX_COSTS: usize = 100_000;
const MAX_NAME: usize = 512;
const MAX_PROCESSES: usize = 100_000;
const MAX_MESSAGES: usize = 1_000;
/// Instances listed one per line at the end; more are summed, with the slowest named.
const COST_LINES: usize = 12;

/// What the recorder said an instance's snapshots cost.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
struct InstanceCost {
    json: String,
    seconds: f64,
    /// Bytes snapshot (before and after the kernel), copied to the host, and written.
    bytes: u64,
    copied: u64,
    written: u64,
}

impl Progress {
    pub(super) fn new(tty: bool) -> Progress {
        Progress {
            tty,
            state: Default::default(),
        }
    }

    fn totals(st: &ProgressState) -> (u64, u64, u64) {
        st.by_pid.values().fold((0, 0, 0), |a, v| {
            (
                a.0.saturating_add(v.0),
                a.1.saturating_add(v.1),
                a.2.saturating_add(v.2),
            )
        })
    }

    /// Read what arrived (waiting up to the socket's timeout) and print a line at most once a
    /// second, only when something changed.
    pub(super) fn poll(&self, sock: &UnixDatagram) {
        // A datagram carries a summary of up to 64 reasons: far below this.
        let mut buf = vec![0u8; 1 << 16];
        let mut st = self.state.borrow_mut();
        while let Ok(n) = sock.recv(&mut buf) {
            let Ok(v) = serde_json::from_slice::<serde_json::Value>(&buf[..n]) else {
                continue;
            };
            let num = |k: &str| v[k].as_u64().unwrap_or(0);
            // Bounded whatever the recorders send: processes, messages, costs.
            let pid = num("pid");
            if st.by_pid.len() < MAX_PROCESSES || st.by_pid.contains_key(&pid) {
                st.by_pid.insert(
                    pid,
                    (num("instances"), num("snapshot_bytes"), num("stored_bytes")),
                );
                if let Ok(sum) = serde_json::from_value(v["summary"].clone()) {
                    st.summaries.insert(pid, sum);
                }
            }
            if let Some(m) = v["message"].as_str() {
                if st.messages.len() < MAX_MESSAGES {
                    st.messages.push(m.to_string());
                }
            }
            if let Ok(mut cost) = serde_json::from_value::<InstanceCost>(v["cost"].clone()) {
                if st.costs.len() < MAX_COSTS {
                    rr_format::text::cut_at_char(&mut cost.json, MAX_NAME);
                    st.costs.push(cost);
                } else {
                    st.costs_dropped += 1;
                }
            }
            if st.first.is_none() {
                st.first = Some((Instant::now(), num("snapshot_bytes")));
            }
            st.changed = true;
            if sock.set_nonblocking(true).is_err() {
                break;
            }
        }
        let _ = sock.set_nonblocking(false);
        let due = st
            .last_line
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1));
        if self.tty && st.changed && due {
            let (n, bytes, stored) = Self::totals(&st);
            let rate = st.first.and_then(|(t, at)| {
                let s = t.elapsed().as_secs_f64();
                (s >= 1.0).then(|| (bytes.saturating_sub(at) as f64 / s) as u64)
            });
            output::error_line(&format!(
                "rr-tui record: {n} instance(s), {} of device memory recorded{}, {} written",
                format_size(bytes, BINARY),
                rate.map(|r| format!(" ({}/s)", format_size(r, BINARY)))
                    .unwrap_or_default(),
                format_size(stored, BINARY)
            ));
            st.last_line = Some(Instant::now());
            st.changed = false;
        }
    }

    pub(super) fn summary(&self, dir: &Path) {
        let st = self.state.borrow();
        let (n, bytes, stored) = Self::totals(&st);
        let dir = rr_format::text::visible_path(dir);
        if st.by_pid.is_empty() {
            output::error_line(&format!(
                "rr-tui record: nothing recorded: {}",
                match rr_engine::replay::driver_usable() {
                    Err(_) =>
                        "this machine has no usable CUDA driver (libcuda.so.1 could not be \
                               loaded, or is older than CUDA 12.8), so the program ran without CUDA"
                            .to_string(),
                    Ok(()) => "the program did not initialise CUDA, or the recorder could not \
                               start (it says why on stderr when it cannot)"
                        .to_string(),
                }
            ));
            return;
        }
        output::error_line(&format!(
            "rr-tui record: {n} instance(s) from {} process(es) in {dir}: {} of device memory recorded, {} written; \
             explore with `rr-tui {dir}`",
            st.by_pid.len(),
            format_size(bytes, BINARY),
            format_size(stored, BINARY)
        ));
        for line in cost_lines(&st.costs, st.costs_dropped) {
            output::error_line(&format!("rr-tui record: {line}"));
        }
        let total = rr_format::report::RecorderSummary::sum(st.summaries.values());
        if !st.summaries.is_empty() {
            for line in total.lines() {
                output::error_line(&format!("rr-tui record: {line}"));
            }
        }
    }

    /// What a replay of the recorded instances would stumble on: arguments pointing outside the
    /// recorded memory, and instances that cannot be replayed (the rules `check` and `replay`
    /// apply), for the directory and the per-process directories below it.
    pub(super) fn warnings(&self, dir: &Path) {
        const MAX_LINES: usize = 20;
        let mut lines = Vec::new();
        // The directory and the per-process and per-rank recordings below it, as one.
        if let Ok(rd) = rr_format::RecordDir::open(dir) {
            for inst in &rd.instances {
                let json = inst.files.json();
                let Ok(desc) = rr_format::Descriptor::read(&json) else {
                    continue;
                };
                let name = rr_format::text::visible_path(&json);
                for w in rr_format::memory::outside_words(&desc) {
                    lines.push(format!(
                        "{name}: {}",
                        rr_format::memory::describe_outside(&desc, &w)
                    ));
                }
                if let Some(why) = desc.cuda.as_ref().and_then(|c| c.unreplayable.as_ref()) {
                    lines.push(format!("{name}: cannot be replayed: {why}"));
                }
                if let Some(why) = desc.cuda.as_ref().and_then(|c| c.raced.as_ref()) {
                    lines.push(format!(
                        "{name}: its snapshots may have raced with another stream: {}",
                        rr_format::text::visible(why)
                    ));
                }
            }
        }
        for l in lines.iter().take(MAX_LINES) {
            output::error_line(&format!("rr-tui record: warning: {l}"));
        }
        if lines.len() > MAX_LINES {
            output::error_line(&format!(
                "rr-tui record: warning: {} more (rr-tui check lists them all)",
                lines.len() - MAX_LINES
            ));
        }
    }
}

/// What the instances' snapshots cost: a line each for a few, else the sums and the slowest.
fn cost_lines(costs: &[InstanceCost], dropped: u64) -> Vec<String> {
    let size = |b: u64| format_size(b, BINARY);
    let line = |c: &InstanceCost| {
        format!(
            "  {}: {:.2} s, {} snapshot, {} copied, {} new",
            rr_format::text::visible(&c.json),
            c.seconds,
            size(c.bytes),
            size(c.copied),
            size(c.written)
        )
    };
    if costs.is_empty() {
        return Vec::new();
    }
    let sum = |f: fn(&InstanceCost) -> u64| costs.iter().fold(0u64, |a, c| a.saturating_add(f(c)));
    let (bytes, copied, written) = (sum(|c| c.bytes), sum(|c| c.copied), sum(|c| c.written));
    let mut seconds: Vec<f64> = costs.iter().map(|c| c.seconds).collect();
    seconds.sort_by(f64::total_cmp);
    let mut out = vec![format!(
        "snapshot cost per instance: median {:.2} s, max {:.2} s; {} snapshot, {} copied to the host ({} known on the GPU), {} new",
        seconds[seconds.len() / 2],
        seconds[seconds.len() - 1],
        size(bytes),
        size(copied),
        size(bytes.saturating_sub(copied)),
        size(written)
    )];
    if costs.len() <= COST_LINES {
        out.extend(costs.iter().map(line));
    } else {
        let mut slowest: Vec<&InstanceCost> = costs.iter().collect();
        slowest.sort_by(|a, b| b.seconds.total_cmp(&a.seconds));
        out.push(format!(
            "slowest of {} instances:",
            costs.len() as u64 + dropped
        ));
        out.extend(slowest.into_iter().take(5).map(line));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cost(json: &str, seconds: f64, copied: u64) -> InstanceCost {
        InstanceCost {
            json: json.into(),
            seconds,
            bytes: 1 << 30,
            copied,
            written: copied / 2,
        }
    }

    #[test]
    fn a_few_instances_get_a_line_each_many_the_slowest_five() {
        let few = cost_lines(
            &[cost("a.json", 0.5, 1 << 20), cost("b\x1b.json", 0.25, 0)],
            0,
        );
        assert_eq!(few.len(), 3, "{few:?}");
        assert!(few[0].contains("median 0.50 s, max 0.50 s"), "{}", few[0]);
        assert!(
            few[0].contains(
                "2 GiB snapshot, 1 MiB copied to the host (2.00 GiB known on the GPU), 512 KiB new"
            ),
            "{}",
            few[0]
        );
        assert!(few[1].contains("a.json: 0.50 s"));
        assert!(
            !few[2].contains('\x1b'),
            "control characters made visible: {}",
            few[2]
        );
        let many: Vec<InstanceCost> = (0..40)
            .map(|i| cost(&format!("{i}.json"), i as f64, 0))
            .collect();
        let lines = cost_lines(&many, 3);
        assert_eq!(lines.len(), 7);
        assert_eq!(lines[1], "slowest of 43 instances:");
        assert!(lines[2].contains("39.json: 39.00 s"), "{}", lines[2]);
        assert!(cost_lines(&[], 0).is_empty());
    }
}
