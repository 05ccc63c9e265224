//! The interactive explorer: `App` (state, updated by messages), `ui::draw` (a pure function of
//! the state), one key map, and a runtime that turns terminal input, signals, replay child
//! processes and diff-index jobs into messages.

pub mod app;
mod executor;
pub mod format;
pub mod keymap;
mod keytable;
pub mod layout;
mod runtime;
pub mod ui;
mod widgets;
pub mod wrap;

use std::io::IsTerminal;
use std::path::PathBuf;

use crate::cli::ExploreArgs;
use crate::error::{Error, Result};
use crate::settings::{config, theme};

/// Why replay cannot run in this environment, if it cannot.
pub fn gpu_status() -> std::result::Result<(), String> {
    rr_engine::replay::gpu_status()
}

/// Load a directory into a fresh `App` (used by the runtime, the tests and the benchmarks).
pub fn load_app(
    dir: PathBuf,
    gpu: std::result::Result<(), String>,
    output_dir: PathBuf,
) -> Result<app::App> {
    let (rd, rows, pending) = app::instances::load(&dir)?;
    // A directory that holds no record may hold record directories: it starts on their picker,
    // which searches for them on a worker once the first frame is drawn, and becomes the empty
    // record it is if there are none. (`load` has moved the instances into the rows.)
    if rows.is_empty() && rd.holds_nothing() {
        return Ok(app::App::with_picker(dir, gpu, output_dir));
    }
    let mut app = app::App::new(dir, rows, gpu, output_dir);
    app.recorder = rd.recorder_summary();
    app.pending_rows = pending;
    Ok(app)
}

/// Open a sweep's `--json-out` file (`rr-tui SWEEP.json`): the record directory of the
/// instance it is of, on that instance's tuning screen showing the sweep, at once (the tests
/// and benchmarks; in a terminal the explorer reads it on a worker after its first frame,
/// `App::opening_sweep`, and shows the same). The session's settings (`config`) are applied first: the tuning form then
/// takes the sweep's axes and `simulate SWEEP.json` over the config's defaults, not the other
/// way round.
pub fn load_sweep_app(
    sweep: app::screens::tune::sweepfile::SweepFile,
    gpu: std::result::Result<(), String>,
    output_dir: PathBuf,
    config: &config::Config,
) -> Result<app::App> {
    let mut app = load_app(sweep.record_dir(), gpu, output_dir)?;
    apply(config, &mut app);
    app.show_sweep(sweep).map_err(Error::invalid)?;
    Ok(app)
}

/// Start the explorer's session with the settings of the config file (and the flags).
pub fn apply(config: &config::Config, app: &mut app::App) {
    app.settings.repetitions = config.repetitions;
    app.settings.tolerance = config.tolerance;
    app.tune.form.settings = config.tune.clone();
}

pub fn run(args: ExploreArgs) -> Result<i32> {
    // The settings first: a broken config or theme file is said (exit 2) even without a terminal.
    let (config, _) = config::load(&args.config)?;
    let config = config.with_flags(args.theme, args.theme_file.clone());
    let theme = theme::Theme::load(config.theme, config.theme_file.as_deref())?;
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    // A file is a sweep to show (a directory is a record). Without a terminal it is read
    // before the terminal is refused, so that a file that is no sweep is said in scripts too;
    // in one, the first frame is drawn at once and a worker reads it ("reading SWEEP.json…").
    let file = match std::fs::metadata(&dir) {
        Ok(m) if !m.is_dir() => Some(dir.clone()),
        _ => None,
    };
    // An instance's descriptor opens its record directory with that instance selected.
    let (sweep, descriptor) = match file {
        Some(f) if rr_format::Descriptor::read(&f).is_ok() => (None, Some(f)),
        other => (other, None),
    };
    let dir = match &descriptor {
        Some(d) => d
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), PathBuf::from),
        None => dir,
    };
    if !std::io::stdout().is_terminal() {
        if let Some(path) = &sweep {
            app::screens::tune::sweepfile::SweepFile::read(path)?;
        }
        return Err(Error::invalid("the explorer needs a terminal (stdout is not a TTY); for scripts use `rr-tui report DIR`, `inspect`, `check`, `diff` or `replay`"));
    }
    // Replays write `.replay_output` here, never into the record directory. An unpredictable
    // name, created fresh (mode 0700), removed at exit: nobody can plant a link in it.
    let session = tempfile::Builder::new()
        .prefix("rr-tui-session-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let output_dir = session.path().to_path_buf();
    let app = match sweep {
        Some(path) => {
            let mut app = app::App::opening_sweep(path, gpu_status(), output_dir);
            apply(&config, &mut app);
            app
        }
        None => {
            let mut app = load_app(dir, gpu_status(), output_dir)?;
            apply(&config, &mut app);
            if let Some(d) = &descriptor {
                app.select_descriptor(d);
            }
            app
        }
    };
    let result = runtime::run(app, theme, config.mouse);
    drop(session);
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_settings_start_the_session() {
        let config = config::Config::parse(
            "[replay]\nrepetitions = 7\ntolerance = \"f32:ulp=4\"\n[tune]\nblock = \"64\"",
            std::path::Path::new("/etc"),
        )
        .unwrap();
        let mut app = app::App::new(PathBuf::from("."), vec![], Ok(()), PathBuf::from("."));
        assert_eq!(app.settings.repetitions, app::DEFAULT_REPETITIONS);
        apply(&config, &mut app);
        assert_eq!(app.settings.repetitions, 7);
        assert_eq!(
            app.settings.tolerance,
            crate::cli::parse_tolerance("f32:ulp=4").ok()
        );
        assert_eq!(app.tune.form.settings.block, "64");
        assert_eq!(app.tune.form.settings.grid, "cover");
    }
}
