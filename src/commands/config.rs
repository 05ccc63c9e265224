//! `rr-tui config`: which config file the explorer reads, and the settings in effect, printed as
//! a config file; `--default` prints the documented default (`assets/config.toml`).

use crate::cli::ConfigCommandArgs;
use crate::error::Result;
use crate::output;
use crate::settings::config::{self, Source, DEFAULT_CONFIG};
use crate::settings::theme::{no_color_requested, Theme};

pub fn run(args: &ConfigCommandArgs) -> Result<i32> {
    if args.default {
        output::own_text(DEFAULT_CONFIG);
        return Ok(0);
    }
    let (config, source) = config::load(&args.file)?;
    // The theme file is checked as the explorer checks it when it starts.
    Theme::load(config.theme, config.theme_file.as_deref())?;
    let mut lines = vec![
        "# The explorer's settings in effect (flags such as --theme still win over them)."
            .to_string(),
        format!("# config file: {}", source_line(&source)),
    ];
    if no_color_requested() {
        lines.push("# NO_COLOR is set: the explorer draws in mono whatever the theme".into());
    }
    lines.extend(config.to_toml().lines().map(str::to_string));
    output::lines(lines);
    Ok(0)
}

pub(crate) fn source_line(source: &Source) -> String {
    match source {
        Source::File(p) => p.display().to_string(),
        Source::Absent(p) => match std::fs::read_link(p) {
            // A link to nothing is taken as no file; say so, it is likely a mistake.
            Ok(target) => format!(
                "{} (a dangling link to {}: the built-in defaults)",
                p.display(),
                target.display()
            ),
            Err(_) => format!("{} (not found: the built-in defaults)", p.display()),
        },
        Source::Nowhere => {
            "none (neither XDG_CONFIG_HOME nor HOME is an absolute path): the built-in defaults"
                .into()
        }
        Source::Ignored => "none (--no-config): the built-in defaults".into(),
    }
}
