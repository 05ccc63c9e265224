//! The record report libomptarget prints at exit (llvm-record-format.md §1.3).
//!
//! It is found either in a file written with `LIBOMPTARGET_RECORD_REPORT_FILENAME` or embedded in
//! a captured application log (it goes to stdout by default): we search for the banner lines.

use memchr::memmem;

pub const BEGIN: &str = "=== Kernel Record Report ===";
pub const END: &str = "=== End Kernel Record Report ===";
const OLD_BEGIN: &str = "=== record report begin ===";
const OLD_END: &str = "=== record report end ===";

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReportRow {
    pub json_file: String,
    pub kernel_name: String,
    #[serde(serialize_with = "crate::text::exact_opt_u64::serialize")]
    pub time_ns: Option<u64>,
    #[serde(serialize_with = "crate::text::exact_opt_u64::serialize")]
    pub occurrences: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Report {
    pub directory: Option<String>,
    #[serde(serialize_with = "crate::text::exact_opt_u64::serialize")]
    pub total_instances: Option<u64>,
    pub rows: Vec<ReportRow>,
    /// What rr-tui's recorder adds after LLVM's table: the launch counts and why launches were
    /// not recorded (absent in LLVM's reports and older rr-tui ones).
    pub summary: Option<RecorderSummary>,
    /// rr-tui's other lines after the table (`rr-tui: …`, without the prefix).
    pub notes: Vec<String>,
    /// The report as the file holds it, from its begin banner to its end banner (current
    /// format): `rr-tui report` prints these lines as they are.
    #[serde(skip)]
    pub text: Option<String>,
    /// Why the recorder's lines were not taken as they stand (malformed, contradictory or cut),
    /// when they were not: `check` warns with it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trailer_problem: Option<String>,
}

/// Prefix of rr-tui's lines after LLVM's end banner (where LLVM's own readers stop).
pub const TRAILER_PREFIX: &str = "rr-tui: ";
/// Trailer lines beyond this many are not read (a hostile report cannot grow the explorer).
const MAX_TRAILER_LINES: usize = 1000;
const MAX_TRAILER_LINE: usize = 4096;

/// The most distinct reasons a sum of summaries lists (a recorder has a dozen kinds; more
/// come only from hand-made reports, and would flood the output).
pub const MAX_MERGED_REASONS: usize = 64;

/// The recorder's account of a program's kernel launches: how many it saw (stream launches and
/// executions of graph kernel nodes), how many its selection rules picked, how many it recorded,
/// and for the rest why not, most frequent first.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct RecorderSummary {
    #[serde(with = "crate::text::exact_u64")]
    pub seen: u64,
    #[serde(with = "crate::text::exact_u64")]
    pub selected: u64,
    #[serde(with = "crate::text::exact_u64")]
    pub recorded: u64,
    /// `(launches, reason)`.
    #[serde(with = "crate::text::exact_counted")]
    pub not_recorded: Vec<(u64, String)>,
}

