use clap::Parser;

fn main() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some(message) = rr_tui::cli::misspelt_command(&args) {
        eprintln!("error: {message}");
        std::process::exit(2);
    }
    let cli = rr_tui::cli::Cli::parse();
    std::process::exit(rr_tui::run(cli));
}
