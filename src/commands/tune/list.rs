//! `tune --list`: the configurations the axes span and which the limits skip, without a GPU.

use rr_tune::shard::Shard;
use rr_tune::space::dim;
use rr_tune::Space;

use crate::output;

/// `--list` prints at most this many lines.
const LIST_LIMIT: u64 = 100_000;

/// The configurations `--list` shows: all, or with `--shard K/N` that part's (the recorded one
/// is part 1's); of a `simulated` sweep (`--simulate`), nothing is said to be measured.
pub fn print(space: &Space, shard: Option<Shard>, simulated: bool) {
    let r = &space.rules.recorded;
    if shard.is_none_or(|s| s.k == 1) {
        output::line(&format!(
            "recorded: grid {} block {} smem {} ({} first, as the baseline)",
            dim(r.grid),
            dim(r.block),
            r.shared_mem,
            match simulated {
                true => "simulated",
                false => "measured",
            }
        ));
    }
    let mut skipped = 0u64;
    let mut listed = 0u64;
    for i in (0..space.len()).filter(|&i| shard.is_none_or(|s| s.owns(i))) {
        let c = space.config(i);
        let why = space.rules.skip_reason(&c);
        skipped += u64::from(why.is_some());
        listed += 1;
        if listed <= LIST_LIMIT {
            output::line(&format!(
                "{}{}",
                c.describe(&space.defines),
                why.map(|w| format!("  skipped: {w}")).unwrap_or_default()
            ));
        }
    }
    if listed > LIST_LIMIT {
        output::line(&format!("… and {} more", listed - LIST_LIMIT));
    }
    let part = shard
        .map(|s| format!(" of part {}/{} (of {} in all)", s.k, s.n, space.len()))
        .unwrap_or_default();
    output::line(&format!(
        "{listed} configuration(s){part}, {skipped} skipped by a limit{}",
        if space.from_source {
            format!(
                "; {} variant(s) to compile from the source",
                space.defines.variants()
            )
        } else {
            String::new()
        }
    ));
}
