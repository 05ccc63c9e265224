use clap::Parser;

fn main() {
    let cli = rr_tui::cli::Cli::parse();
    std::process::exit(rr_tui::run(cli));
}
