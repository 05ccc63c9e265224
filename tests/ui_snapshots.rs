//! Rendering snapshots with ratatui's TestBackend (symbols only; colours are checked on cells).
//! Every screen at the smallest supported terminal (80×24) and a large one (200×60). Paths are
//! relative to the package root, where cargo runs integration tests.

mod common;

use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use rr_engine::diff::job::IndexEvent;
use rr_engine::profile::{ProfileJob, ProfileOutput};
use rr_engine::replay::stats::Stats;
use rr_engine::replay::{Event, VerifyOutcome};
use rr_tui::cli::Theme as ThemeName;
use rr_tui::settings::theme::Theme;
use rr_tui::tui::app::{App, Cmd, Field, Msg};
use rr_tune::trial::TrialEnergy;
use rr_tune::{Config, Status, Trial};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

const SIZES: [(u16, u16); 2] = [(80, 24), (200, 60)];

fn app(gpu: bool, (w, h): (u16, u16)) -> App {
    let gpu = if gpu {
        Ok(())
    } else {
        Err(
            "no CUDA driver found (libcuda.so.1 could not be loaded); everything else works"
                .to_string(),
        )
    };
    // Replays write into the session directory: one that exists (replays check it first).
    let mut a = rr_tui::tui::load_app(
        PathBuf::from("record-fixtures/llvm-two-kernels"),
        gpu,
        std::env::temp_dir(),
    )
    .unwrap();
    a.update(Msg::Resize(w, h));
    a
}

fn key(a: &mut App, c: char) -> Vec<Cmd> {
    let m = if c.is_ascii_uppercase() {
        KeyModifiers::SHIFT
    } else {
        KeyModifiers::NONE
    };
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Char(c), m)))
}

fn render(a: &App, theme: ThemeName) -> Terminal<TestBackend> {
    let mut t = Terminal::new(TestBackend::new(a.width, a.height)).unwrap();
    t.draw(|f| rr_tui::tui::ui::draw(a, &Theme::new(theme), f))
        .unwrap();
    t
}

/// Snapshot `build` at every size, as `<name>_<W>x<H>`.
fn at_every_size(name: &str, build: impl Fn((u16, u16)) -> App) {
    for size in SIZES {
        let a = build(size);
        let screen = render(&a, ThemeName::Dark).backend().to_string();
        insta::assert_snapshot!(format!("{name}_{}x{}", size.0, size.1), screen);
    }
}

fn index(a: &mut App, cmds: Vec<Cmd>) {
    for c in cmds {
        if let Cmd::StartIndex { job, a: x, b: y } = c {
            let out =
                rr_engine::diff::build_index(&x, &y, 8, &AtomicBool::new(false), |_, _, _| {})
                    .unwrap();
            a.update(Msg::Index {
                job,
                event: IndexEvent::Done(Ok(out)),
            });
        }
    }
}

/// The snapshot screen at the first difference, after `types` presses of `t`.
fn snapshots(size: (u16, u16), types: usize) -> App {
    let mut a = app(false, size);
    let cmds = key(&mut a, '3');
    index(&mut a, cmds);
    key(&mut a, 'n');
    for _ in 0..types {
        key(&mut a, 't');
    }
    a.status = None;
    a
}

/// A replay streaming its repetitions (`done`: then verified with a mismatch).
fn replay(size: (u16, u16), done: bool) -> App {
    let mut a = app(true, size);
    let Some(Cmd::StartReplay { request, .. }) = key(&mut a, 'v').into_iter().next() else {
        panic!("no replay started")
    };
    let run = request.run_id;
    a.update(ev(
        run,
        Event::Start {
            protocol: rr_engine::replay::PROTOCOL_VERSION,
            descriptor: "x.json".into(),
        },
    ));
    a.update(ev(
        run,
        Event::Launch {
            kernel: "rr_saxpy".into(),
            grid: [8, 1, 1],
            block: [128, 1, 1],
            shared_mem: 0,
            repetitions: 20,
            warmup: 0,
        },
    ));
    a.update(ev(
        run,
        Event::Device {
            name: "NVIDIA H200".into(),
            sm: 90,
            ordinal: 0,
            rated_clock_mhz: None,
        },
    ));
    for i in 0..12 {
        a.update(ev(
            run,
            Event::Rep {
                index: i + 1,
                kernel_ns: 1000.0 + (i % 5) as f64 * 10.0,
                host_ns: 6000.0 + i as f64,
                restore_ns: 100.0,
                clock_mhz: None,
                throttled: false,
                candidate: false,
            },
        ));
    }
    if done {
        a.update(ev(
            run,
            Event::Summary {
                kernel_ns: Stats::default(),
                host_ns: Stats::default(),
                restore_ns: Stats::default(),
                clock_mhz: None,
                discarded: 0,
                reference_clock_mhz: None,
            },
        ));
        a.update(ev(
            run,
            Event::Verify(VerifyOutcome {
                passed: false,
                mode: "bytes".into(),
                expected_len: 32768,
                replayed_len: 32768,
                missing_bytes: 0,
                differing_bytes: 4,
                differing_ranges: 1,
                first_ranges: vec![[0x4004, 4]],
                regions: vec![],
                on_device: false,
                candidate: false,
            }),
        ));
        a.update(ev(run, Event::Done { ok: false }));
    }
    a
}

#[test]
fn instances_screen() {
    at_every_size("instances", |size| app(false, size));
}

#[test]
fn instances_filtered_and_sorted() {
    at_every_size("instances_filtered", |size| {
        let mut a = app(false, size);
        key(&mut a, '/');
        for c in "saxpy".chars() {
            key(&mut a, c);
        }
        a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
        key(&mut a, 's');
        key(&mut a, 's');
        a
    });
}

#[test]
fn descriptor_screen() {
    at_every_size("descriptor", |size| {
        let mut a = app(false, size);
        key(&mut a, '2');
        a
    });
}

#[test]
fn descriptor_diff_compares_decoded_fields() {
    at_every_size("descriptor_diff", |size| {
        let mut a = app(false, size);
        key(&mut a, 'm');
        key(&mut a, '1');
        key(&mut a, 'j');
        key(&mut a, '2');
        a
    });
}

/// `d`: the marked and selected instances line by line, as `rr-tui diff A.json B.json` prints.
#[test]
fn descriptor_lines_show_the_line_diff() {
    at_every_size("descriptor_lines", |size| descriptor_pair(size, 1, true));
}

/// The descriptor screen comparing the first instance (marked) with the `other`th, line by line
/// or field by field.
fn descriptor_pair(size: (u16, u16), other: usize, lines: bool) -> App {
    let mut a = app(false, size);
    key(&mut a, 'm');
    for _ in 0..other {
        key(&mut a, 'j');
    }
    key(&mut a, '2');
    if lines {
        key(&mut a, 'd');
    }
    a.status = None;
    a
}

/// The cells on row `y` drawn with `style`'s background, as text.
fn marked_cells(buf: &Buffer, y: u16, style: ratatui::style::Style) -> String {
    (0..buf.area.width)
        .filter(|&x| buf[(x, y)].bg == style.bg.unwrap())
        .map(|x| buf[(x, y)].symbol().to_string())
        .collect()
}

