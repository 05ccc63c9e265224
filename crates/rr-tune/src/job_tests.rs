//! Tests of `job.rs` (kept apart to keep that file short).
use super::*;
use rr_engine::diff::Comparison;
use rr_engine::job::{encode, JobError, MAX_JOB_LINE};
use serde_json::Value;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

fn decode(line: &[u8]) -> Result<TuneJob, JobError> {
    rr_engine::job::decode(line)
}

/// A job with every field away from its default (and still one the command line gives).
pub(crate) fn full() -> TuneJob {
    TuneJob {
        descriptor: PathBuf::from(OsString::from_vec(b"rec\xff/k.json".to_vec())),
        kernels: Some("saxpy|gemm".into()),
        reports: Some(PathBuf::from("reports dir")),
        fresh_engines: true,
        shard: Some(Shard { k: 2, n: 3 }),
        array_task: Some(Shard { k: 1, n: 4 }),
        grid: Some("cover".into()),
        block: Some("32..1024*2".into()),
        shared_mem: Some("0,1024".into()),
        registers: Some("32..128:32".into()),
        source: Some(PathBuf::from("k.cu")),
        defines: vec![
            DefineAxis::parse("TILE=1..8*2").unwrap(),
            DefineAxis::parse("T=float,double").unwrap(),
        ],
        nvrtc_opts: vec!["--use_fast_math".into()],
        source_kernel: Some("k2".into()),
        ignore_limits: true,
        list: true,
        strategy: StrategyKind::Tpe,
        budget: Some(40),
        time_limit: Some(90.5),
        seed: Some(u64::MAX),
        simulate: None,
        devices: None,
        engine_hub: Some(PathBuf::from("/tmp/hub.sock")),
        engines: Some(3),
        objective: Objective::Edp,
        energy: true,
        energy_seconds: 2.5,
        samples: None,
        timing: SweepTiming {
            cold: Some(false),
            max_noise: Some(1.5),
            min_samples: Some(4),
            min_time: Some(0.25),
            timeout: Some(3.0),
        },
        supplied: Supplied {
            image: Some(PathBuf::from("img.cubin")),
            base_address: Some(0x7f00_0000_0000),
            assume_llvm18: true,
        },
        verify: Verify::Typed(Comparison::parse_spec("f32:rtol=1e-5,ulp=4").unwrap()),
        strict: true,
        kernel_timeout: 2.5,
        csv: Some(PathBuf::from("s.csv")),
        json_out: Some(PathBuf::from("s.json")),
        export: Some(PathBuf::from("tuned.json")),
        resume: true,
        events: true,
        run_id: u64::MAX,
    }
}

/// The fields `full` leaves at their defaults because others exclude them, away from them.
fn full_other() -> TuneJob {
    TuneJob {
        simulate: Some(PathBuf::from("sweep.json")),
        devices: Some(vec![1, 0]),
        samples: Some(7),
        timing: SweepTiming {
            cold: Some(true),
            ..SweepTiming::default()
        },
        engine_hub: None,
        engines: None,
        export: None,
        resume: false,
        verify: Verify::No,
        ..full()
    }
}

#[test]
fn a_job_reads_back_as_it_was_sent_paths_in_any_bytes_included() {
    for job in [full(), full_other(), TuneJob::new(PathBuf::from("a.json"))] {
        job.check().unwrap();
        assert_eq!(decode(&encode(&job).unwrap()), Ok(job));
    }
    // Every field of the full job is away from its default.
    let (full, plain) = (
        serde_json::to_value(full()).unwrap(),
        serde_json::to_value(TuneJob::new(PathBuf::new())).unwrap(),
    );
    let other = serde_json::to_value(full_other()).unwrap();
    for (key, value) in plain.as_object().unwrap() {
        assert!(
            full[key] != *value || other[key] != *value,
            "{key} is left at its default"
        );
    }
}

#[test]
fn unknown_and_missing_fields_are_refused() {
    let line = encode(&full()).unwrap();
    for (path, key) in [
        ("/tune", "surprise"),
        ("/tune/timing", "evil"),
        ("/tune/shard", "x"),
        ("/tune/defines/0", "y"),
        ("/tune/supplied", "z"),
    ] {
        let mut v: Value = serde_json::from_slice(&line).unwrap();
        v.pointer_mut(path).unwrap()[key] = 1.into();
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(e.message.contains(key), "{path}: {}", e.message);
        assert_eq!(e.run, Some(u64::MAX));
    }
    for key in ["strategy", "run_id", "energy_seconds", "timing", "defines"] {
        let mut v: Value = serde_json::from_slice(&line).unwrap();
        v["tune"].as_object_mut().unwrap().remove(key);
        let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
        assert!(e.message.contains(key), "{key}: {}", e.message);
    }
    let mut v: Value = serde_json::from_slice(&line).unwrap();
    v["protocol"] = 2.into();
    let e = decode(&serde_json::to_vec(&v).unwrap()).unwrap_err();
    assert!(e.message.contains("protocol 2"), "{}", e.message);
    assert!(decode(&vec![b' '; MAX_JOB_LINE + 1]).is_err());
    let twice =
        String::from_utf8(line)
            .unwrap()
            .replacen("\"run_id\":", "\"run_id\":1,\"run_id\":", 1);
    let e = decode(twice.as_bytes()).unwrap_err();
    assert!(e.message.contains("duplicate"), "{}", e.message);
}

