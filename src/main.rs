use clap::Parser;

fn main() {
    let args = rr_tui::cli::config_flags_to_command(std::env::args_os().collect());
    if let Some(message) = rr_tui::cli::misspelt_command(&args) {
        rr_tui::output::error_line(&format!("error: {message}"));
        std::process::exit(2);
    }
    let cli = match rr_tui::cli::Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // Help and version go through our output, so a closed or full stdout is an error
        // there too (clap's own printing ignores it and exits 0).
        Err(e) if !e.use_stderr() => {
            let styled = e.render();
            rr_tui::output::own_text(&match rr_tui::output::colour() {
                true => styled.ansi().to_string(),
                false => styled.to_string(),
            });
            std::process::exit(0);
        }
        // Under `--json`, a command line that does not parse is said in JSON too.
        Err(e) if rr_tui::usage_error_as_json(&args, &e) => std::process::exit(2),
        // A hidden command (`job`, `engine`): one line, read by the process that started it.
        Err(e) if rr_tui::usage_error_of_hidden(&args, &e) => std::process::exit(2),
        // A word holding a control character: clap's text with it made visible.
        Err(e) => match rr_tui::usage_error_text(&args, &e) {
            Some(text) => {
                use std::io::Write;
                let _ = std::io::stderr().lock().write_all(text.as_bytes());
                std::process::exit(e.exit_code());
            }
            None => e.exit(),
        },
    };
    rr_tui::cli::say_deprecation_notes();
    std::process::exit(rr_tui::run(cli));
}