/// The row whose text starts with `start`.
fn row_starting(buf: &Buffer, start: &str) -> u16 {
    (0..buf.area.height)
        .find(|&y| line(buf, y).starts_with(start))
        .unwrap_or_else(|| panic!("no row starting {start:?}"))
}

/// Within a changed line or field only the words that changed are marked, by the one word diff
/// of `rr_engine::diff::lines`; the rest of a removed line is in the removed colour.
#[test]
fn only_the_changed_words_are_marked() {
    let theme = Theme::new(ThemeName::Dark);
    let a = descriptor_pair((200, 60), 1, true);
    let t = render(&a, ThemeName::Dark);
    let buf = t.backend().buffer();
    let removed = row_starting(buf, "-Geometry");
    assert_eq!(marked_cells(buf, removed, theme.diff_a), "8×1×1,128×1×1,");
    let inserted = row_starting(buf, "+Geometry");
    assert_eq!(marked_cells(buf, inserted, theme.diff_b), "16×1×1,64×1×1,");
    let dynamic = line(buf, removed).find("dynamic").unwrap();
    let x = line(buf, removed)[..dynamic].chars().count() as u16;
    assert_eq!(buf[(x, removed)].fg, theme.removed.fg.unwrap());
    // The field table: argument 0 of rr_saxpy against rr_scale_global's.
    let a = descriptor_pair((200, 60), 3, false);
    let t = render(&a, ThemeName::Dark);
    let buf = t.backend().buffer();
    let y = row_starting(buf, "argument 0 ");
    assert_eq!(marked_cells(buf, y, theme.diff_a), "0x1539400040000x4000)");
    assert_eq!(marked_cells(buf, y, theme.diff_b), "0x1539400080000x8000)");
    // No word in common: the whole value.
    let y = row_starting(buf, "kernel ");
    assert_eq!(marked_cells(buf, y, theme.diff_a), "rr_saxpy");
}

#[test]
fn snapshot_diff_hex() {
    at_every_size("snapshots_hex", |size| snapshots(size, 0));
}

#[test]
fn snapshot_diff_typed_f32_and_f16() {
    // t cycles u8 i8 u16 i16 u32 i32 u64 i64 f16 bf16 f32 f64.
    at_every_size("snapshots_f32", |size| snapshots(size, 11));
    at_every_size("snapshots_f16", |size| snapshots(size, 9));
}

#[test]
fn replay_running_and_mismatch() {
    at_every_size("replay_running", |size| replay(size, false));
    at_every_size("replay_mismatch", |size| replay(size, true));
}

#[test]
fn replay_unavailable() {
    at_every_size("replay_no_gpu", |size| {
        let mut a = app(false, size);
        key(&mut a, '4');
        a
    });
}

#[test]
fn help_popup() {
    at_every_size("help", |size| {
        let mut a = app(false, size);
        key(&mut a, '?');
        a
    });
    // Scrolled to its end on the smallest terminal.
    let mut a = app(false, (80, 24));
    key(&mut a, '?');
    key(&mut a, 'G');
    insta::assert_snapshot!(
        "help_end_80x24",
        render(&a, ThemeName::Dark).backend().to_string()
    );
}

#[test]
fn a_refused_prompt_stays_open_with_the_reason() {
    let mut a = app(true, (80, 24));
    key(&mut a, '4');
    key(&mut a, 'B');
    for c in "abc".chars() {
        key(&mut a, c);
    }
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    insta::assert_snapshot!(
        "prompt_error_80x24",
        render(&a, ThemeName::Dark).backend().to_string()
    );
}

/// A configuration of the tuning snapshots' sweep.
fn trial(grid: u32, block: u32, smem: u32, status: Status, median: f64) -> Trial {
    let mut t = Trial::new(
        Config {
            grid: [grid, 1, 1],
            block: [block, 1, 1],
            shared_mem: smem,
            max_registers: None,
            variant: None,
        },
        status,
    );
    if matches!(status, Status::Ok | Status::VerifyFailed) {
        t.kernel_ns = Some(Stats {
            count: 10 + (block as usize % 7),
            min: median * 0.99,
            median,
            mean: median * 1.001,
            stddev: median * 0.002,
            max: median * 1.02,
        });
        t.clock_mhz = Some(Stats::of(&[1980.0]));
    }
    if status != Status::Skipped {
        t.device = Some(0);
    }
    t.recorded = (grid, block, smem) == (8, 128, 0);
    match status {
        Status::Fault => t.message = Some("CUDA_ERROR_ILLEGAL_ADDRESS".into()),
        Status::Invalid => t.message = Some("too many resources requested for launch".into()),
        _ => {}
    }
    t
}

/// The sweep of the tuning snapshots: grid 4, 8, 16 × block 32 … 1024 × shared memory 0 and
/// 1024, the recorded configuration first, with a failure of every kind.
fn sweep_trials() -> Vec<Trial> {
    let mut v = vec![trial(8, 128, 0, Status::Ok, 2100.0)];
    for grid in [4, 8, 16] {
        for block in [32, 64, 128, 256, 512, 1024] {
            for smem in [0, 1024] {
                if (grid, block, smem) == (8, 128, 0) {
                    continue;
                }
                let status = match (grid, block) {
                    (4, 32) => Status::VerifyFailed,
                    (16, 1024) => Status::Fault,
                    (8, 1024) => Status::Invalid,
                    (16, 512) => Status::Skipped,
                    _ => Status::Ok,
                };
                // Fastest around 256 threads and more blocks; shared memory costs a little.
                let shape = 1.0 + 0.35 * ((block as f64) / 256.0).log2().abs();
                let median = 1200.0 * shape * (16.0 / grid as f64).sqrt() + smem as f64 * 0.1;
                v.push(trial(grid, block, smem, status, median));
            }
        }
    }
    v
}

/// The tuning screen of rr_saxpy: the form typed in, then `trials` of the sweep (and its end).
fn tuning(size: (u16, u16), trials: usize, done: bool) -> App {
    tuning_by(size, trials, done, 0)
}

