//! Opening a pair: its two snapshots are mapped on a worker (recorded input and output, or
//! recorded output and a replay's output), then indexed by a job of their own.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rr_engine::snapshot::Snapshot;
use rr_format::memory::MemoryMap;
use rr_format::{Descriptor, InstanceFiles};

use super::view::{Pair, SnapView};
use super::SnapshotsScreen;
use crate::tui::app::replays::SAVED_OUTPUT_LIMIT;
use crate::tui::app::{App, Cmd, Msg, OpenedPair, ReplayBlocker, Work};

impl SnapshotsScreen {
    /// Ask a worker to map the two snapshots of a pair of the selection; indexing starts when
    /// they arrive.
    pub fn open(app: &mut App, pair: Pair) -> Vec<Cmd> {
        let Some(i) = app.current() else {
            app.set_status("no instance selected", true);
            return vec![];
        };
        let json = app.rows[i].json_path.clone();
        let replay_output = match pair {
            Pair::InputOutput => None,
            Pair::OutputReplay => match replay_output(app, i) {
                Ok(p) => Some(p),
                Err(why) => {
                    app.set_status(why, true);
                    return vec![];
                }
            },
        };
        app.snapshots.opening = Some((i, pair));
        vec![Cmd::Work(Work::new(move || Msg::SnapshotsOpened {
            instance: i,
            pair,
            result: open_pair(&json, replay_output.as_deref()),
        }))]
    }

    /// The two snapshots a worker mapped: the view shows them (in the type and byte order of
    /// the view before), and their index starts.
    pub fn on_opened(
        app: &mut App,
        instance: usize,
        pair: Pair,
        result: Result<OpenedPair, String>,
    ) -> Vec<Cmd> {
        let s = &mut app.snapshots;
        if s.opening != Some((instance, pair)) {
            return vec![]; // superseded by a later request
        }
        s.opening = None;
        let o = match result {
            Ok(o) => o,
            Err(e) => {
                s.pending = None; // nothing to apply it to
                app.set_status(e, true);
                return vec![];
            }
        };
        s.next_job += 1;
        let view = SnapView::new(instance, pair, o.a.clone(), o.b.clone(), o.map, s.next_job);
        let dtype = s.view.as_ref().and_then(|v| v.dtype);
        let big_endian = s.view.as_ref().is_some_and(|v| v.big_endian);
        s.view = Some(SnapView {
            dtype,
            big_endian,
            // One snapshot on both sides: every row is "equal", so none is squeezed.
            squeeze: o.note.is_none(),
            ..view
        });
        let job = s.next_job;
        if let Some(note) = o.note {
            app.set_status(note, false);
        }
        app.relayout();
        let mut cmds = vec![Cmd::StartIndex {
            job,
            a: o.a,
            b: o.b,
        }];
        cmds.extend(Self::apply_pending(app));
        cmds
    }
}

/// The replay output of instance `i` to compare with its recorded output: this session's
/// replay's, else a legacy record's; or why there is none.
fn replay_output(app: &App, i: usize) -> Result<PathBuf, String> {
    let row = &app.rows[i];
    let run = app.replay.runs.get(&i);
    if let Some(p) = run
        .and_then(|r| r.saved.clone())
        .map(PathBuf::from)
        .or_else(|| row.old_replay_output.clone())
    {
        return Ok(p);
    }
    if run.is_some() && row.input_len.is_some_and(|n| n > SAVED_OUTPUT_LIMIT) {
        return Err(format!(
            "the explorer keeps no replay output over {}: `rr-tui replay {} --verify --save-output` writes it",
            humansize::format_size(SAVED_OUTPUT_LIMIT, humansize::BINARY),
            // Quoted, so that the command runs as pasted.
            shell_words::quote(&rr_format::text::visible_path(&row.json_path))
        ));
    }
    // `v` makes one only where a replay can run: else say why not, as the replay screen does.
    let cannot = "no replay output for this instance, and v cannot make one";
    match app.replay_blocker(i) {
        None => Err("no replay output for this instance yet: press v to replay and verify".into()),
        Some(ReplayBlocker::Machine(why)) => {
            Err(format!("{cannot}: replay is unavailable here: {why}"))
        }
        Some(ReplayBlocker::Record(why)) => {
            Err(format!("{cannot}: this instance cannot be replayed: {why}"))
        }
    }
}

/// Map both snapshots of a pair (recorded input and output, or recorded output and a replay's
/// output) and build the memory map that labels them (on a worker).
fn open_pair(json: &Path, replay_output: Option<&Path>) -> Result<OpenedPair, String> {
    use rr_engine::snapshot::open_recorded;
    use rr_format::instance::Side;
    let text = |e: rr_engine::Error| e.to_string();
    let d = Descriptor::read(json).map_err(|e| e.to_string())?;
    let files = InstanceFiles::from_descriptor_path(json);
    let (a, b, note) = match replay_output {
        None => {
            let input = Arc::new(open_recorded(&files, &d, Side::Input).map_err(text)?);
            match open_recorded(&files, &d, Side::Output) {
                Ok(output) => (input, Arc::new(output), None),
                // Recorded without its output: the input is still worth browsing.
                Err(rr_engine::Error::Record(e)) if e.is_not_found() => (
                    input.clone(),
                    input,
                    Some("no output was recorded for this instance: the recorded input, shown on both sides".to_string()),
                ),
                Err(e) => return Err(text(e)),
            }
        }
        Some(p) => (
            Arc::new(open_recorded(&files, &d, Side::Output).map_err(text)?),
            Arc::new(Snapshot::open(p).map_err(text)?),
            None,
        ),
    };
    let map = MemoryMap::new(&d, a.len());
    Ok(OpenedPair { a, b, map, note })
}
