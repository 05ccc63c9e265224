//! Tests of `tune.rs` (kept apart to keep that file short).
use super::*;

#[test]
fn the_defaults_make_a_sweep() {
    let f = TuneSettings::default();
    assert_eq!(f.space_size(), Ok(6));
    let a = f.job(PathBuf::from("x.json"), 3).unwrap();
    let mut want = TuneJob::new(PathBuf::from("x.json"));
    want.grid = Some("cover".into());
    want.block = Some("32..1024*2".into());
    want.strategy = StrategyKind::Exhaustive;
    want.run_id = 3;
    want.timing.cold = Some(true);
    want.events = true;
    assert_eq!(a, want);
}

/// `simulate FILE`: the form's defaults pass no flag `tune --simulate` would say has no
/// effect (cold is tune's default); hot, chosen, is passed (and warned of).
#[test]
fn a_simulated_sweep_gets_no_flag_the_user_did_not_set() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep.json");
    std::fs::write(&sweep, "{}").unwrap();
    let mut f = TuneSettings {
        devices: format!("simulate {}", sweep.display()),
        ..TuneSettings::default()
    };
    let a = f.job(PathBuf::from("x.json"), 3).unwrap();
    assert_eq!(a.simulate, Some(sweep.clone()));
    assert_eq!(a.timing, SweepTiming::default());
    assert!(a.samples.is_none() && a.verify == Verify::Bytes && !a.energy);
    assert!(a.devices.is_none());
    assert!(a.timing.is_cold(), "tune's default: cold");
    f.cold = false;
    let a = f.job(PathBuf::from("x.json"), 3).unwrap();
    assert_eq!(a.timing.cold, Some(false));
}

#[test]
fn compile_time_fields_make_define_axes_and_expressions() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    std::fs::write(&src, "__global__ void k() {}").unwrap();
    assert_eq!(
        Field::Defines.check("TILE=1,2; T=float,double"),
        Ok("4 variant(s)".into())
    );
    assert_eq!(
        Field::Defines.check("TILE=1,2 T=float,double"),
        Ok("4 variant(s)".into())
    );
    assert!(Field::Defines.check("TILE").is_err());
    assert!(Field::Defines
        .check("A=1; A=2")
        .unwrap_err()
        .contains("twice"));
    assert!(Field::Grid
        .check("GRID_X*4/TILE")
        .unwrap()
        .contains("per variant"));
    assert!(Field::Block.check("TILE = 3").is_err());
    assert!(Field::Source
        .check(&dir.path().display().to_string())
        .is_err());
    assert!(Field::Source.check(&src.display().to_string()).is_ok());
    let f = TuneSettings {
        source: src.display().to_string(),
        defines: "TILE=1,2; T=float,double".into(),
        grid: "GRID_X*4/TILE".into(),
        ..TuneSettings::default()
    };
    assert_eq!(f.space_size(), Ok(24));
    let job = f.job(PathBuf::from("x.json"), 1).unwrap();
    assert_eq!(job.source, Some(src.clone()));
    let defines: Vec<String> = job.defines.iter().map(|d| d.spec()).collect();
    assert_eq!(defines, ["TILE=1,2", "T=float,double"]);
    assert_eq!(job.grid.as_deref(), Some("GRID_X*4/TILE"));
}

#[test]
fn defines_need_a_source_as_the_command_says() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("k.cu");
    std::fs::write(&src, "__global__ void k() {}").unwrap();
    let without = TuneSettings {
        defines: "TILE=1,2".into(),
        ..TuneSettings::default()
    };
    let said = rr_tune::job::source_flags_problem(false, &[("--define", true)]).unwrap_err();
    assert_eq!(without.space_size(), Err(said.clone()));
    assert_eq!(
        without.job(PathBuf::from("x.json"), 1).unwrap_err(),
        (Field::Defines, said)
    );
    let with = TuneSettings {
        source: src.display().to_string(),
        ..without
    };
    assert_eq!(with.space_size(), Ok(12));
}

#[test]
fn fields_say_what_they_mean_or_why_not() {
    assert_eq!(Field::Block.check("32..1024*2"), Ok("6 values".into()));
    assert_eq!(
        Field::Block.check("32..10x"),
        Err(space::parse_dims("32..10x").unwrap_err())
    );
    assert_eq!(Field::SharedMem.check(""), Ok("recorded".into()));
    assert!(Field::SharedMem.check("0,49152").is_ok());
    assert!(Field::Registers
        .check("300")
        .unwrap_err()
        .contains("above 255"));
    assert!(Field::Budget.check("0").is_err());
    assert_eq!(Field::Samples.check("5"), Ok("5 per configuration".into()));
    assert!(Field::Samples.check("many").is_err());
    assert!(Field::Samples.check("1000000").is_ok());
    assert!(Field::Samples.check("1000001").is_err());
    assert_eq!(Field::Verify.check("off"), Ok("not verified".into()));
    assert!(Field::Verify.check("f32:rtol=1e-5").is_ok());
    assert!(Field::Verify
        .check("f33")
        .unwrap_err()
        .contains("unknown element type"));
}

/// A refusal of the job is shown on the field whose flag it names first.
#[test]
fn a_refusal_is_the_field_of_the_flag_it_names() {
    assert_eq!(
        Field::of_refusal("--samples cannot be used with --max-noise"),
        Field::Samples
    );
    assert_eq!(
        Field::of_refusal("--define TILE is given twice"),
        Field::Defines
    );
    assert_eq!(Field::of_refusal("--devices: GPU 0 twice"), Field::Devices);
    assert_eq!(Field::of_refusal("nothing named"), Field::Grid);
}