/// [`tuning`] with the form's objective field pressed `objective_presses` times (1: time with
/// energy measured, 2: energy, 3: edp); then every verified trial has its energy (smaller
/// blocks draw more power, so the fastest is not the most frugal).
fn tuning_by(size: (u16, u16), trials: usize, done: bool, objective_presses: usize) -> App {
    let mut a = app(true, size);
    key(&mut a, 'u');
    // grid: 4..16*2, shared memory: 0,1024 (typed in the form like a user would).
    for (down, text) in [(0, "4..16*2"), (2, "0,1024")] {
        for _ in 0..down {
            key(&mut a, 'j');
        }
        a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
        a.update_inline(Msg::Key(KeyEvent::new(
            KeyCode::Char('u'),
            KeyModifiers::CONTROL,
        )));
        for c in text.chars() {
            key(&mut a, c);
        }
        a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    }
    if objective_presses > 0 {
        while a.tune.form.field() != Field::Objective {
            key(&mut a, 'j');
        }
        for _ in 0..objective_presses {
            a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
        }
    }
    let Some(Cmd::StartTune { run, .. }) = key(&mut a, 'r').into_iter().next() else {
        panic!("no sweep started: {:?}", a.status)
    };
    let t0 = std::time::Instant::now();
    a.update(Msg::Tick(t0));
    let all = sweep_trials();
    a.update(tune_ev(
        run,
        Event::Sweep {
            configs: 36,
            planned: 36,
            devices: vec![0],
            strategy: "exhaustive".into(),
            seed: Some(7),
            recorded: Some(all[0].config),
            defines: Default::default(),
        },
    ));
    a.update(tune_ev(
        run,
        Event::Device {
            name: "NVIDIA H200".into(),
            sm: 90,
            ordinal: 0,
            rated_clock_mhz: Some(1980.0),
        },
    ));
    for mut t in all.into_iter().take(trials) {
        if let (true, Some(k)) = (objective_presses > 0, t.kernel_ns) {
            let watts = 500.0 - 0.4 * t.config.block[0] as f64;
            t.energy = Some(TrialEnergy {
                joules: watts * k.median / 1e9,
                power_w: watts,
                noise: 0.004,
                windows: 8,
            });
        }
        a.update(tune_ev(run, Event::Trial(Box::new(t))));
    }
    a.update(tune_ev(
        run,
        Event::Phase {
            name: "warning".into(),
            detail: "GPU 0: the SM clock was throttled in 3 sample(s); they were retaken".into(),
        },
    ));
    a.update(Msg::Tick(t0 + std::time::Duration::from_millis(12_500)));
    if done {
        a.update(tune_ev(run, Event::Done { ok: true }));
    }
    a
}

fn tune_ev(run: u64, event: Event) -> Msg {
    Msg::Tune(rr_engine::replay::Tagged { run, event })
}

#[test]
fn tuning_form_running_and_done() {
    at_every_size("tune_form", |size| {
        let mut a = app(true, size);
        key(&mut a, 'u');
        a
    });
    // Without a GPU: why, and how to try tuning anyway (a sweep file); at 80×24 the form's
    // help is whole.
    at_every_size("tune_form_no_gpu", |size| {
        let mut a = app(false, size);
        key(&mut a, 'u');
        a
    });
    at_every_size("tune_running", |size| tuning(size, 14, false));
    at_every_size("tune_done", |size| tuning(size, 36, true));
}

/// A sweep that measures energy: the table gains energy and power, marks the Pareto front
/// and lists it on `p`; by the energy objective, the heatmap shows joules.
#[test]
fn tuning_by_energy_shows_joules_and_the_pareto_front() {
    at_every_size("tune_energy_done", |size| tuning_by(size, 36, true, 2));
    let mut a = tuning_by((200, 60), 36, true, 1);
    key(&mut a, 'p');
    insta::assert_snapshot!(
        "tune_front_200x60",
        render(&a, ThemeName::Dark).backend().to_string()
    );
    // Without energy, `p` says how to get it.
    let mut plain = tuning((80, 24), 36, true);
    key(&mut plain, 'p');
    assert!(
        plain
            .status
            .as_ref()
            .is_some_and(|s| s.text.contains("measured no energy")),
        "{:?}",
        plain.status
    );
}

/// A profile of the real H100 raw page committed for the parser, under `grid`/`block`, scaled
/// so that a second one differs.
fn profile_result(
    grid: [u32; 3],
    block: [u32; 3],
    faster: f64,
) -> rr_engine::profile::ProfileResult {
    let page =
        std::fs::read_to_string("crates/rr-engine/tests/data/ncu-raw-fma-chain-h100.csv").unwrap();
    let kernels = rr_engine::profile::raw::parse(&page).unwrap();
    let mut profile = rr_engine::profile::Profile::from_raw(&kernels[0]);
    profile.duration_ns = profile.duration_ns.map(|d| d / faster);
    profile.achieved_occupancy_pct = profile
        .achieved_occupancy_pct
        .map(|o| (o * faster).min(100.0));
    // The FMA chain moves no DRAM bytes: a roofline of a memory-bound kernel instead, so that
    // the charts are drawn.
    let intensity = 2.0 * faster;
    let achieved = 3350.0 * intensity * 0.7;
    profile.roofline = Some(rr_engine::profile::Roofline {
        precision: "fp32".into(),
        flops: 4e9,
        dram_bytes: 4e9 / intensity,
        intensity,
        achieved_gflops: achieved,
        peak_gflops: 60_000.0,
        peak_gbytes_per_s: 3350.0,
        ridge: 60_000.0 / 3350.0,
        bound: "memory".into(),
        of_roof: 0.7,
    });
    rr_engine::profile::ProfileResult {
        descriptor: "x.json".into(),
        report: "out/rr_saxpy.ncu-rep".into(),
        ncu: "/usr/local/cuda/bin/ncu".into(),
        grid,
        block,
        shared_mem: 0,
        candidate: None,
        profile,
    }
}

/// The profile job `rr-tui profile DESC WORDS…` asks for (clap's parse, converted as the command
/// line converts it): what the explorer's own job must equal.
fn profile_command_line(desc: &std::path::Path, words: &[&std::ffi::OsStr]) -> ProfileJob {
    use clap::Parser;
    let argv = ["rr-tui".as_ref(), "profile".as_ref(), desc.as_os_str()]
        .into_iter()
        .chain(words.iter().copied());
    match rr_tui::cli::Cli::try_parse_from(argv).unwrap().command {
        Some(rr_tui::cli::Command::Profile(p)) => p.job(),
        other => panic!("not profile: {other:?}"),
    }
}

fn profile_ev(run: u64, event: Event) -> Msg {
    Msg::Profile(rr_engine::replay::Tagged { run, event })
}