impl RecorderSummary {
    /// The summaries of several processes as one: counts added (saturating: hostile reports
    /// may hold any number), reasons merged by their text in one pass, most frequent first; past
    /// [`MAX_MERGED_REASONS`] distinct reasons the rest are counted as one.
    pub fn sum<'a>(all: impl IntoIterator<Item = &'a RecorderSummary>) -> RecorderSummary {
        let mut total = RecorderSummary::default();
        let mut by_reason: std::collections::HashMap<&str, u64> = Default::default();
        for s in all {
            total.seen = total.seen.saturating_add(s.seen);
            total.selected = total.selected.saturating_add(s.selected);
            total.recorded = total.recorded.saturating_add(s.recorded);
            for (n, why) in &s.not_recorded {
                let count = by_reason.entry(why.as_str()).or_default();
                *count = count.saturating_add(*n);
            }
        }
        let mut reasons: Vec<(u64, String)> = by_reason
            .into_iter()
            .map(|(why, n)| (n, why.to_string()))
            .collect();
        reasons.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        if reasons.len() > MAX_MERGED_REASONS {
            let rest = reasons.split_off(MAX_MERGED_REASONS - 1);
            let n = rest.iter().fold(0u64, |t, (n, _)| t.saturating_add(*n));
            reasons.push((n, format!("for {} other reasons", rest.len())));
        }
        total.not_recorded = reasons;
        total
    }

    /// The trailer lines (without the `rr-tui: ` prefix).
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!(
            "launches: {} seen, {} selected, {} recorded",
            self.seen, self.selected, self.recorded
        )];
        for (n, why) in &self.not_recorded {
            out.push(format!("not recorded: {n} {why}"));
        }
        out
    }

    /// One line for a header: `1234 launches seen, 18 recorded; not recorded: 1214 not selected, …`.
    pub fn headline(&self) -> String {
        let mut s = format!(
            "{} launch(es) seen, {} selected, {} recorded",
            self.seen, self.selected, self.recorded
        );
        if !self.not_recorded.is_empty() {
            let reasons: Vec<String> = self
                .not_recorded
                .iter()
                .map(|(n, why)| format!("{n} {why}"))
                .collect();
            s.push_str(&format!("; not recorded: {}", reasons.join("; ")));
        }
        s
    }
}

/// `N seen, N selected, N recorded`, labels and order exact.
fn parse_launches(rest: &str) -> Option<[u64; 3]> {
    let mut out = [0u64; 3];
    let mut parts = rest.split(", ");
    for (slot, label) in out.iter_mut().zip(["seen", "selected", "recorded"]) {
        let (n, l) = parts.next()?.split_once(' ')?;
        if l != label {
            return None;
        }
        *slot = n.parse().ok()?;
    }
    parts.next().is_none().then_some(out)
}

/// rr-tui's lines after the end banner: one `launches:` line, then `not recorded:` lines,
/// then notes; bounded. A trailer that is malformed, contradicts itself (more launches
/// recorded than selected, or selected than seen) or is cut gives no summary, its lines are
/// kept as notes, and `trailer_problem` says why.
fn parse_trailer(after_end: &str, report: &mut Report) {
    let lines: Vec<&str> = after_end
        .lines()
        .map(str::trim_end)
        .filter_map(|l| l.strip_prefix(TRAILER_PREFIX))
        .collect();
    let mut problem: Option<String> = None;
    let mut note = |why: String| {
        problem.get_or_insert(why);
    };
    if lines.len() > MAX_TRAILER_LINES {
        note(format!(
            "{} rr-tui lines after the table; only the first {MAX_TRAILER_LINES} are read",
            lines.len()
        ));
    }
    let mut summary: Option<RecorderSummary> = None;
    for (i, line) in lines.iter().take(MAX_TRAILER_LINES).enumerate() {
        if line.len() > MAX_TRAILER_LINE {
            note(format!(
                "rr-tui line {} is {} bytes; it is cut to {MAX_TRAILER_LINE}",
                i + 1,
                line.len()
            ));
        }
        let line: String = line.chars().take(MAX_TRAILER_LINE).collect();
        if let Some(rest) = line.strip_prefix("launches: ") {
            match (parse_launches(rest), &summary) {
                (Some([seen, selected, recorded]), None) => {
                    summary = Some(RecorderSummary {
                        seen,
                        selected,
                        recorded,
                        not_recorded: vec![],
                    })
                }
                (_, Some(_)) => note("a second `launches:` line".into()),
                (None, None) => note(format!("malformed line `{line}`")),
            }
        } else if let Some(rest) = line.strip_prefix("not recorded: ") {
            let reason = rest
                .split_once(' ')
                .and_then(|(n, why)| Some((n.parse::<u64>().ok()?, why.to_owned())));
            match (reason, summary.as_mut()) {
                (Some(r), Some(sum)) => sum.not_recorded.push(r),
                (None, _) => note(format!("malformed line `{line}`")),
                (_, None) => note("a `not recorded:` line before the `launches:` line".into()),
            }
        }
        report.notes.push(line);
    }
    // Launches recorded were selected, and launches selected were seen. (The reasons need not
    // add up to the launches seen: some count graph launches the selection never saw.)
    if let Some(sum) = summary
        .as_ref()
        .filter(|s| s.recorded > s.selected || s.selected > s.seen)
    {
        note(format!(
            "the launch counts contradict each other ({} seen, {} selected, {} recorded)",
            sum.seen, sum.selected, sum.recorded
        ));
    }
    match problem {
        Some(why) => report.trailer_problem = Some(why),
        None => {
            // Taken as a summary: the notes are what remains.
            report.summary = summary;
            report
                .notes
                .retain(|l| !l.starts_with("launches: ") && !l.starts_with("not recorded: "));
        }
    }
}

