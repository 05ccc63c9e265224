//! The Replay screen's leaderboard: `C` given several candidate files ranks them on every
//! recorded instance of the selected instance's kernel. The work is an A/B job ([`AbJob`], its
//! leaderboard in JSON) that the executor hands to `rr-tui job` (the line on its input) in a
//! process of its own (as a replay is: a faulting candidate takes nothing of the explorer with
//! it); its one JSON document comes back as [`Msg::Leaderboard`](super::Msg::Leaderboard).
//! Enter on the Replay screen shows each candidate's per-instance results in turn.

use rr_engine::replay::ab_job::AbJob;
use rr_engine::replay::candidate::CandidateSpec;
use rr_engine::replay::leaderboard::Leaderboard;

use super::gpu_work::GpuWork;
use super::{App, Cmd};

/// Where the leaderboard stands.
#[derive(Debug, Clone, PartialEq)]
pub enum LeaderboardState {
    /// `rr-tui ab` is running.
    Running,
    Done(Box<Leaderboard>),
    Failed(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct LeaderboardView {
    /// The kernel's readable name, and the candidate files as given.
    pub kernel: String,
    pub candidates: Vec<String>,
    pub state: LeaderboardState,
    /// The candidate whose per-instance results are shown (None: the table).
    pub detail: Option<usize>,
    /// The run this view waits for: a cancelled run's late answer is not this one's.
    pub run: u64,
}

/// `FILE… [-D N=V]… [--nvrtc-opt=O]… [--candidate-kernel K]`: the candidate files (the words
/// before the first flag), each with the flags, parsed by `replay`'s own flags (through the
/// one-candidate prompt's parser). Empty: no candidate.
pub fn parse_candidates(text: &str) -> Result<Vec<CandidateSpec>, String> {
    let words = shell_words::split(text).map_err(|e| format!("{e} (quote paths with spaces)"))?;
    let files = words.iter().take_while(|w| !w.starts_with('-')).count();
    let flags = &words[files..];
    let mut specs = Vec::with_capacity(files);
    for file in &words[..files] {
        let one: Vec<String> = std::iter::once(file.clone())
            .chain(flags.iter().cloned())
            .collect();
        if let Some(spec) = crate::cli::parse_candidate(&shell_words::join(&one))? {
            specs.push(spec);
        }
    }
    Ok(specs)
}

/// `name` as a regular expression that matches it alone.
fn exactly(name: &str) -> String {
    let mut re = String::from("^");
    for c in name.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            re.push('\\');
        }
        re.push(c);
    }
    re.push('$');
    re
}

impl App {
    /// Rank `specs` on every instance of the selected instance's kernel (refused, with why,
    /// while other GPU work runs).
    pub(super) fn start_leaderboard(&mut self, specs: Vec<CandidateSpec>) -> Vec<Cmd> {
        let Some(i) = self.current() else {
            self.set_status("no instance selected", true);
            return vec![];
        };
        if let Some(why) = self.gpu_busy(GpuWork::Leaderboard) {
            self.set_status(why, true);
            return vec![];
        }
        let row = &self.rows[i];
        let job = ab_job(
            &self.dir,
            &row.kernel,
            self.settings.repetitions,
            self.settings.tolerance.as_ref(),
            &self.settings.supplied,
            &specs,
        );
        let kernel = row.demangled.clone();
        let run = self.jobs.begin(GpuWork::Leaderboard, i);
        self.replay.leaderboard = Some(LeaderboardView {
            kernel,
            candidates: specs.iter().map(|s| s.path.display().to_string()).collect(),
            state: LeaderboardState::Running,
            detail: None,
            run,
        });
        vec![Cmd::StartLeaderboard {
            job: Box::new(job),
            record: self.record_serial,
            run,
        }]
    }

    /// Leaderboard `run` came back (or why not); the answer of a run this view no longer
    /// waits for (cancelled, another started since) changes nothing.
    pub(super) fn on_leaderboard(&mut self, run: u64, result: Result<Box<Leaderboard>, String>) {
        let Some(view) = self.replay.leaderboard.as_mut().filter(|v| v.run == run) else {
            return;
        };
        self.jobs.end(GpuWork::Leaderboard);
        let said = match &result {
            Ok(b) => format!(
                "leaderboard: {} candidate(s) on {} instance(s){}",
                b.candidates.len(),
                b.instances.len(),
                if b.passed {
                    ""
                } else {
                    "; none verified on every instance"
                }
            ),
            Err(e) => format!("leaderboard: {e}"),
        };
        let failed = result.is_err();
        view.state = match result {
            Ok(b) => LeaderboardState::Done(b),
            Err(e) => LeaderboardState::Failed(e),
        };
        view.detail = None;
        self.set_status(said, failed);
    }

    /// `c` on the Replay screen with no replay running: end a leaderboard being made, if one is.
    pub(super) fn cancel_leaderboard(&mut self) -> Option<Vec<Cmd>> {
        let (_, cmd) = self.jobs.cancel(GpuWork::Leaderboard)?;
        if let Some(view) = self.replay.leaderboard.as_mut() {
            view.state = LeaderboardState::Failed("cancelled".into());
        }
        self.set_status(
            "leaderboard cancelled: rr-tui ab and its workers end",
            false,
        );
        Some(vec![cmd])
    }