/// `P` profiles the selected instance in the background (its progress shown, `c` cancels);
/// after a sweep, `P` on the tuning screen profiles its best beside the recorded one, every
/// change marked.
#[test]
fn the_profile_screen_shows_one_profile_or_two_side_by_side() {
    at_every_size("profile_recorded", |size| {
        let mut a = app(true, size);
        let Some(Cmd::StartProfile { instance, job }) = key(&mut a, 'P').into_iter().next() else {
            panic!("no profile started: {:?}", a.status)
        };
        let run = job.run_id;
        // The job `rr-tui profile` would run for the same words: the recorded configuration,
        // the report where replays write, events tagged with the run.
        let desc = a.rows[instance].json_path.clone();
        let out = a.output_dir.clone();
        let run_id = run.to_string();
        let words: Vec<&std::ffi::OsStr> = vec![
            "--output-dir".as_ref(),
            out.as_os_str(),
            "--events".as_ref(),
            "--run-id".as_ref(),
            run_id.as_ref(),
        ];
        assert_eq!(*job, profile_command_line(&desc, &words));
        assert_eq!(job.output, ProfileOutput::Events);
        assert_eq!(job.grid, None);
        a.update(profile_ev(
            run,
            Event::Phase {
                name: "progress".into(),
                detail: "==PROF== Profiling \"rr_saxpy\" - 0: 0%....50%....100% - 18 passes".into(),
            },
        ));
        a.update(profile_ev(
            run,
            Event::Profile(Box::new(profile_result([8, 1, 1], [128, 1, 1], 1.0))),
        ));
        a.update(profile_ev(run, Event::Done { ok: true }));
        a
    });
    at_every_size("profile_side_by_side", |size| {
        let mut a = tuning(size, 36, true);
        key(&mut a, '1');
        let Some(Cmd::StartProfile { job, .. }) = key(&mut a, 'P').into_iter().next() else {
            panic!("no profile started: {:?}", a.status)
        };
        let run = job.run_id;
        a.update(profile_ev(
            run,
            Event::Profile(Box::new(profile_result([8, 1, 1], [128, 1, 1], 1.0))),
        ));
        a.update(profile_ev(run, Event::Done { ok: true }));
        key(&mut a, '5');
        let Some(Cmd::StartProfile { instance, job }) = key(&mut a, 'P').into_iter().next() else {
            panic!("no profile of the best started: {:?}", a.status)
        };
        let run = job.run_id;
        assert_eq!(job.block, Some([256, 1, 1]), "{job:?}");
        // The best configuration's whole launch, as `profile --grid --block --shared-mem` asks.
        let desc = a.rows[instance].json_path.clone();
        let out = a.output_dir.clone();
        let dims = |d: [u32; 3]| format!("{}x{}x{}", d[0], d[1], d[2]);
        let (grid, block) = (dims(job.grid.unwrap()), dims(job.block.unwrap()));
        let smem = job.shared_mem.unwrap().to_string();
        let run_id = run.to_string();
        let words: Vec<&std::ffi::OsStr> = vec![
            "--grid".as_ref(),
            grid.as_ref(),
            "--block".as_ref(),
            block.as_ref(),
            "--shared-mem".as_ref(),
            smem.as_ref(),
            "--output-dir".as_ref(),
            out.as_os_str(),
            "--events".as_ref(),
            "--run-id".as_ref(),
            run_id.as_ref(),
        ];
        assert_eq!(*job, profile_command_line(&desc, &words));
        a.update(profile_ev(
            run,
            Event::Profile(Box::new(profile_result([16, 1, 1], [256, 1, 1], 1.75))),
        ));
        a.update(profile_ev(run, Event::Done { ok: true }));
        a
    });
    // `]` picks the second row of the table; `P` profiles that one.
    let mut a = tuning((80, 24), 36, true);
    key(&mut a, ']');
    let Some(Cmd::StartProfile { job, .. }) = key(&mut a, 'P').into_iter().next() else {
        panic!("no profile of the picked row: {:?}", a.status)
    };
    let second = a.tune.runs.values().next().unwrap().ranking()[1].config;
    assert_eq!(
        (job.grid, job.block, job.shared_mem),
        (
            Some(second.grid),
            Some(second.block),
            Some(second.shared_mem)
        ),
        "{job:?}"
    );
    assert!(
        a.status.as_ref().is_some_and(|s| s.text.contains("#2:")),
        "{:?}",
        a.status
    );
    // `b` on the profile screen profiles the A/B candidate the replay screen's `C` set.
    let mut a = app(true, (80, 24));
    key(&mut a, '6');
    assert!(key(&mut a, 'b').is_empty());
    assert!(
        a.status
            .as_ref()
            .is_some_and(|s| s.text.contains("no A/B candidate")),
        "{:?}",
        a.status
    );
    a.settings.candidate = Some(rr_engine::replay::candidate::CandidateSpec {
        path: "faster.cu".into(),
        kernel: None,
        defines: vec![],
        options: vec![],
    });
    let Some(Cmd::StartProfile { instance, job }) = key(&mut a, 'b').into_iter().next() else {
        panic!("no profile of the candidate: {:?}", a.status)
    };
    assert_eq!(job.candidate, a.settings.candidate, "{job:?}");
    let desc = a.rows[instance].json_path.clone();
    let out = a.output_dir.clone();
    let run_id = job.run_id.to_string();
    let words: Vec<&std::ffi::OsStr> = vec![
        "--candidate".as_ref(),
        "faster.cu".as_ref(),
        "--output-dir".as_ref(),
        out.as_os_str(),
        "--events".as_ref(),
        "--run-id".as_ref(),
        run_id.as_ref(),
    ];
    assert_eq!(*job, profile_command_line(&desc, &words));
    // One at a time, and cancellable.
    let mut a = app(true, (80, 24));
    key(&mut a, 'P');
    assert!(key(&mut a, 'P').is_empty());
    assert!(a
        .status
        .as_ref()
        .is_some_and(|s| s.text.contains("a profile is already running")));
    assert!(matches!(key(&mut a, 'c').as_slice(), [Cmd::CancelProfile]));
    assert!(
        !key(&mut a, 'P').is_empty(),
        "a new profile after the cancel"
    );
}

/// A typo in an axis shows the engine parser's message while it is typed.
#[test]
fn tuning_form_shows_the_parsers_message_as_you_type() {
    let mut a = app(true, (80, 24));
    key(&mut a, '5');
    key(&mut a, 'j');
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    for c in ",k".chars() {
        key(&mut a, c);
    }
    insta::assert_snapshot!(
        "tune_form_error_80x24",
        render(&a, ThemeName::Dark).backend().to_string()
    );
}