/// How a test breaks a job.
type Breaker = Box<dyn Fn(&mut TuneJob)>;

/// The command line's limits hold for jobs too: each broken one is refused naming its flag.
#[test]
fn a_job_outside_the_command_lines_limits_is_refused_naming_the_flag() {
    let cases: Vec<(&str, Breaker)> = vec![
        (
            "--shard",
            Box::new(|j| j.shard = Some(Shard { k: 4, n: 3 })),
        ),
        (
            "SLURM_ARRAY_TASK_ID",
            Box::new(|j| j.array_task = Some(Shard { k: 0, n: 3 })),
        ),
        ("--budget", Box::new(|j| j.budget = Some(0))),
        ("--budget", Box::new(|j| j.budget = Some(MAX_MEASURED + 1))),
        ("--time-limit", Box::new(|j| j.time_limit = Some(0.0))),
        ("--time-limit", Box::new(|j| j.time_limit = Some(-5.0))),
        (
            "--devices",
            Box::new(|j| {
                j.engine_hub = None;
                j.engines = None;
                j.devices = Some(vec![0, 0]);
            }),
        ),
        (
            "--devices",
            Box::new(|j| {
                j.engine_hub = None;
                j.engines = None;
                j.devices = Some(vec![-1]);
            }),
        ),
        ("--engines", Box::new(|j| j.engines = Some(0))),
        ("--engines", Box::new(|j| j.engines = Some(MAX_ENGINES + 1))),
        (
            "--devices",
            Box::new(|j| {
                j.engine_hub = None;
                j.engines = None;
                j.devices = Some((0..=i32::from(MAX_ENGINES)).collect());
            }),
        ),
        ("--engines", Box::new(|j| j.engine_hub = None)),
        ("--engine-hub", Box::new(|j| j.engines = None)),
        ("--engine-hub", Box::new(|j| j.devices = Some(vec![0]))),
        (
            "--simulate",
            Box::new(|j| {
                j.engine_hub = None;
                j.engines = None;
                j.export = None;
                j.simulate = Some(PathBuf::from("s.json"));
            }),
        ),
        (
            "--export",
            Box::new(|j| {
                j.engine_hub = None;
                j.engines = None;
                j.resume = false;
                j.simulate = Some(PathBuf::from("s.json"));
            }),
        ),
        ("--samples", Box::new(|j| j.samples = Some(3))),
        (
            "--samples",
            Box::new(|j| {
                j.timing = SweepTiming::default();
                j.samples = Some(0);
            }),
        ),
        (
            "--samples 1000001: expected a number of samples from 1 to 1000000",
            Box::new(|j| {
                j.timing = SweepTiming::default();
                j.samples = Some(SAMPLES.end() + 1);
            }),
        ),
        ("--max-noise", Box::new(|j| j.timing.max_noise = Some(0.0))),
        (
            "--min-samples",
            Box::new(|j| j.timing.min_samples = Some(1)),
        ),
        ("--min-time", Box::new(|j| j.timing.min_time = Some(3601.0))),
        ("--timeout", Box::new(|j| j.timing.timeout = Some(-1.0))),
        ("--energy-seconds", Box::new(|j| j.energy_seconds = 0.1)),
        ("--energy-seconds", Box::new(|j| j.energy_seconds = 61.0)),
        ("--kernel-timeout", Box::new(|j| j.kernel_timeout = -1.0)),
        (
            "--kernel-timeout",
            Box::new(|j| j.kernel_timeout = 86_401.0),
        ),
        (
            "--tolerance",
            Box::new(|j| {
                if let Verify::Typed(c) = &mut j.verify {
                    c.tolerance.atol = -1.0
                }
            }),
        ),
        ("--define", Box::new(|j| j.defines[0].name = "1BAD".into())),
        ("--define", Box::new(|j| j.defines[1].name = "TILE".into())),
        ("--define", Box::new(|j| j.source = None)),
        (
            "--nvrtc-opt and --source-kernel",
            Box::new(|j| {
                j.defines.clear();
                j.source = None;
            }),
        ),
    ];
    for (flag, break_it) in cases {
        let mut job = full();
        break_it(&mut job);
        let e = decode(&encode(&job).unwrap()).unwrap_err();
        assert!(e.message.contains(flag), "{flag}: {}", e.message);
        assert_eq!(e.run, Some(u64::MAX), "{flag}");
    }
}

#[test]
fn the_slurm_part_applies_where_the_sweep_can_be_split_and_to_instances_always() {
    let task = Shard { k: 2, n: 4 };
    let mut j = TuneJob::new(PathBuf::from("x.json"));
    j.array_task = Some(task);
    assert_eq!(j.shard(), Some(task));
    j.budget = Some(10);
    assert_eq!(j.shard(), None, "a budget is not split");
    assert_eq!(j.instances_shard(), Some(task));
    j.shard = Some(Shard { k: 1, n: 2 });
    assert_eq!(j.shard(), Some(Shard { k: 1, n: 2 }), "as given");
}

#[test]
fn the_engine_of_a_sweep_measures_as_the_sweep_says() {
    let j = full();
    let e = j.engine(2);
    assert_eq!(e.device_id, Some(2));
    assert_eq!(e.descriptor, j.descriptor);
    assert_eq!((e.verify, e.energy), (j.verify, true));
    assert_eq!(e.kernel_timeout, 2.5);
    assert_eq!(e.supplied, j.supplied);
    assert_eq!(e.simulate, None);
    e.check().unwrap();
}
