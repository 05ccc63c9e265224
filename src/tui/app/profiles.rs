//! Nsight Compute profiles kept per instance for the session: the recorded configuration's
//! (`P` anywhere) and one of a sweep's configurations (`P` on the tuning screen: the best, or
//! the row picked with `[`/`]`), each a profile job ([`ProfileJob`], asking for events) handed
//! to an `rr-tui job` child in the background — the same job and checks as `rr-tui profile` on
//! the command line — and cancellable. The profile screen shows one, or the two side by side
//! with the differences marked.

use std::collections::HashMap;

use rr_engine::profile::{ProfileJob, ProfileOutput, ProfileResult};
use rr_engine::replay::{Event, Tagged};

use super::replays::Phase;
use super::{App, Cmd, Screen};

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
    fn new(run: u64, label: String) -> ProfileRun {
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

/// The profile screen's state, kept for the session.
#[derive(Debug, Default)]
pub struct ProfileState {
    /// Nsight Compute profiles by instance: the recorded configuration's and a sweep's best.
    pub by_instance: HashMap<usize, Profiles>,
    /// The profile running (one at a time: ncu serialises the GPU).
    pub running: Option<(usize, Target)>,
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

    fn slot(&mut self, t: Target) -> &mut Option<ProfileRun> {
        match t {
            Target::Recorded => &mut self.recorded,
            Target::Tuned => &mut self.tuned,
        }
    }
}

impl App {
    /// Why the GPU cannot take a profile now (the record's own reason, or other GPU work), if it cannot.
    fn profile_refused(&self, i: usize) -> Option<String> {
        if let Some(blocker) = self.replay_blocker(i) {
            return Some(blocker.refusal("profile", "profiled"));
        }
        self.gpu_busy(super::gpu_work::GpuWork::Profile)
    }

    /// `P`: profile the selected instance as recorded.
    pub(super) fn start_profile(&mut self) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("no instance selected", true);
            return vec![];
        };
        self.start_profile_of(i, Target::Recorded, None, None, "recorded".into())
    }

    /// `b` on the profile screen: profile the A/B candidate (`C` on the replay screen) in the
    /// second place, beside the recorded kernel.
    pub(super) fn start_candidate_profile(&mut self) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("no instance selected", true);
            return vec![];
        };
        let Some(c) = self.settings.candidate.clone() else {
            self.set_status(
                "no A/B candidate: set one with C on the replay screen (4), then b here",
                true,
            );
            return vec![];
        };
        let label = format!("candidate: {}", rr_format::text::visible_path(&c.path));
        self.start_profile_of(i, Target::Tuned, None, Some(c), label)
    }

    /// `P` on the tuning screen: profile the configuration picked in its table (`[`/`]`; the
    /// best unless another row was picked).
    pub(super) fn start_tuned_profile(&mut self) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("no instance selected", true);
            return vec![];
        };
        let picked = self.tune.runs.get(&i).and_then(|r| {
            let listed = r.listed(self.tune.show_front);
            let at = self.tune.pick.min(listed.len().checked_sub(1)?);
            Some((at, listed[at].clone()))
        });
        let Some((at, trial)) = picked else {
            self.set_status(
                "no verified configuration yet: r starts a sweep of this instance",
                true,
            );
            return vec![];
        };
        let c = trial.config;
        if c.variant.is_some() || c.max_registers.is_some() {
            self.set_status(
                "that configuration is a compiled variant or a register limit, which profile cannot replay: profile it with `rr-tui profile` after exporting it",
                true,
            );
            return vec![];
        }
        let label = match (at, self.tune.show_front) {
            (0, false) => format!("best: {c}"),
            (n, false) => format!("#{}: {c}", n + 1),
            (n, true) => format!("front #{}: {c}", n + 1),
        };
        self.start_profile_of(
            i,
            Target::Tuned,
            Some((c.grid, c.block, c.shared_mem)),
            None,
            label,
        )
    }

    fn start_profile_of(
        &mut self,
        i: usize,
        target: Target,
        geometry: Option<([u32; 3], [u32; 3], u32)>,
        candidate: Option<rr_engine::replay::candidate::CandidateSpec>,
        label: String,
    ) -> Vec<Cmd> {
        if let Some(why) = self.profile_refused(i) {
            self.set_status(why, true);
            return vec![];
        }
        self.next_run += 1;
        let run = self.next_run;
        let job = ProfileJob {
            grid: geometry.map(|g| g.0),
            block: geometry.map(|g| g.1),
            shared_mem: geometry.map(|g| g.2),
            supplied: self.settings.supplied.supplied(),
            candidate,
            // Record directories are never written: the report goes where replays write.
            output_dir: Some(self.output_dir.clone()),
            output: ProfileOutput::Events,
            run_id: run,
            ..ProfileJob::new(self.rows[i].json_path.clone())
        };
        let name = self.rows[i].demangled.clone();
        self.set_status(
            format!("profiling {name} ({label}) with Nsight Compute… (c cancels)"),
            false,
        );
        *self.profile.by_instance.entry(i).or_default().slot(target) =
            Some(ProfileRun::new(run, label));
        self.profile.running = Some((i, target));
        self.screen = Screen::Profile;
        vec![Cmd::StartProfile {
            instance: i,
            job: Box::new(job),
        }]
    }

    pub(super) fn cancel_profile(&mut self) -> Vec<Cmd> {
        let Some((i, target)) = self.profile.running.take() else {
            self.set_status("nothing to cancel: no profile is running", false);
            return vec![];
        };
        if let Some(r) = self
            .profile
            .by_instance
            .get_mut(&i)
            .and_then(|p| p.slot(target).as_mut())
        {
            r.phase = Phase::Cancelled;
        }
        self.set_status("profile cancelled", false);
        vec![Cmd::CancelProfile]
    }

    pub(super) fn on_profile_event(&mut self, Tagged { run, event }: Tagged) {
        // Only the running profile's events count: a cancelled child may still be talking.
        let Some((i, target)) = self.profile.running else {
            return;
        };
        let done = matches!(event, Event::Done { .. });
        let Some(r) = self
            .profile
            .by_instance
            .get_mut(&i)
            .and_then(|p| p.slot(target).as_mut())
            .filter(|r| r.run == run)
        else {
            return;
        };
        r.apply(event);
        if !done {
            return;
        }
        self.profile.running = None;
        let (text, error) = match (&r.phase, &r.result) {
            (Phase::Failed(m), _) => (format!("profile failed: {m}"), true),
            (_, Some(p)) => (
                format!(
                    "profiled {} ({}): the full report is {} (ncu-ui opens it)",
                    self.rows[i].demangled, r.label, p.report
                ),
                false,
            ),
            _ => ("profile ended without a result".into(), true),
        };
        self.set_status(text, error);
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