/// Defines without a source, on a machine without a driver: the form says why `rr-tui tune`
/// refuses them, in its order (the defines before the driver), and never counts them as
/// variants, neither while they are typed nor beside the ✗ line.
#[test]
fn the_tune_forms_refused_defines_are_never_counted_and_refused_first() {
    let mut a = app(false, (80, 24));
    let enter = |a: &mut App| {
        a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    };
    key(&mut a, '5');
    a.tune.form.cursor = Field::ALL
        .iter()
        .position(|&f| f == Field::Defines)
        .unwrap();
    enter(&mut a);
    for c in "TILE=1,2,4".chars() {
        key(&mut a, c);
    }
    // What `rr-tui tune` says first of the same sweep (this machine has no driver either).
    let json = a.rows[a.current().unwrap()].json_path.clone();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_rr-tui"))
        .arg("tune")
        .arg(&json)
        .args(["-D", "TILE=1,2,4"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said = stderr
        .trim_end()
        .strip_prefix("rr-tui: error: ")
        .unwrap()
        .to_string();
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    let typing = screen_text(&a);
    assert!(typing.contains(&words(&said)), "{typing}");
    assert!(!typing.contains("variant(s)"), "{typing}");
    enter(&mut a);
    assert_eq!(
        a.tune.form.settings.defines, "TILE=1,2,4",
        "typed defines are taken"
    );
    let form = screen_text(&a);
    assert!(form.contains(&format!("✗ {}", words(&said))), "{form}");
    assert!(!form.contains("variant(s)"), "{form}");
    key(&mut a, 'r');
    let status = a.status.as_ref().expect("r says why").text.clone();
    assert_eq!(status, format!("defines: {said}"));
}

/// The heatmap's scale is a colour as well as a shade: the fastest shade in the first colour
/// of the scale, the slowest in the last.
#[test]
fn heatmap_cells_are_coloured_by_their_time() {
    let a = tuning((80, 24), 36, true);
    let t = render(&a, ThemeName::Dark);
    let theme = Theme::new(ThemeName::Dark);
    let buf = t.backend().buffer();
    let header = (0..buf.area.height)
        .find(|&y| line(buf, y).starts_with("grid╲block"))
        .expect("the heatmap's header");
    // The three grid rows below the header (the progress bar above uses shades too).
    let find = |shade: &str| {
        (header + 1..header + 4)
            .flat_map(|y| (0..buf.area.width).map(move |x| (x, y)))
            .map(|p| &buf[p])
            .find(|c| c.symbol() == shade)
            .unwrap_or_else(|| panic!("no {shade} in the heatmap"))
            .fg
    };
    assert_eq!(find("░"), theme.heat[0].fg.unwrap());
    assert_eq!(find("█"), theme.heat[3].fg.unwrap());
    assert_ne!(theme.heat[0].fg, theme.heat[3].fg);
}

/// Narrow terminals and many block values: cells drop their times, then the map scrolls.
#[test]
fn the_heatmap_degrades_on_small_terminals() {
    let mut a = app(true, (80, 24));
    key(&mut a, 'u');
    key(&mut a, 'j');
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    a.update_inline(Msg::Key(KeyEvent::new(
        KeyCode::Char('u'),
        KeyModifiers::CONTROL,
    )));
    for c in "32..1024:32".chars() {
        key(&mut a, c);
    }
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    let Some(Cmd::StartTune { run, .. }) = key(&mut a, 'r').into_iter().next() else {
        panic!("no sweep started")
    };
    for block in (32..=1024).step_by(32) {
        let status = if block % 320 == 0 {
            Status::Fault
        } else {
            Status::Ok
        };
        let t = trial(8, block, 0, status, 1000.0 + block as f64);
        a.update(tune_ev(run, Event::Trial(Box::new(t))));
    }
    let screen = |a: &App| render(a, ThemeName::Dark).backend().to_string();
    let first = screen(&a);
    assert!(first.contains("cols 1–"), "{first}");
    assert!(!first.contains("µs   "), "narrow cells show shades only");
    for _ in 0..40 {
        key(&mut a, 'l');
    }
    let last = screen(&a);
    assert!(last.contains("/32 h/l"), "{last}");
    assert!(last.contains("1024"), "scrolled to the last column: {last}");
    insta::assert_snapshot!("tune_scrolled_80x24", last);
}

/// The text of row `y`.
fn line(buf: &Buffer, y: u16) -> String {
    (0..buf.area.width).map(|x| buf[(x, y)].symbol()).collect()
}

/// Hex cells (two hex digits between spaces) on each side of the ` │ ` separator (the label,
/// the offset and the ASCII column are no such words in the fixture's rows).
fn hex_cells_per_side(row: &str) -> (usize, usize) {
    let (left, right) = row.split_once(" │ ").expect("a two-sided row");
    let count = |s: &str| {
        s.split_whitespace()
            .filter(|w| w.len() == 2 && w.chars().all(|c| c.is_ascii_hexdigit()))
            .count()
    };
    (count(left), count(right))
}

#[test]
fn both_sides_show_the_same_bytes_at_every_width() {
    for (w, bytes, ascii) in [(80u16, 8, false), (120, 16, false), (200, 16, true)] {
        let a = snapshots((w, 40), 0);
        assert_eq!(a.snapshots.view.as_ref().unwrap().row, bytes, "{w} columns");
        let t = render(&a, ThemeName::Dark);
        let buf = t.backend().buffer();
        // The first row (at the first difference): below the title, which wraps at 80.
        let row = (0..buf.area.height)
            .map(|y| line(buf, y))
            .find(|l| l.contains(" 00004000 "))
            .expect("the row at the first difference");
        assert_eq!(
            hex_cells_per_side(&row),
            (bytes as usize, bytes as usize),
            "{w}: {row}"
        );
        assert!(row.chars().count() <= w as usize);
        // The ASCII column: zero bytes show as ⋄.
        assert_eq!(row.contains('⋄'), ascii, "{w}: {row}");
    }
}

#[test]
fn differing_bytes_and_byte_categories_are_coloured() {
    let a = snapshots((200, 60), 0);
    let t = render(&a, ThemeName::Dark);
    let theme = Theme::new(ThemeName::Dark);
    let buf = t.backend().buffer();
    let diff_bg = theme.diff_b.bg.unwrap();
    let marked = (0..buf.area.width)
        .filter(|&x| buf[(x, 3)].bg == diff_bg)
        .count();
    assert!(
        marked > 10,
        "the first row shows marked cells, found {marked}"
    );
    // A zero byte of the unchanged input is drawn in the zero-byte colour.
    let zero = (0..buf.area.width)
        .find(|&x| buf[(x, 3)].symbol() == "⋄")
        .expect("an ASCII column");
    assert_eq!(buf[(zero, 3)].fg, theme.byte_zero.fg.unwrap());
    let typed = snapshots((200, 60), 11);
    let t = render(&typed, ThemeName::Dark);
    let buf = t.backend().buffer();
    let marked = (0..buf.area.width)
        .filter(|&x| buf[(x, 3)].bg == diff_bg)
        .count();
    assert!(marked > 10, "typed cells are marked too, found {marked}");
}

#[test]
fn monochrome_theme_uses_no_colours() {
    for a in [
        app(false, (80, 24)),
        snapshots((200, 60), 0),
        tuning((80, 24), 36, true),
    ] {
        let t = render(&a, ThemeName::Mono);
        let buf = t.backend().buffer();
        assert!(buf
            .content
            .iter()
            .all(|c| c.fg == ratatui::style::Color::Reset && c.bg == ratatui::style::Color::Reset));
    }
}

/// A replay event of run `run`, as the runtime delivers it.
fn ev(run: u64, event: rr_engine::replay::Event) -> Msg {
    Msg::Replay(rr_engine::replay::Tagged { run, event })
}

#[test]
fn broken_instances_show_a_badge_and_their_problem() {
    let t = tempfile::tempdir().unwrap();
    let dir = t.path().join("broken");
    std::fs::create_dir(&dir).unwrap();
    for e in std::fs::read_dir("record-fixtures/llvm-two-kernels").unwrap() {
        let e = e.unwrap();
        if e.file_type().unwrap().is_file() {
            std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
        }
    }
    let output = dir.join("8683979482637550046_13526365365894479501.record_output");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&output)
        .unwrap()
        .set_len(1000)
        .unwrap();
    let mut a = rr_tui::tui::load_app(dir, Err("no GPU".into()), t.path().to_path_buf()).unwrap();
    a.update(Msg::Resize(80, 24));
    a.update_inline(Msg::FirstFrameDrawn);
    let t = render(&a, ThemeName::Dark);
    let buf = t.backend().buffer();
    assert!(line(buf, 3).contains("bad file"), "{}", line(buf, 3));
    assert!(!line(buf, 4).contains("bad file"));
    assert!(line(buf, 1).contains("1 broken"), "{}", line(buf, 1));
    // The status line wraps a long message above the hint bar, the count on its first line.
    let status: Vec<String> = (19..23).map(|y| line(buf, y)).collect();
    let first = status.iter().position(|l| l.contains("4 of 4 instance(s)"));
    let text: Vec<&str> = status[first.unwrap_or(0)..]
        .iter()
        .map(|l| {
            l.trim_end()
                .trim_end_matches("4 of 4 instance(s)")
                .trim_end()
        })
        .collect();
    assert!(
        first.is_some() && text.join(" ").contains(".record_output: is 1000 bytes"),
        "{status:#?}"
    );
}

/// An rr-tui recording says, above the table, what its recorder saw and did not record.
#[test]
fn instances_with_the_recorders_account() {
    // A fixed place, the same on every machine: at 80 columns the header shortens the
    // directory's path to its first and last characters, which the mask below cannot find.
    let base = std::path::PathBuf::from("/tmp/rr-tui-ui-snapshots-recorder");
    let _ = std::fs::remove_dir_all(&base);
    let dir = base.join("rec");
    common::copy_dir(
        std::path::Path::new("record-fixtures/rrtui-v2-stencil3d"),
        &dir,
    );
    let summary = rr_format::report::RecorderSummary {
        seen: 95,
        selected: 25,
        recorded: 23,
        not_recorded: vec![
            (70, "not selected".into()),
            (2, "inside CUDA graphs holding a conditional node".into()),
        ],
    };
    common::write_report(
        &dir,
        &rr_format::report::render_trailer(Some(&summary), &[]),
    );
    for (w, h) in SIZES {
        let mut a = rr_tui::tui::load_app(dir.clone(), Err("no GPU".into()), base.clone()).unwrap();
        a.update(Msg::Resize(w, h));
        let screen = render(&a, ThemeName::Dark).backend().to_string();
        // The directory's path (and its length) differs from machine to machine: mask it
        // with a placeholder of the same width so the padding after it stays the same.
        let path = dir.display().to_string();
        let screen = screen.replace(&path, &format!("{:<1$}", "REC", path.chars().count()));
        insta::assert_snapshot!(format!("instances_recorder_{w}x{h}"), screen);
    }
}

/// Empty states say why: a filter that matches nothing, and a key that does nothing on a screen.
#[test]
fn empty_states_say_why() {
    let mut a = app(false, (80, 24));
    key(&mut a, '/');
    for c in "zzz".chars() {
        key(&mut a, c);
    }
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
    let t = render(&a, ThemeName::Dark);
    let screen = t.backend().to_string();
    assert!(
        screen.contains("No instance matches the filter") && screen.contains("zzz"),
        "{screen}"
    );
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE)));
    key(&mut a, 'y');
    let status = a
        .status
        .as_ref()
        .map(|s| s.text.clone())
        .unwrap_or_default();
    assert_eq!(
        status,
        "`y` does nothing on the Instances screen (? lists the keys)"
    );
}

