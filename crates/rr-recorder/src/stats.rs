//! The recorder's account of a program's launches: how many it saw (stream launches and
//! executions of graph kernel nodes), how many the selection rules picked, how many became
//! instances, and why each of the others did not. `record` prints it at the end, the report
//! carries it after LLVM's table, the explorer shows it in its header. Pure: tested without a GPU.

use std::collections::HashMap;

use rr_format::report::RecorderSummary;

/// Why a selected launch was not recorded.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Reason {
    /// Its image had to be loaded again to find its cubin, or its context's snapshot memory
    /// allocated, while a graph was being captured (either could end the capture).
    Capture,
    /// Inside a graph holding nodes of a kind rr-tui does not run itself.
    GraphNodeKind(&'static str),
    /// Inside a graph instantiated for device-side launch.
    GraphDeviceLaunch,
    /// Inside a graph whose instantiation the recorder did not see.
    GraphUnknown,
    /// Inside a graph changed after instantiation in a way rr-tui does not follow.
    GraphUntracked(&'static str),
    /// Inside a graph that could not be read when it was instantiated (the driver's answer).
    GraphUnreadable(String),
    /// This driver does not let the recorder run a graph's nodes itself.
    GraphSwapUnsupported,
    /// The kernel's device image was not seen loading.
    NoImage,
    /// The image tied to the kernel's module has no kernel of its name (and no other image
    /// seen loading does): the instance could not be replayed.
    WrongImage,
    /// The context's snapshot resources could not be set up (why).
    NoStaging(String),
    /// The recorder's staging memory was full (what was asked of it).
    StagingFull(String),
    /// A snapshot could not be kept whole after the kernels ran (why: "staging full", or an
    /// earlier snapshot it depended on was not kept).
    Lost(&'static str),
    /// The launch call had not returned long after its snapshot was enqueued.
    NeverReturned,
    /// The program ended before the recorded kernel finished.
    ProgramEnded,
    /// Its context was destroyed before its snapshots were written.
    ContextGone,
    /// On another device than `--device`.
    OtherDevice,
    /// The launch call itself failed (nothing ran).
    LaunchFailed,
    /// After recording stopped (the byte budget, or an error).
    Stopped(String),
}

impl Reason {
    pub fn text(&self) -> String {
        match self {
            Reason::Capture => {
                "launched while a CUDA graph was being captured, before the recorder could load its image or set up its memory (either could end the capture)".into()
            }
            Reason::GraphNodeKind(k) => {
                format!("inside CUDA graphs holding a {k} node (rr-tui runs kernel, memset, memcpy, host, event and child-graph nodes)")
            }
            Reason::GraphDeviceLaunch => "inside CUDA graphs instantiated for device-side launch".into(),
            Reason::GraphUnknown => {
                "graph launches of CUDA graphs instantiated before recording started (their kernels are not counted)".into()
            }
            Reason::GraphUntracked(what) => {
                format!("inside CUDA graphs changed after instantiation by {what}, which rr-tui does not follow")
            }
            Reason::GraphUnreadable(why) => {
                format!("graph launches of CUDA graphs that could not be read when instantiated, their kernels not counted ({why})")
            }
            Reason::GraphSwapUnsupported => {
                "inside CUDA graphs: this driver does not let rr-tui run a graph's nodes in place of the launch".into()
            }
            Reason::NoImage => "the kernel's device image was not seen loading".into(),
            Reason::WrongImage => {
                "no image seen loading holds the kernel (the one tied to its module does not)".into()
            }
            Reason::NoStaging(why) => format!("the recorder's snapshot memory could not be set up ({why})"),
            Reason::StagingFull(what) => format!(
                "staging full: the recorder's snapshot memory was in use ({what}; raise it with --staging)"
            ),
            Reason::Lost("staging full") => {
                "staging full: the kernel's new content did not fit in what the staging ring had free (earlier snapshots not written yet hold the rest; raise it with --staging)".into()
            }
            Reason::Lost(why) => format!("a snapshot could not be kept ({why})"),
            Reason::NeverReturned => "the launch call had not returned 30 s after its snapshot was enqueued".into(),
            Reason::ProgramEnded => {
                "the program ended before they could be written (their kernel had not finished 60 s after its end, or a CUDA graph capture left open kept the recorder from copying them)".into()
            }
            Reason::ContextGone => {
                "their context was destroyed before their snapshots could be written".into()
            }
            Reason::OtherDevice => "on another device than --device".into(),
            Reason::LaunchFailed => "the launch call itself failed".into(),
            Reason::Stopped(why) => format!("after recording stopped ({why})"),
        }
    }
}

#[derive(Debug, Default)]
pub struct Stats {
    pub selected: u64,
    pub recorded: u64,
    stopped: Option<String>,
    reasons: HashMap<Reason, u64>,
}

impl Stats {
    pub fn not_recorded(&mut self, why: Reason, launches: u64) {
        *self.reasons.entry(why).or_default() += launches;
    }

    pub fn stopped(&mut self, why: &str) {
        self.stopped.get_or_insert_with(|| why.to_string());
    }

    /// The summary, given how many launches the selection rules saw and how many came after
    /// recording stopped (not offered to them).
    pub fn summary(&self, observed: u64, after_stop: u64) -> RecorderSummary {
        let mut not_recorded: Vec<(u64, String)> = self
            .reasons
            .iter()
            .filter(|(_, &n)| n > 0)
            .map(|(r, &n)| (n, r.text()))
            .collect();
        let not_selected = observed.saturating_sub(self.selected);
        if not_selected > 0 {
            not_recorded.push((
                not_selected,
                "not selected (a launch configuration already recorded, or outside --kernels, --occurrence, --skip or --max-per-kernel)".into(),
            ));
        }
        if after_stop > 0 {
            let why = self.stopped.clone().unwrap_or_else(|| "an error".into());
            not_recorded.push((after_stop, Reason::Stopped(why).text()));
        }
        not_recorded.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        RecorderSummary {
            seen: observed + after_stop,
            selected: self.selected,
            recorded: self.recorded,
            not_recorded,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_launch_is_accounted_for() {
        let mut s = Stats {
            selected: 5,
            recorded: 2,
            ..Default::default()
        };
        s.not_recorded(Reason::GraphNodeKind("conditional"), 2);
        s.not_recorded(Reason::NoImage, 1);
        s.stopped("the byte budget (10 bytes) is used up");
        let sum = s.summary(100, 7);
        assert_eq!((sum.seen, sum.selected, sum.recorded), (107, 5, 2));
        let counts: Vec<u64> = sum.not_recorded.iter().map(|r| r.0).collect();
        assert_eq!(counts, [95, 7, 2, 1], "most frequent first");
        assert!(sum.not_recorded[1].1.contains("byte budget"));
        assert!(sum.not_recorded[2].1.contains("conditional node"));
        assert_eq!(
            counts.iter().sum::<u64>() + sum.recorded,
            sum.seen,
            "recorded + every reason = seen"
        );
    }
}
