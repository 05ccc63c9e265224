//! The leaderboard as text: one row per candidate, best first, then why each rejected or
//! implausible candidate is.

use rr_engine::replay::leaderboard::{times, CandidateRow, Leaderboard, Status};
use rr_format::text::visible;

const PREFIX: &str = "[rr-tui]";

/// The leaderboard's lines.
pub fn render(board: &Leaderboard) -> Vec<String> {
    let mut out = vec![format!(
        "{PREFIX} Leaderboard: {} candidate(s) on {} instance(s) of kernels matching \"{}\" in {}",
        board.candidates.len(),
        board.instances.len(),
        visible(&board.kernel),
        visible(&board.dir)
    )];
    out.push(format!(
        "{:>4}  {:<28} {:>9}  {:<26} {:<24} {}",
        "rank", "candidate", "verified", "speed-up (95 % CI)", "worst instance", "verdict"
    ));
    for (i, c) in board.candidates.iter().enumerate() {
        out.push(row(i + 1, c));
    }
    for c in &board.candidates {
        for r in c.instances.iter().filter(|r| r.status != Status::Verified) {
            // An error naming the candidate's file (`k.cubin: the candidate has no kernel …`)
            // follows the candidate's name already: once is enough.
            let own = format!("{}: ", c.candidate);
            let mut r = r.clone();
            if let Some(rest) = r.reason.as_deref().and_then(|w| w.strip_prefix(&own)) {
                r.reason = Some(rest.to_string());
            }
            out.push(format!("{PREFIX} {}: {}", visible(&c.candidate), r.line()));
        }
    }
    out.push(format!(
        "{PREFIX} {}",
        if board.passed {
            "At least one candidate verified on every instance"
        } else {
            "No candidate verified on every instance"
        }
    ));
    out
}

fn row(rank: usize, c: &CandidateRow) -> String {
    let speed = match (c.geomean_speedup, c.geomean_ci) {
        (Some(g), Some(ci)) => format!("{} [{:.3}–{:.3}]", times(g), ci[0], ci[1]),
        _ => "—".into(),
    };
    let worst = c
        .worst
        .as_ref()
        .map(|w| format!("{} {}", times(w.speedup), visible(&w.instance)))
        .unwrap_or_else(|| "—".into());
    format!(
        "{rank:>4}  {:<28} {:>9}  {:<26} {:<24} {}",
        visible(&c.candidate),
        format!("{}/{}", c.verified, c.total),
        speed,
        worst,
        c.verdict.describe()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rr_engine::replay::leaderboard::InstanceResult;

    #[test]
    fn rows_say_verified_speedup_worst_and_verdict() {
        let a: Vec<f64> = (0..10).map(|i| 1000.0 + i as f64).collect();
        let b: Vec<f64> = (0..10).map(|i| 500.0 + i as f64 * 0.5).collect();
        let ok = InstanceResult {
            status: Status::Verified,
            reason: None,
            ..InstanceResult::error("1_2.json", "")
        }
        .with_compare(rr_engine::replay::ab::judge(&a, &b).unwrap());
        let bad = InstanceResult {
            status: Status::Wrong,
            ..InstanceResult::error("3_4.json", "4096 bytes differ")
        };
        let named = InstanceResult::error("3_4.json", "b.fatbin: the candidate has no kernel k");
        let board = Leaderboard::new(
            "rec",
            "scale",
            vec!["1_2.json".into(), "3_4.json".into()],
            vec![
                CandidateRow::of("b.fatbin", vec![ok.clone(), named]),
                CandidateRow::of("cheat.cu", vec![ok.clone(), bad]),
                CandidateRow::of("fast.cu", vec![ok.clone(), ok]),
            ],
        );
        let lines = render(&board);
        assert!(
            lines[2].contains("fast.cu") && lines[2].contains("2/2"),
            "{lines:#?}"
        );
        assert!(
            lines[2].contains("2.000×") && lines[2].ends_with("faster"),
            "{lines:#?}"
        );
        assert!(lines[3].contains("b.fatbin") && lines[3].ends_with("rejected"));
        assert!(lines[4].contains("cheat.cu") && lines[4].ends_with("rejected"));
        // The candidate's path once, not again in its error.
        assert!(
            lines[5].ends_with("b.fatbin: 3_4.json: ERROR: the candidate has no kernel k"),
            "{lines:#?}"
        );
        assert!(
            lines[6].contains("3_4.json: WRONG: 4096 bytes differ"),
            "{lines:#?}"
        );
        assert!(lines.last().unwrap().contains("At least one candidate"));
    }
}