/// `M` marks several instances; `R` on the tuning screen sweeps them one after the other, each
/// started when the one before is done (a marked instance the command refuses is passed over),
/// and `c` cancels the rest.
#[test]
fn marked_instances_are_swept_one_after_the_other() {
    let mut a = app(true, (80, 24));
    key(&mut a, 'M');
    key(&mut a, 'j');
    key(&mut a, 'j');
    key(&mut a, 'M');
    assert_eq!(a.tune.marks.len(), 2);
    let screen = render(&a, ThemeName::Dark).backend().to_string();
    let rows = screen.lines().filter(|l| l.starts_with("\"●")).count();
    assert_eq!(rows, 2, "{screen}");
    key(&mut a, '5');
    let start = |cmds: Vec<Cmd>, a: &App| match cmds.into_iter().next() {
        Some(Cmd::StartTune { instance, run, job }) => (instance, run, job),
        _ => panic!("no sweep started: {:?}", a.status),
    };
    let cmds = key(&mut a, 'R');
    let (first, run, job) = start(cmds, &a);
    let marked: Vec<usize> = a.tune.marks.iter().copied().collect();
    assert_eq!(first, marked[0]);
    assert_eq!(job.descriptor, a.rows[first].json_path);
    // Done: the second starts by itself.
    let next = a.update_inline(tune_ev(run, Event::Done { ok: true }));
    let (second, run2, _) = start(next, &a);
    assert_eq!(second, marked[1]);
    assert_ne!(run, run2);
    assert!(a.tune.queue.is_empty());
    assert!(a
        .update_inline(tune_ev(run2, Event::Done { ok: true }))
        .is_empty());
    // Cancelled with one still queued: the rest is not started.
    let cmds = key(&mut a, 'R');
    let (_, run, _) = start(cmds, &a);
    assert!(key(&mut a, 'c')
        .iter()
        .any(|c| matches!(c, Cmd::CancelTune)));
    assert!(
        a.status
            .as_ref()
            .is_some_and(|s| s.text.contains("1 marked instance(s) not swept")),
        "{:?}",
        a.status
    );
    assert!(a
        .update_inline(tune_ev(run, Event::Done { ok: false }))
        .is_empty());
}

/// The tour's screens as the explorer draws them: `scripts/record-tour.sh`'s keys, in its order,
/// on the same record at the same size (100×30).
fn tour_screens() -> Vec<(&'static str, String)> {
    let press = |a: &mut App, code: KeyCode| -> Vec<Cmd> {
        a.update_inline(Msg::Key(KeyEvent::new(code, KeyModifiers::NONE)))
    };
    let mut a = app(false, (100, 30));
    let mut screens = Vec::new();
    let mut keep = |name: &'static str, a: &App| {
        screens.push((name, render(a, ThemeName::Dark).backend().to_string()));
    };
    keep("01-instances", &a);
    for c in ['/', 's', 'c', 'a', 'l', 'e'] {
        key(&mut a, c);
    }
    press(&mut a, KeyCode::Enter);
    press(&mut a, KeyCode::Esc);
    key(&mut a, '2');
    keep("02-descriptor", &a);
    for c in ['1', 'm', 'j', '2'] {
        key(&mut a, c);
    }
    keep("03-descriptors-compared", &a);
    let cmds = key(&mut a, '3');
    index(&mut a, cmds);
    key(&mut a, 'n');
    keep("04-snapshots", &a);
    for _ in 0..11 {
        key(&mut a, 't');
    }
    keep("05-snapshots-f32", &a);
    key(&mut a, '?');
    keep("06-help", &a);
    screens
}