    /// Enter on the Replay screen: the next candidate's per-instance results, then the table
    /// again.
    pub(super) fn leaderboard_next(&mut self) {
        let Some(view) = self.replay.leaderboard.as_mut() else {
            self.set_status(
                "no leaderboard: C with several candidate files ranks them on every instance",
                false,
            );
            return;
        };
        let LeaderboardState::Done(board) = &view.state else {
            return;
        };
        let n = board.candidates.len();
        view.detail = match view.detail {
            None if n > 0 => Some(0),
            Some(k) if k + 1 < n => Some(k + 1),
            _ => None,
        };
    }
}

/// The A/B job that ranks `specs` on every instance in `dir` of `kernel` (the mangled name,
/// matched exactly), with the Replay screen's repetitions (when at least
/// [`rr_engine::replay::ab::MIN_PAIRS`]; else `ab`'s default), tolerance and what a legacy record
/// lacks; its leaderboard in JSON.
fn ab_job(
    dir: &std::path::Path,
    kernel: &str,
    repetitions: u32,
    tolerance: Option<&rr_engine::diff::Comparison>,
    supplied: &crate::cli::SuppliedArgs,
    specs: &[CandidateSpec],
) -> AbJob {
    let mut job = AbJob::new(dir.to_path_buf(), exactly(kernel), specs.to_vec());
    if repetitions as usize >= rr_engine::replay::ab::MIN_PAIRS {
        job.pairs = repetitions;
    }
    job.tolerance = tolerance.copied();
    // What a legacy record lacks, as the Replay screen's replays are given it.
    job.supplied = supplied.supplied();
    job.json = true;
    job
}

/// The leaderboard in `ab --json`'s output, or the error it printed instead.
pub fn board_of(out: &[u8]) -> Result<Box<Leaderboard>, String> {
    if let Ok(b) = serde_json::from_slice::<Leaderboard>(out) {
        return Ok(Box::new(b));
    }
    let error: Option<String> = serde_json::from_slice::<serde_json::Value>(out)
        .ok()
        .and_then(|v| Some(v.get("message")?.as_str()?.to_string()));
    Err(error.unwrap_or_else(|| "rr-tui ab gave no leaderboard".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_files_share_the_flags() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.cu"), dir.path().join("b b.cu"));
        let text = format!(
            "{} {} -D TILE=8 --nvrtc-opt=--use_fast_math",
            shell_words::quote(&a.display().to_string()),
            shell_words::quote(&b.display().to_string())
        );
        let specs = parse_candidates(&text).unwrap();
        assert_eq!(specs.len(), 2);
        assert_eq!(specs[1].path, b);
        assert_eq!(specs[1].defines[0].name, "TILE");
        assert_eq!(specs[0].options, ["--use_fast_math"]);
        assert!(parse_candidates("").unwrap().is_empty());
        assert!(parse_candidates("a.cu -D").is_err());
    }

    /// The explorer builds the job `ab`'s command line asks for: every file with the flags, the
    /// kernel matched exactly, the repetitions, tolerance and what a legacy record lacks, the
    /// leaderboard in JSON; and the job reads back as it was sent.
    #[test]
    fn the_explorers_job_is_the_one_abs_command_line_asks_for() {
        let specs = parse_candidates("a.cu 'b b.cu' c.cubin -D TILE=8").unwrap();
        let tol = rr_engine::diff::Comparison::parse_spec("f32:rtol=1e-5").ok();
        let supplied = crate::cli::SuppliedArgs {
            assume_llvm18: true,
            ..Default::default()
        };
        let job = ab_job(
            std::path::Path::new("rec"),
            "_Z4scalePfi",
            20,
            tol.as_ref(),
            &supplied,
            &specs[..2],
        );
        let argv = [
            "rr-tui",
            "ab",
            "rec",
            "--kernels=^_Z4scalePfi$",
            "--json",
            "--repetitions=20",
            "--tolerance=f32:rtol=1e-5",
            "--assume-llvm18",
            "--candidate",
            "a.cu",
            "--candidate",
            "b b.cu",
            "-D",
            "TILE=8",
        ];
        let cli = <crate::cli::Cli as clap::Parser>::try_parse_from(argv).unwrap();
        let Some(crate::cli::Command::Ab(a)) = cli.command else {
            panic!("not ab");
        };
        assert_eq!(a.job(), job);
        assert_eq!((job.pairs, job.json), (20, true));
        assert_eq!(job.candidates.len(), 2);
        job.check().unwrap();
        let line = rr_engine::job::encode(&job).unwrap();
        assert_eq!(rr_engine::job::decode::<AbJob>(&line), Ok(job));
        // Fewer repetitions than a verdict needs: `ab`'s default.
        let few = ab_job(
            std::path::Path::new("rec"),
            "k",
            1,
            None,
            &Default::default(),
            &specs[..1],
        );
        assert_eq!(few.pairs, rr_engine::replay::ab::DEFAULT_PAIRS);
        assert_eq!(few.verify(), rr_engine::replay::Verify::Bytes);
    }

    #[test]
    fn the_kernel_is_matched_exactly() {
        assert_eq!(exactly("_Z4scalePfi"), "^_Z4scalePfi$");
        assert_eq!(exactly("a.b$c"), "^a\\.b\\$c$");
    }

    #[test]
    fn the_document_or_the_error_it_says() {
        let e = board_of(br#"{"event":"error","kind":"setup","message":"no CUDA driver"}"#);
        assert_eq!(e.unwrap_err(), "no CUDA driver");
        assert!(board_of(b"garbage").is_err());
    }
}
