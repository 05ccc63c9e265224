//! Tests of `tune.rs` (kept apart to keep that file short).
use super::super::{Cli, Command};
use super::*;
use clap::Parser;
use rr_tune::job::SweepTiming;

fn engine_args(args: &[&str]) -> super::EngineArgs {
    let argv = ["rr-tui", "engine"].iter().chain(args).copied();
    match Cli::try_parse_from(argv).unwrap().command {
        Some(Command::Engine(a)) => a,
        other => panic!("not engine: {other:?}"),
    }
}

fn tune_args(args: &[&str]) -> super::TuneArgs {
    let argv = ["rr-tui", "tune"].iter().chain(args).copied();
    match Cli::try_parse_from(argv).unwrap().command {
        Some(Command::Tune(a)) => *a,
        other => panic!("not tune: {other:?}"),
    }
}

/// The command line's defaults are the job's: `tune X` is `TuneJob::new(X)`.
#[test]
fn a_bare_command_line_is_the_jobs_defaults() {
    assert_eq!(
        tune_args(&["x.json"]).job(),
        Ok(TuneJob::new(PathBuf::from("x.json")))
    );
    let e = engine_args(&["x.json"]).job();
    assert_eq!(e, Ok(EngineJob::new(PathBuf::from("x.json"))));
}

/// Each flag lands in its field of the job.
#[test]
fn a_command_line_becomes_the_job_it_says() {
    let a = tune_args(&[
        "x y.json",
        "--grid",
        "cover",
        "--block",
        "32..1024*2",
        "--shared-mem",
        "0,1024",
        "--registers",
        "64",
        "--strategy",
        "annealing",
        "--budget",
        "20",
        "--samples",
        "5",
        "--hot",
        "--tolerance",
        "f32:rtol=1e-5",
        "--events",
        "--run-id",
        "7",
        "--devices",
        "0,1",
        "--seed",
        "9",
        "--ignore-limits",
        "--objective",
        "edp",
        "--energy-seconds",
        "2.5",
        "--shard",
        "2/3",
        "--image",
        "k.cubin",
        "--assume-llvm18",
        "--json",
        "old.json",
        "--list",
    ]);
    let mut want = TuneJob::new(PathBuf::from("x y.json"));
    want.grid = Some("cover".into());
    want.block = Some("32..1024*2".into());
    want.shared_mem = Some("0,1024".into());
    want.registers = Some("64".into());
    want.strategy = StrategyKind::Annealing;
    want.budget = Some(20);
    want.samples = Some(5);
    want.timing.cold = Some(false);
    want.verify = Verify::Typed(parse_tolerance("f32:rtol=1e-5").unwrap());
    want.events = true;
    want.run_id = 7;
    want.devices = Some(vec![0, 1]);
    want.seed = Some(9);
    want.ignore_limits = true;
    want.objective = rr_tune::Objective::Edp;
    want.energy_seconds = 2.5;
    want.shard = Some(rr_tune::shard::Shard { k: 2, n: 3 });
    want.supplied.image = Some(PathBuf::from("k.cubin"));
    want.supplied.assume_llvm18 = true;
    want.json_out = Some(PathBuf::from("old.json"));
    want.list = true;
    assert_eq!(a.job(), Ok(want));

    let a = tune_args(&[
        "x.json",
        "--cold",
        "--max-noise",
        "1.5",
        "--min-samples",
        "4",
        "--min-time",
        "0.5",
        "--timeout",
        "3",
        "--no-verify",
        "--json-out",
        "s.json",
        "--resume",
        "--time-limit",
        "60",
        "--strict",
        "--kernel-timeout",
        "2.5",
        "--energy",
        "--csv",
        "s.csv",
        "--export",
        "t.json",
        "--source",
        "k.cu",
        "-D",
        "TILE=1..4*2",
        "--nvrtc-opt=--use_fast_math",
        "--source-kernel",
        "k2",
        "--base-address",
        "0x1000",
    ]);
    let mut want = TuneJob::new(PathBuf::from("x.json"));
    want.timing = SweepTiming {
        cold: Some(true),
        max_noise: Some(1.5),
        min_samples: Some(4),
        min_time: Some(0.5),
        timeout: Some(3.0),
    };
    want.verify = Verify::No;
    want.json_out = Some(PathBuf::from("s.json"));
    want.resume = true;
    want.time_limit = Some(60.0);
    want.strict = true;
    want.kernel_timeout = 2.5;
    want.energy = true;
    want.csv = Some(PathBuf::from("s.csv"));
    want.export = Some(PathBuf::from("t.json"));
    want.source = Some(PathBuf::from("k.cu"));
    want.defines = vec![rr_tune::defines::DefineAxis::parse("TILE=1,2,4").unwrap()];
    want.nvrtc_opts = vec!["--use_fast_math".into()];
    want.source_kernel = Some("k2".into());
    want.supplied.base_address = Some(0x1000);
    assert_eq!(a.job(), Ok(want));

    let hub = tune_args(&["x.json", "--engine-hub", "h.sock", "--engines", "3"]).job();
    assert_eq!(
        hub.map(|j| (j.engine_hub, j.engines)),
        Ok((Some(PathBuf::from("h.sock")), Some(3)))
    );
    // What clap lets through and the job refuses is refused, naming the flag.
    let e = tune_args(&["x.json", "-D", "T=1,2"]).job().unwrap_err();
    assert!(e.starts_with("--define applies to a --source only"), "{e}");
}

#[test]
fn the_engines_flags_become_its_job() {
    let a = engine_args(&[
        "x.json",
        "--device-id",
        "2",
        "--tolerance",
        "f16:atol=1e-3",
        "--energy",
        "--kernel-timeout",
        "0",
        "--simulate",
        "s.json",
        "--pace",
        "0",
        "--image",
        "k.cubin",
    ]);
    let mut want = EngineJob::new(PathBuf::from("x.json"));
    want.device_id = Some(2);
    want.verify = Verify::Typed(parse_tolerance("f16:atol=1e-3").unwrap());
    want.energy = true;
    want.kernel_timeout = 0.0;
    want.simulate = Some(PathBuf::from("s.json"));
    want.pace = 0.0;
    want.supplied.image = Some(PathBuf::from("k.cubin"));
    assert_eq!(a.job(), Ok(want));
    let off = engine_args(&["x.json", "--no-verify"]).job().unwrap();
    assert_eq!(off.verify, Verify::No);
}
