//! The replay settings' prompts (`n`, `D`, `B`, `T`, `C`, `I`, `A`): each opens holding the
//! value in force, and its text is checked by the parser of the `replay` flag it stands for
//! (refused with why, the prompt staying open, when it cannot be used). The settings are the
//! `App`'s: sweeps, profiles and the leaderboard read them too.

use rr_engine::diff::Comparison;

use crate::tui::app::prompt::PromptKind;
use crate::tui::app::{dim3, App};
use crate::tui::keymap::Action;

/// The prompt of the replay setting `a` edits, holding the setting's value in force.
pub(super) fn open_prompt(app: &mut App, a: Action) {
    let settings = &app.settings;
    let (kind, text) = match a {
        Action::EditRepetitions => (PromptKind::Repetitions, settings.repetitions.to_string()),
        Action::EditGrid => (
            PromptKind::Grid,
            settings.grid.map(dim3).unwrap_or_default(),
        ),
        Action::EditBlock => (
            PromptKind::Block,
            settings.block.map(dim3).unwrap_or_default(),
        ),
        Action::EditTolerance => (
            PromptKind::Tolerance,
            settings.tolerance.map(|c| c.to_spec()).unwrap_or_default(),
        ),
        Action::EditCandidate => (
            PromptKind::Candidate,
            settings
                .candidate
                .as_ref()
                .map(crate::cli::candidate_text)
                .unwrap_or_default(),
        ),
        Action::EditImage => (
            PromptKind::Image,
            settings
                .supplied
                .image
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ),
        Action::EditBaseAddress => (
            PromptKind::BaseAddress,
            settings
                .supplied
                .base_address
                .map(|a| format!("{a:#x}"))
                .unwrap_or_default(),
        ),
        _ => return,
    };
    app.open_prompt(kind, text);
}

/// A setting's prompt applied: what replays now do, or why the text cannot be used.
pub(super) fn apply_prompt(app: &mut App, kind: PromptKind, text: &str) -> Result<String, String> {
    match kind {
        PromptKind::Repetitions => {
            let n = crate::cli::parse_repetitions(text)?;
            app.settings.repetitions = n;
            Ok(format!("replays run {n} repetition(s)"))
        }
        PromptKind::Grid | PromptKind::Block => apply_geometry(app, kind, text),
        PromptKind::Image => apply_image(app, text),
        PromptKind::Candidate => apply_candidate(app, text),
        PromptKind::BaseAddress => {
            let supplied = &mut app.settings.supplied;
            supplied.base_address = match text {
                "" => None,
                t => Some(crate::cli::parse_address(t)?),
            };
            Ok(match supplied.base_address {
                Some(a) => format!("LLVM 16–17 records replay with their memory at {a:#x}"),
                None => "LLVM 16–17 records replay where their start is inferred".into(),
            })
        }
        PromptKind::Tolerance => {
            let value = match text {
                "" => None,
                t => Some(Comparison::parse_spec(t)?),
            };
            app.settings.tolerance = value;
            Ok(match value {
                Some(c) => format!("v verifies with tolerance {}", c.describe()),
                None => "v verifies byte for byte".to_string(),
            })
        }
        _ => Err(format!(
            "the {} prompt is not the replay screen's",
            kind.label()
        )),
    }
}

/// The grid or block override (`kind`), checked against the hardware limits replay
/// applies, with the other of the two as it stands.
fn apply_geometry(app: &mut App, kind: PromptKind, text: &str) -> Result<String, String> {
    let what = if kind == PromptKind::Grid {
        "grid"
    } else {
        "block"
    };
    let value = match text {
        "" => None,
        t => Some(crate::cli::parse_dim3(t)?),
    };
    // The hardware limits replay applies, checked as the value is given.
    if let Some(v) = value {
        let (grid, block) = match kind {
            PromptKind::Grid => (v, app.settings.block.unwrap_or([1, 1, 1])),
            _ => (app.settings.grid.unwrap_or([1, 1, 1]), v),
        };
        if let Some(why) = rr_format::limits::geometry_problem(grid, block) {
            return Err(why);
        }
    }
    if kind == PromptKind::Grid {
        app.settings.grid = value;
    } else {
        app.settings.block = value;
    }
    // The old X,Y,Z is taken as `replay --grid` takes it, with the same advice.
    let old_spelling = if text.contains(',') {
        " (X,Y,Z is deprecated: write XxYxZ)"
    } else {
        ""
    };
    Ok(match value {
        Some(v) => format!("{what} override {}{old_spelling}", dim3(v)),
        None => format!("{what} as recorded"),
    })
}

/// `I`'s prompt: the kernel's image file for records that lack it (`--image`).
fn apply_image(app: &mut App, text: &str) -> Result<String, String> {
    let supplied = &mut app.settings.supplied;
    supplied.image = match text {
        "" => None,
        // A regular file (the replay reads it by the same rule later).
        t => {
            rr_format::fsio::regular_metadata(std::path::Path::new(t))
                .map_err(|e| e.to_string())?;
            Some(std::path::PathBuf::from(t))
        }
    };
    Ok(match &supplied.image {
        Some(p) => format!(
            "replays and sweeps load {}",
            rr_format::text::visible_path(p)
        ),
        None => "replays load the recorded image".into(),
    })
}

/// `C`'s prompt: one candidate for A/B replays, or several for a leaderboard.
fn apply_candidate(app: &mut App, text: &str) -> Result<String, String> {
    let mut specs = crate::tui::app::leaderboard::parse_candidates(text)?;
    if specs.len() > 1 {
        for c in &specs {
            rr_format::fsio::regular_metadata(&c.path).map_err(|e| e.to_string())?;
        }
        // Started when the prompt closes (`ReplayScreen::prompt_closed`).
        app.replay.asked_candidates = std::mem::take(&mut specs);
        return Ok("ranking the candidates on every instance of the kernel…".into());
    }
    let spec = specs.pop();
    // A regular file; the replay's own checks read it (on a worker) later.
    if let Some(c) = &spec {
        rr_format::fsio::regular_metadata(&c.path).map_err(|e| e.to_string())?;
    }
    app.settings.candidate = spec;
    Ok(match &app.settings.candidate {
        Some(c) => format!(
            "r and v check and replay A/B against {}",
            rr_format::text::visible_path(&c.path)
        ),
        None => "replays run the recorded kernel alone".into(),
    })
}