/// rr-tui's trailer in text: the summary's lines, then the notes.
pub fn render_trailer(summary: Option<&RecorderSummary>, notes: &[String]) -> String {
    let mut out = String::new();
    for line in summary
        .map(|s| s.lines())
        .unwrap_or_default()
        .iter()
        .chain(notes)
    {
        out.push_str(TRAILER_PREFIX);
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The line `rr-tui report` adds after a report whose `Directory:` is not where its files are
/// read from (`here`, absolute): LLVM's line is kept as written, the recording's place, and
/// this says so, since a path that no longer exists (a record moved, or bundled) otherwise reads
/// as a mistake. Strings compared, no file looked at: the recorded path is the file's word.
pub fn moved_note(recorded: &str, here: &str) -> Option<String> {
    (recorded.trim_end_matches('/') != here.trim_end_matches('/')).then(|| {
        format!("{TRAILER_PREFIX}Directory: is where this was recorded; its files are read from {here}\n")
    })
}

/// Whether some bytes contain a report banner (cheap; used to pick candidate files).
pub fn contains_report(bytes: &[u8]) -> bool {
    memmem::find(bytes, BEGIN.as_bytes()).is_some()
        || memmem::find(bytes, OLD_BEGIN.as_bytes()).is_some()
}

/// Parse the last report found in `text`. `Err` carries a problem description when a banner is
/// present but the body is malformed; `Ok(None)` when no banner is present.
pub fn parse(text: &str) -> Result<Option<Report>, String> {
    let (new_pos, old_pos) = (text.rfind(BEGIN), text.rfind(OLD_BEGIN));
    match (new_pos, old_pos) {
        (Some(p), o) if o.is_none_or(|o| o < p) => {
            let body = &text[p + BEGIN.len()..];
            let mut report = parse_current(body)?;
            if let Some(e) = body.find(END) {
                parse_trailer(&body[e + END.len()..], &mut report);
                report.text = Some(text[p..p + BEGIN.len() + e + END.len()].to_string());
            }
            Ok(Some(report))
        }
        (_, Some(p)) => parse_old(&text[p + OLD_BEGIN.len()..]).map(Some),
        _ => Ok(None),
    }
}

fn parse_current(body: &str) -> Result<Report, String> {
    let end = body
        .find(END)
        .ok_or("report has no end banner (truncated log?)")?;
    let mut report = Report::default();
    let mut in_rows = false;
    for (n, line) in body[..end]
        .lines()
        .map(str::trim)
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
    {
        if line.starts_with("Recorded Directory:") {
            // Written by rr-tui 0.2's `report` for a moved directory: informational.
        } else if let Some(d) = line.strip_prefix("Directory:") {
            report.directory = Some(d.trim().to_owned());
        } else if let Some(t) = line.strip_prefix("Total Instances:") {
            report.total_instances = Some(
                t.trim()
                    .parse()
                    .map_err(|_| format!("report line {}: bad instance count {t:?}", n + 1))?,
            );
        } else if line.starts_with("JSON Filename") {
            in_rows = true;
        } else if in_rows {
            report.rows.push(parse_row(line).ok_or_else(|| {
                format!(
                    "report row {:?} is not `file.json, name, ns, occurrences`",
                    line
                )
            })?);
        } else {
            return Err(format!("unexpected report line {line:?}"));
        }
    }
    if let Some(total) = report.total_instances {
        if total != report.rows.len() as u64 {
            return Err(format!(
                "report says {total} instances but lists {}",
                report.rows.len()
            ));
        }
    }
    Ok(report)
}

/// `<file>.json, <kernel name>, <ns>, <occurrences>`: the name is whatever lies between the first
/// and the last two separators, so a demangled name with commas still parses.
fn parse_row(line: &str) -> Option<ReportRow> {
    let (file, rest) = line.split_once(", ")?;
    let mut tail = rest.rsplitn(3, ", ");
    let occurrences = tail.next()?.trim().parse().ok()?;
    let time_ns = tail.next()?.trim().parse().ok()?;
    let name = tail.next()?.to_owned();
    if !file.ends_with(".json") {
        return None;
    }
    Some(ReportRow {
        json_file: file.to_owned(),
        kernel_name: name,
        time_ns: Some(time_ns),
        occurrences: Some(occurrences),
    })
}

fn parse_old(body: &str) -> Result<Report, String> {
    let end = body
        .find(OLD_END)
        .ok_or("report has no end banner (truncated log?)")?;
    let mut report = Report::default();
    for line in body[..end].lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(d) = line.strip_prefix("directory:") {
            report.directory = Some(d.trim().to_owned());
        } else if let Some(k) = line.strip_prefix("kernels:") {
            report.total_instances = k.trim().parse().ok();
        } else if let Some((file, name)) = line.split_once(": ") {
            report.rows.push(ReportRow {
                json_file: file.to_owned(),
                kernel_name: name.to_owned(),
                time_ns: None,
                occurrences: None,
            });
        } else {
            return Err(format!("unexpected report line {line:?}"));
        }
    }
    Ok(report)
}

/// Render a report in LLVM's exact current format, line for line (what rr-tui adds goes after
/// the end banner: [`render_trailer`]).
pub fn render(directory: &str, rows: &[ReportRow]) -> String {
    let mut out = format!("{BEGIN}\nDirectory: {directory}\n");
    out.push_str(&format!(
        "Total Instances: {}\nJSON Filename, Kernel Name, Time (ns), Occurrences:\n",
        rows.len()
    ));
    for r in rows {
        let opt = |v: Option<u64>| v.map(|v| v.to_string()).unwrap_or_else(|| "?".into());
        out.push_str(&format!(
            "{}, {}, {}, {}\n",
            r.json_file,
            r.kernel_name,
            opt(r.time_ns),
            opt(r.occurrences)
        ));
    }
    out.push_str(END);
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const LOG: &str = "app says hi\n=== Kernel Record Report ===\nDirectory: /tmp/rec\nTotal Instances: 2\nJSON Filename, Kernel Name, Time (ns), Occurrences:\n1_2.json, k_a, 1500, 3\n3_4.json, k_b, 20, 1\n=== End Kernel Record Report ===\nbye\n";

    #[test]
    fn finds_a_report_inside_a_log_and_round_trips() {
        let r = parse(LOG).unwrap().unwrap();
        assert_eq!(r.directory.as_deref(), Some("/tmp/rec"));
        assert_eq!(
            r.rows[0],
            ReportRow {
                json_file: "1_2.json".into(),
                kernel_name: "k_a".into(),
                time_ns: Some(1500),
                occurrences: Some(3)
            }
        );
        let text = render("/tmp/rec", &r.rows);
        assert!(LOG.contains(&text));
    }

    #[test]
    fn old_format_and_errors() {
        let r = parse("=== record report begin ===\ndirectory: /d\nkernels: 1\n5_6.json: kern\n=== record report end ===\n").unwrap().unwrap();
        assert_eq!(r.rows[0].kernel_name, "kern");
        assert_eq!(r.rows[0].time_ns, None);
        assert!(parse("nothing").unwrap().is_none());
        assert!(
            parse(&LOG.replace("Total Instances: 2", "Total Instances: 3"))
                .unwrap_err()
                .contains("says 3")
        );
        assert!(parse(&LOG.replace("=== End Kernel Record Report ===", ""))
            .unwrap_err()
            .contains("end banner"));
        assert!(parse(&LOG.replace(", 1500, 3", ", x, 3")).is_err());
    }

    #[test]
    fn the_recorders_trailer_round_trips_and_llvm_readers_stop_before_it() {
        let summary = RecorderSummary {
            seen: 1234,
            selected: 20,
            recorded: 18,
            not_recorded: vec![
                (1214, "not selected".into()),
                (2, "inside a CUDA graph with a conditional node".into()),
            ],
        };
        let notes = vec!["a note, with commas".to_string()];
        let text = format!(
            "{}{}",
            render("/tmp/rec", &[]),
            render_trailer(Some(&summary), &notes)
        );
        let r = parse(&text).unwrap().unwrap();
        assert_eq!(r.summary.as_ref(), Some(&summary));
        assert_eq!(r.notes, notes);
        assert!(text.contains("=== End Kernel Record Report ===\nrr-tui: launches: 1234 seen, 20 selected, 18 recorded\n"));
        assert!(summary
            .headline()
            .contains("not recorded: 1214 not selected; 2 inside"));
        // An LLVM report has none; a hostile trailer is bounded.
        assert_eq!(parse(LOG).unwrap().unwrap().summary, None);
        // Hostile trailers: no summary, the lines kept as notes, the reason given.
        let with = |trailer: &str| {
            let text = format!("{LOG}{trailer}");
            parse(&text).unwrap().unwrap()
        };
        for (trailer, want) in [
            ("rr-tui: launches: 1 bogus, 2 bogus, 3 bogus\n", "malformed"),
            ("rr-tui: launches: 2 seen, 10 selected, 99 recorded\n", "contradict"),
            (
                "rr-tui: launches: 5 seen, 5 selected, 5 recorded\nrr-tui: launches: 1 seen, 1 selected, 1 recorded\n",
                "second",
            ),
            (
                "rr-tui: not recorded: 3 x\nrr-tui: launches: 3 seen, 0 selected, 0 recorded\n",
                "before",
            ),
            (
                "rr-tui: launches: 3 seen, 3 selected, 5 recorded\nrr-tui: not recorded: 18446744073709551615 x\n",
                "contradict",
            ),
        ] {
            let r = with(trailer);
            let why = r.trailer_problem.clone().unwrap_or_default();
            assert!(r.summary.is_none() && why.contains(want), "{trailer}: {why}");
            assert_eq!(r.notes.len(), trailer.lines().count(), "{trailer}");
        }
        let many = "rr-tui: note\n".repeat(MAX_TRAILER_LINES + 5);
        let r = with(&many);
        assert!(r.trailer_problem.unwrap().contains("only the first 1000"));
        assert_eq!(r.notes.len(), MAX_TRAILER_LINES);
        let many = format!("{}{}", render("/d", &[]), "rr-tui: x\n".repeat(5000));
        assert_eq!(parse(&many).unwrap().unwrap().notes.len(), 1000);
    }

    #[test]
    fn names_with_commas() {
        let row = parse_row("1_2.json, void f<int, float>(int), 5, 6").unwrap();
        assert_eq!(row.kernel_name, "void f<int, float>(int)");
    }

    proptest! {
        #[test]
        fn never_panics(body in "\\PC{0,200}") {
            let _ = parse(&format!("{BEGIN}\n{body}\n{END}"));
            let _ = parse(&body);
        }
    }
}