/// A screen's lines as tmux captures them: trailing spaces and empty last lines dropped.
fn captured_lines(screen: &str) -> Vec<String> {
    let mut v: Vec<String> = screen.lines().map(|l| l.trim_end().to_string()).collect();
    while v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

/// The README's tour screens (`assets/tour/*.txt`, written by `scripts/record-tour.sh` from the
/// real binary in tmux) are still what the explorer draws, line by line. When the explorer's
/// screens change on purpose, run the script again.
#[test]
fn the_tour_screens_are_what_the_explorer_draws() {
    let screens = tour_screens();
    let dir = PathBuf::from("assets/tour");
    let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    on_disk.sort();
    let names: Vec<String> = screens.iter().map(|(n, _)| format!("{n}.txt")).collect();
    assert_eq!(on_disk, names, "the tour's screens and this test's list");
    for (name, screen) in &screens {
        // TestBackend writes each line in quotes.
        let drawn: Vec<&str> = screen.lines().map(|l| l.trim_matches('"')).collect();
        let drawn = captured_lines(&drawn.join("\n"));
        let path = dir.join(format!("{name}.txt"));
        let recorded = captured_lines(&std::fs::read_to_string(&path).unwrap());
        for (i, (r, d)) in recorded.iter().zip(&drawn).enumerate() {
            assert_eq!(
                r,
                d,
                "{}: line {} is not what the explorer draws now; run scripts/record-tour.sh",
                path.display(),
                i + 1
            );
        }
        assert_eq!(recorded.len(), drawn.len(), "{}: lines", path.display());
    }
    cast_holds_the_screens(&dir, &on_disk);
    readme_shows_a_tour_screen(&dir.join("04-snapshots.txt"));
    readmes_keys_reach_its_screen(&dir.join("04-snapshots.txt"));
}

/// The keys the README gives for its screen (`` (`G`, `3`, then `n`; ``), pressed in a fresh
/// explorer, draw that screen: the tour reached it by other ways, the reader by these.
fn readmes_keys_reach_its_screen(screen: &std::path::Path) {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let keys: Vec<char> = readme
        .split("snapshot screen")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .expect("README.md says which keys show its screen")
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|k| k.chars().next().unwrap())
        .collect();
    assert!(keys.contains(&'3'), "{keys:?}");
    let mut a = app(false, (100, 30));
    for k in keys {
        let cmds = key(&mut a, k);
        index(&mut a, cmds);
    }
    let screen_drawn = render(&a, ThemeName::Dark).backend().to_string();
    let drawn: Vec<&str> = screen_drawn.lines().map(|l| l.trim_matches('"')).collect();
    let shot = std::fs::read_to_string(screen).unwrap();
    assert_eq!(
        captured_lines(&drawn.join("\n")),
        captured_lines(&shot),
        "README.md's keys do not draw {}",
        screen.display()
    );
}

/// The README's screen (a code block of the tour) is lines of that screen, unchanged.
fn readme_shows_a_tour_screen(screen: &std::path::Path) {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let block = readme
        .split("```text\n")
        .nth(1)
        .and_then(|b| b.split("```").next())
        .expect("README.md shows a screen in a ```text block");
    let shot = std::fs::read_to_string(screen).unwrap();
    let shot_lines: Vec<&str> = shot.lines().collect();
    for line in block.lines() {
        assert!(
            shot_lines.contains(&line),
            "README.md's screen has {line:?}, which {} does not",
            screen.display()
        );
    }
}

/// The cast (asciicast v2) is of the same session: a header, then frames in time order, each
/// screenshot among them.
fn cast_holds_the_screens(dir: &std::path::Path, screens: &[String]) {
    let cast = std::fs::read_to_string(dir.join("explorer.cast")).unwrap();
    let mut events = cast.lines();
    let header: serde_json::Value = serde_json::from_str(events.next().unwrap()).unwrap();
    assert_eq!(
        (&header["version"], &header["width"], &header["height"]),
        (&2.into(), &100.into(), &30.into())
    );
    let frames: Vec<(f64, String)> = events
        .map(|l| serde_json::from_str::<(f64, String, String)>(l).unwrap())
        .inspect(|(_, kind, _)| assert_eq!(kind, "o"))
        .map(|(t, _, text)| (t, text.replace("\r\n", "\n")))
        .collect();
    assert!(frames.windows(2).all(|w| w[0].0 <= w[1].0), "time order");
    for name in screens {
        let shot = std::fs::read_to_string(dir.join(name)).unwrap();
        let shot = shot.trim_end_matches('\n');
        assert!(
            frames.iter().any(|(_, f)| f.ends_with(shot)),
            "{name} is not a frame of explorer.cast; run scripts/record-tour.sh"
        );
    }
}

/// The screen's text, its lines joined by spaces (wrapped sentences read whole).
fn screen_text(a: &App) -> String {
    let t = render(a, ThemeName::Dark);
    let buf = t.backend().buffer();
    (0..buf.area.height)
        .map(|y| line(buf, y).trim_end().to_string())
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// At 80×24 the refusals of `r`, `u` and `P` are read whole: the status line wraps them (the
/// longest is an LLVM 19–22 record's reason), never cuts them.
#[test]
fn refusals_wrap_whole_at_80_columns() {
    let no_gpu = || Err("no CUDA driver found (libcuda.so.1 could not be loaded)".to_string());
    for fixture in ["llvm19-saxpy", "llvm16-saxpy", "llvm-two-kernels"] {
        let dir = PathBuf::from("record-fixtures").join(fixture);
        let mut a = rr_tui::tui::load_app(dir, no_gpu(), std::env::temp_dir()).unwrap();
        a.update(Msg::Resize(80, 24));
        for k in ['r', 'u', 'P'] {
            key(&mut a, '1');
            key(&mut a, k);
            if k == 'u' {
                key(&mut a, 'r');
            }
            let status = a.status.as_ref().expect("a refusal").text.clone();
            let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
            // The message's lines, without the rule and the instance count beside them.
            let count = format!("{} of {} instance(s)", a.view.len(), a.rows.len());
            let text = words(&screen_text(&a).replace(&count, "").replace('│', ""));
            let words = words(&status);
            assert!(text.contains(&words), "{fixture} {k}: {words:?} in {text}");
        }
    }
}

/// An LLVM 16–17 record without its device image says so before the missing driver, with
/// the path and words `rr-tui replay` gives (the CLI finds it while reading files, by the rule
/// the explorer asks too), and points at `I`; once `I` gives an image, the machine's reason.
#[test]
fn an_llvm16_record_without_its_image_says_so_before_the_machines_reason() {
    let dir = PathBuf::from("record-fixtures/llvm16-saxpy");
    let no_gpu = Err("no CUDA driver found (libcuda.so.1 could not be loaded)".to_string());
    let mut a = rr_tui::tui::load_app(dir.clone(), no_gpu, std::env::temp_dir()).unwrap();
    a.update(Msg::Resize(80, 24));
    let request = rr_engine::replay::ReplayRequest::new(dir.join("rr_saxpy.json"));
    let cli = match rr_tui::commands::replay::preflight(&request) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("replay accepts an LLVM 16 record without its image"),
    };
    let cli_reason = cli.split("; pass --image").next().unwrap();
    let reason = a.replay_blocker(0).expect("a reason").reason().to_string();
    assert!(
        reason.starts_with(cli_reason) && reason.contains("I gives"),
        "the CLI says {cli:?}, the explorer {reason:?}"
    );
    says_its_reason_before_the_machines(&mut a, &reason);
    a.settings.supplied.image = Some(PathBuf::from("saxpy.cubin"));
    let reason = a.replay_blocker(0).expect("a reason").reason().to_string();
    assert!(reason.starts_with("no CUDA driver"), "{reason}");
}

