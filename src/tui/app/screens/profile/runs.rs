//! A profile run and an instance's profiles, as the Profile screen (`screens::profile`) keeps
//! them: the recorded configuration's and one of a sweep's (or the A/B candidate's), each a
//! run of ncu in an `rr-tui job` child whose events it applies.

use rr_engine::profile::ProfileResult;
use rr_engine::replay::Event;

use crate::tui::app::replays::Phase;

/// Which configuration of an instance a profile is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// As recorded.
    Recorded,
    /// A configuration of the instance's sweep (its best unless another row was picked).
    Tuned,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ProfileRun {
    /// The run id its events carry.
    pub run: u64,
    pub phase: Phase,
    /// What was profiled, in words ("recorded", "best: grid 64x1x1 block 256x1x1 smem 0").
    pub label: String,
    /// ncu's passes so far, and the last one's line.
    pub passes: usize,
    pub progress: Option<String>,
    pub result: Option<Box<ProfileResult>>,
}

impl ProfileRun {
    pub(crate) fn new(run: u64, label: String) -> ProfileRun {
        ProfileRun {
            run,
            phase: Phase::Running,
            label,
            passes: 0,
            progress: None,
            result: None,
        }
    }

    /// Apply one event of its child.
    pub fn apply(&mut self, event: Event) {
        match event {
            Event::Phase { name, detail } if name == "progress" => {
                self.passes += 1;
                self.progress = Some(detail);
            }
            Event::Profile(result) => self.result = Some(result),
            Event::Error { message, .. } => self.phase = Phase::Failed(message),
            Event::Done { .. } if self.phase == Phase::Running => {
                self.phase = if self.result.is_some() {
                    Phase::Done
                } else {
                    Phase::Failed("the profile ended without a result".into())
                };
            }
            _ => {}
        }
    }
}

/// An instance's profiles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Profiles {
    pub recorded: Option<ProfileRun>,
    pub tuned: Option<ProfileRun>,
}

impl Profiles {
    pub fn get(&self, t: Target) -> Option<&ProfileRun> {
        match t {
            Target::Recorded => self.recorded.as_ref(),
            Target::Tuned => self.tuned.as_ref(),
        }
    }

    pub(crate) fn slot(&mut self, t: Target) -> &mut Option<ProfileRun> {
        match t {
            Target::Recorded => &mut self.recorded,
            Target::Tuned => &mut self.tuned,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_takes_progress_then_its_result_or_its_error() {
        let mut r = ProfileRun::new(3, "recorded".into());
        r.apply(Event::Phase {
            name: "progress".into(),
            detail: "==PROF== Profiling \"k\": 0%....50%....100% - 18 passes".into(),
        });
        assert_eq!(r.passes, 1);
        r.apply(Event::Done { ok: false });
        assert_eq!(
            r.phase,
            Phase::Failed("the profile ended without a result".into())
        );
        let mut r = ProfileRun::new(4, "recorded".into());
        r.apply(Event::Error {
            kind: rr_engine::replay::ErrorKind::Setup,
            message: "ncu was not found".into(),
        });
        r.apply(Event::Done { ok: false });
        assert_eq!(r.phase, Phase::Failed("ncu was not found".into()));
    }
}
