//! Tests of `form.rs` (kept apart to keep that file short).
use super::*;
use ratatui::crossterm::event::{KeyCode, KeyModifiers};
use std::path::PathBuf;

fn press(form: &mut TuneForm, code: KeyCode) -> EditOutcome {
    form.edit_key(&KeyEvent::new(code, KeyModifiers::NONE))
}

#[test]
fn typing_checks_every_key_and_only_valid_text_is_kept() {
    let mut f = TuneForm {
        cursor: 1,
        ..TuneForm::default()
    };
    assert_eq!(f.activate(), None);
    press(&mut f, KeyCode::Char('x'));
    let e = f.editing.as_ref().unwrap();
    assert_eq!(e.editor.text(), "32..1024*2x");
    assert!(e.check.is_err());
    assert_eq!(press(&mut f, KeyCode::Enter), EditOutcome::Refused);
    press(&mut f, KeyCode::Backspace);
    assert!(f.editing.as_ref().unwrap().check.is_ok());
    press(&mut f, KeyCode::Char(','));
    press(&mut f, KeyCode::Char('9'));
    assert_eq!(
        press(&mut f, KeyCode::Enter),
        EditOutcome::Applied(Field::Block)
    );
    assert_eq!(f.settings.block, "32..1024*2,9");
    assert_eq!(f.settings.space_size(), Ok(7));
    f.activate();
    press(&mut f, KeyCode::Char('!'));
    assert_eq!(press(&mut f, KeyCode::Esc), EditOutcome::Cancelled);
    assert_eq!(f.settings.block, "32..1024*2,9");
}

#[test]
fn choices_cycle_and_huge_spaces_are_refused() {
    let at = |field: Field| Field::ALL.iter().position(|&f| f == field).unwrap();
    let mut f = TuneForm {
        cursor: at(Field::Strategy),
        ..TuneForm::default()
    };
    f.activate();
    assert_eq!(f.settings.strategy, StrategyKind::Random);
    f.cursor = at(Field::Cache);
    f.activate();
    f.cursor = at(Field::Limits);
    f.activate();
    let a = f.settings.job(PathBuf::from("x.json"), 1).unwrap();
    assert!(!a.timing.is_cold() && a.ignore_limits);
    // The command's own parsers for the search fields: what it refuses, the form refuses.
    assert!(Field::Devices
        .check("0,0")
        .unwrap_err()
        .contains("listed twice"));
    assert!(Field::TimeLimit.check("-1").is_err());
    assert!(Field::Seed.check("x").is_err());
    f.settings.devices = "0,1".into();
    f.settings.time_limit = "90".into();
    f.settings.seed = "7".into();
    let a = f.settings.job(PathBuf::from("x.json"), 1).unwrap();
    assert_eq!(a.devices, Some(vec![0, 1]));
    assert_eq!(a.time_limit, Some(90.0));
    assert_eq!(a.seed, Some(7));
    assert!(a.ignore_limits);
    f.settings.grid = "1..65536".into();
    f.settings.block = "1..1024".into();
    assert!(f.settings.space_size().is_err());
    assert_eq!(
        f.settings.job(PathBuf::from("x.json"), 1).unwrap_err().0,
        Field::Block
    );
}