/// The replay, tuning and profile screens give `reason` (not the missing driver), and `r`
/// refuses with it.
fn says_its_reason_before_the_machines(a: &mut App, reason: &str) {
    let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
    for (screen, intro) in [
        ('4', "This instance cannot be replayed:"),
        ('5', "This instance cannot be replayed, nor tuned:"),
        ('6', "This instance cannot be replayed, nor profiled:"),
    ] {
        key(a, screen);
        let text = screen_text(a);
        assert!(
            text.contains(&format!("{intro} {}", words(reason))),
            "screen {screen}: {text}"
        );
        assert!(!text.contains("no CUDA driver"), "screen {screen}: {text}");
        if screen == '5' {
            // A long reason leaves the form's help less room at 80×24: its last line is whole
            // (the axes' syntax gives way to a pointer to the help), never cut.
            let whole = text.contains("`adaptive` or N per configuration.")
                || text.contains("r starts it. ? lists the axes' syntax.");
            assert!(whole, "{text}");
        }
    }
    key(a, 'r');
    let status = a.status.as_ref().expect("r says why").text.clone();
    assert!(status.contains(reason), "{status}");
}

/// An LLVM 19–22 record cannot be replayed on any machine: the replay, tuning and profile
/// screens say so (the reason `rr-tui replay` gives) before any key, not the missing driver.
#[test]
fn an_unreplayable_record_says_its_own_reason_before_the_machines() {
    let dir = PathBuf::from("record-fixtures/llvm19-saxpy");
    let no_gpu = Err("no CUDA driver found (libcuda.so.1 could not be loaded)".to_string());
    let mut a = rr_tui::tui::load_app(dir.clone(), no_gpu, std::env::temp_dir()).unwrap();
    a.update(Msg::Resize(80, 24));
    let request = rr_engine::replay::ReplayRequest::new(dir.join("rr_saxpy.json"));
    let cli = match rr_tui::commands::replay::preflight(&request) {
        Err(e) => e.to_string(),
        Ok(_) => panic!("replay accepts an LLVM 19 record"),
    };
    let reason = a.replay_blocker(0).expect("a reason").reason().to_string();
    assert!(
        cli.contains(&reason),
        "the CLI says {cli:?}, the explorer {reason:?}"
    );
    says_its_reason_before_the_machines(&mut a, &reason);
}

/// At 80×24 nothing a user needs is cut: the directory's name in the tab bar, the profile and
/// tuning help, the snapshot title's count of differing bytes, the A/B prompt's label, every key
/// of the screen in the hint bar; and a long message stays apart from the instance count.
#[test]
fn at_80_columns_nothing_needed_is_cut() {
    let mut a = app(false, (80, 24));
    for screen in ['1', '2', '4', '5', '6'] {
        key(&mut a, screen);
        let t = render(&a, ThemeName::Dark);
        let top = line(t.backend().buffer(), 0);
        assert!(top.contains("llvm-two-kernels"), "screen {screen}: {top}");
        let text = screen_text(&a);
        let hints = rr_tui::tui::keymap::hints(a.screen.scope());
        for (k, word) in hints {
            assert!(
                text.contains(&format!("{k} {word}")),
                "screen {screen}: {k} {word} missing: {text}"
            );
        }
    }
    key(&mut a, '6');
    assert!(screen_text(&a).contains("The full report is kept for ncu-ui."));
    assert!(
        screen_text(&a)
            .contains("Profiling needs an NVIDIA GPU with its driver and Nsight Compute's ncu"),
        "{}",
        screen_text(&a)
    );
    key(&mut a, '5');
    let t = render(&a, ThemeName::Dark);
    let defines = (0..24)
        .map(|y| line(t.backend().buffer(), y))
        .find(|l| l.contains("defines"))
        .unwrap();
    assert!(!defines.contains('…'), "{defines}");
    assert!(screen_text(&a).contains("e.g. TILE=1,2,4 UNROLL=1..8*2."));
    key(&mut a, '1');
    assert!(screen_text(&a).contains("q quit"));

    let long = "cannot replay here: no CUDA driver found (libcuda.so.1 could not be loaded): replaying needs an NVIDIA GPU";
    a.status = Some(rr_tui::tui::app::Status::new(long.into(), true));
    let t = render(&a, ThemeName::Dark);
    let buf = t.backend().buffer();
    let counter = (0..buf.area.height)
        .map(|y| line(buf, y))
        .find(|l| l.contains("4 of 4 instance(s)"))
        .unwrap();
    assert!(counter.contains(" │ 4 of 4 instance(s)"), "{counter}");
    a.status = None;

    let b = snapshots((80, 24), 0);
    let text = screen_text(&b);
    assert!(text.contains("13.79 KiB differ"), "{text}");

    key(&mut a, '4');
    key(&mut a, 'C');
    // The status lines, left of the rule before the instance count.
    let t = render(&a, ThemeName::Dark);
    let buf = t.backend().buffer();
    let text = (0..buf.area.height)
        .map(|y| {
            line(buf, y)
                .split(" │")
                .next()
                .unwrap_or("")
                .trim()
                .to_string()
        })
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        text.contains(
            "A/B candidate FILE [-D N=V] [--nvrtc-opt=O] [--candidate-kernel K] (empty: no A/B):"
        ),
        "{text}"
    );
}

/// The picker of the bundled `record-fixtures/` (seven record directories, none of its own).
fn picker_app((w, h): (u16, u16)) -> App {
    let mut a = rr_tui::tui::load_app(
        PathBuf::from("record-fixtures"),
        Err("no CUDA driver found".into()),
        std::env::temp_dir(),
    )
    .unwrap();
    a.update(Msg::Resize(w, h));
    // The search for record directories runs on a worker once the first frame is drawn.
    a.update_inline(Msg::FirstFrameDrawn);
    a.update_inline(Msg::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
    a
}

#[test]
fn record_directory_picker() {
    at_every_size("record_directory_picker", picker_app);
}

#[test]
fn empty_directory_names_every_layout() {
    // Relative to the package root, as the fixtures are: the screen shows the name.
    let dir = PathBuf::from("target/rr-tui-snapshot-empty-directory");
    std::fs::create_dir_all(&dir).unwrap();
    at_every_size("empty_directory", |(w, h)| {
        let mut a = rr_tui::tui::load_app(
            dir.clone(),
            Err("no CUDA driver found".into()),
            std::env::temp_dir(),
        )
        .unwrap();
        a.update(Msg::Resize(w, h));
        a.update_inline(Msg::FirstFrameDrawn);
        a
    });
}
