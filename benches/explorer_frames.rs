//! Explorer figures: first frame on a 10 000-instance directory (goal < 300 ms), redraw time
//! while a replay streams 10 000 repetitions per second (goal < 16 ms), resident memory while
//! viewing 8 GiB snapshots (goal < 100 MiB). Prints figures; not a test.

#[path = "common.rs"]
mod common;

use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use rr_engine::diff::job::{IndexEvent, IndexJob};
use rr_engine::replay::Event;
use rr_tui::settings::theme::Theme;
use rr_tui::tui::app::{App, Cmd, Msg};
use std::time::{Duration, Instant};

fn key(app: &mut App, c: char) -> Vec<Cmd> {
    app.update_inline(Msg::Key(KeyEvent::new(
        KeyCode::Char(c),
        KeyModifiers::NONE,
    )))
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    println!("machine: {}", common::machine());
    let theme = Theme::new(rr_tui::cli::Theme::Dark);
    let mut term = Terminal::new(TestBackend::new(160, 48)).unwrap();

    // 1. First frame on 10 000 instances: load (report + 10 000 descriptors + stats) and draw.
    let dir = common::synthetic_dir(tmp.path(), 10_000, true);
    let first = common::median_time(5, || {
        let app = rr_tui::tui::load_app(dir.clone(), Ok(()), tmp.path().to_path_buf()).unwrap();
        term.draw(|f| rr_tui::tui::ui::draw(&app, &theme, f))
            .unwrap();
    });
    println!(
        "first frame, 10 000 instances: {:.1} ms (goal < 300 ms)",
        first.as_secs_f64() * 1e3
    );

    // 2. Streaming 10 000 repetitions per second at 60 frames per second: ~167 events per frame.
    let mut app = rr_tui::tui::load_app(dir.clone(), Ok(()), tmp.path().to_path_buf()).unwrap();
    let Some(Cmd::StartReplay { request, .. }) = key(&mut app, 'v').into_iter().next() else {
        panic!()
    };
    let run = request.run_id;
    let mut frames = Vec::new();
    let mut rep = 0u32;
    let start = Instant::now();
    for _ in 0..600 {
        let t = Instant::now();
        for _ in 0..167 {
            rep += 1;
            app.update(ev(
                run,
                Event::Rep {
                    index: rep,
                    kernel_ns: 5000.0 + (rep % 97) as f64,
                    host_ns: 11000.0,
                    restore_ns: 900.0,
                    clock_mhz: None,
                    throttled: false,
                    candidate: false,
                },
            ));
        }
        term.draw(|f| rr_tui::tui::ui::draw(&app, &theme, f))
            .unwrap();
        frames.push(t.elapsed());
    }
    let elapsed = start.elapsed();
    frames.sort();
    println!(
        "replay screen while streaming: {rep} repetitions in {:.2} s of work; per frame (update 167 events + draw) median {:.2} ms, p99 {:.2} ms, max {:.2} ms (goal < 16 ms); sustainable {:.0} repetitions/s",
        elapsed.as_secs_f64(),
        frames[frames.len() / 2].as_secs_f64() * 1e3,
        frames[frames.len() * 99 / 100].as_secs_f64() * 1e3,
        frames[frames.len() - 1].as_secs_f64() * 1e3,
        rep as f64 / elapsed.as_secs_f64()
    );

    // 3. 8 GiB snapshots (sparse files with a few written pages): index, scroll, jump.
    let big = tmp.path().join("big");
    std::fs::create_dir_all(&big).unwrap();
    let size: u64 = 8 << 30;
    let stem = rr_format::hash::instance_stem("rr_big", 1, 1, 0);
    std::fs::write(big.join(format!("{stem}.json")), format!(r#"{{"ArgOffsets":[0,0],"ArgPtrs":[23335631060992,-1],"DeviceId":0,"LoopTripCount":0,"Name":"rr_big","NumArgs":2,"NumTeams":1,"NumThreads":1,"SharedMemorySize":0,"TeamsLimits":[0,0],"ThreadsLimits":[0,0],"VAllocAddr":23335631060992,"VAllocSize":{}}}"#, 16u64 << 30)).unwrap();
    for (ext, marks) in [
        ("record_input", vec![]),
        ("record_output", vec![1u64 << 30, 5 << 30, (8 << 30) - 4096]),
    ] {
        let f = std::fs::File::create(big.join(format!("{stem}.{ext}"))).unwrap();
        f.set_len(size).unwrap();
        use std::os::unix::fs::FileExt;
        for m in marks {
            f.write_all_at(&[0xabu8; 64], m).unwrap();
        }
    }
    let rss_before = common::rss_kb("VmRSS:");
    let mut app = rr_tui::tui::load_app(big.clone(), Ok(()), tmp.path().to_path_buf()).unwrap();
    app.update(Msg::Resize(160, 48));
    let cmds = key(&mut app, '3');
    let (tx, rx) = crossbeam_channel::unbounded();
    let t = Instant::now();
    let mut _job = None;
    for c in cmds {
        if let Cmd::StartIndex { job, a, b } = c {
            let tx = tx.clone();
            _job = Some(IndexJob::spawn(a, b, 8, move |e| {
                let _ = tx.send((job, e));
            }));
        }
    }
    let mut draws = Vec::new();
    let mut peak = 0;
    let mut peak_detail = String::new();
    loop {
        let (job, e) = rx.recv_timeout(Duration::from_secs(120)).unwrap();
        let done = matches!(e, IndexEvent::Done(_));
        app.update(Msg::Index { job, event: e });
        let d = Instant::now();
        term.draw(|f| rr_tui::tui::ui::draw(&app, &theme, f))
            .unwrap();
        draws.push(d.elapsed());
        let now = common::rss_kb("VmRSS:");
        if now > peak {
            peak = now;
            peak_detail = format!(
                "RssAnon {} MiB, RssFile {} MiB, RssShmem {} MiB",
                common::rss_kb("RssAnon:") / 1024,
                common::rss_kb("RssFile:") / 1024,
                common::rss_kb("RssShmem:") / 1024
            );
        }
        if done {
            break;
        }
    }
    let index_time = t.elapsed();
    let during = draws.clone();
    draws.clear();
    for c in "nnnNNggjGg".chars() {
        key(&mut app, c);
        let d = Instant::now();
        term.draw(|f| rr_tui::tui::ui::draw(&app, &theme, f))
            .unwrap();
        draws.push(d.elapsed());
        peak = peak.max(common::rss_kb("VmRSS:"));
    }
    draws.sort();
    let mut during = during;
    during.sort();
    let s = app.snapshots.view.as_ref().unwrap();
    println!(
        "8 GiB snapshots: indexed in {:.2} s ({:.2} GB/s), {} differing ranges; draw while indexing median {:.2} ms, max {:.2} ms; draw while jumping and scrolling after it median {:.2} ms, max {:.2} ms; resident memory {} MiB before, peak {} MiB while viewing (goal < 100 MiB)",
        index_time.as_secs_f64(),
        size as f64 / index_time.as_secs_f64() / 1e9,
        s.index.ranges.len(),
        during.get(during.len() / 2).copied().unwrap_or_default().as_secs_f64() * 1e3,
        during.last().copied().unwrap_or_default().as_secs_f64() * 1e3,
        draws[draws.len() / 2].as_secs_f64() * 1e3,
        draws[draws.len() - 1].as_secs_f64() * 1e3,
        rss_before / 1024,
        peak / 1024
    );
    println!("  at the peak: {peak_detail}");
}

/// A replay event of run `run`, as the runtime delivers it.
fn ev(run: u64, event: rr_engine::replay::Event) -> Msg {
    Msg::Replay(rr_engine::replay::Tagged { run, event })
}
