//! Engines kept between the instances of `tune DIR`. A sweep's engine, once the sweep is done,
//! waits here instead of quitting; the next instance's sweep on the same GPU with the same
//! settings takes it and has it switch instances, so the device memory the two instances share
//! (a model's weights, most of a recording) stays on the GPU instead of being read and uploaded
//! again. Nothing is kept unless [`keep`] was called, and everything kept quits when its guard
//! goes.

use std::sync::Mutex;

use crate::engine_job::EngineJob;

use super::engine_child::EngineChild;

/// An idle engine with the settings (its job but the instance, [`EngineJob::settings`]) it was
/// started with.
type Idle = (EngineJob, EngineChild);

/// The idle engines; None while engines are not kept.
static IDLE: Mutex<Option<Vec<Idle>>> = Mutex::new(None);

/// While this lives, finished sweeps leave their engines for the next ones.
pub struct Keeping(());

/// Keep engines between sweeps until the guard is dropped (the kept ones then quit).
pub fn keep() -> Keeping {
    *lock() = Some(Vec::new());
    Keeping(())
}

impl Drop for Keeping {
    fn drop(&mut self) {
        // Taken out first: engines quit (and are waited for) without the lock held.
        let idle = lock().take();
        drop(idle);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<Vec<Idle>>> {
    IDLE.lock().unwrap_or_else(|p| p.into_inner())
}

/// A kept engine started with the same settings as `job` (its GPU among them), whatever
/// instance it served.
pub(crate) fn take(job: &EngineJob) -> Option<EngineChild> {
    let want = job.settings();
    let mut idle = lock();
    let list = idle.as_mut()?;
    let i = list.iter().position(|(s, _)| *s == want)?;
    Some(list.swap_remove(i).1)
}

/// Leave `engine` (started with `job`) for the next sweep; it quits now when engines are not
/// kept.
pub(crate) fn put(job: &EngineJob, engine: EngineChild) {
    let mut idle = lock();
    match idle.as_mut() {
        Some(list) => list.push((job.settings(), engine)),
        None => {
            drop(idle);
            drop(engine);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;
    use std::path::{Path, PathBuf};

    /// A stand-in engine (`rr-tui job`): its job first, which must be an engine job; then
    /// ready at once; `load` of an instance named `moved*` is refused as a real engine refuses
    /// an instance laid out differently, any other is switched to.
    const ENGINE: &str = r#"#!/bin/sh
[ "$1" = job ] || exit 3
read -r job
case "$job" in
  '{"protocol":1,"engine":{'*) ;;
  *) exit 4;;
esac
echo '{"run":0,"event":"ready","rated_clock_mhz":1000.0,"ptx":false}'
while read -r line; do
  case "$line" in
    *'"load"'*)
      id=$(echo "$line" | sed 's/.*"id":\([0-9]*\).*/\1/')
      case "$line" in
        *moved*)
          echo "{\"run\":$id,\"event\":\"error\",\"kind\":\"setup\",\"message\":\"cannot switch to this instance: its memory is laid out differently\"}"
          exit 1;;
      esac
      echo "{\"run\":$id,\"event\":\"phase\",\"name\":\"switched\",\"detail\":\"1 GiB of 1 GiB kept\"}"
      echo "{\"run\":$id,\"event\":\"ready\",\"rated_clock_mhz\":1000.0,\"ptx\":false}";;
    *quit*) exit 0;;
  esac
done
"#;

    fn args(descriptor: &str, device: i32) -> EngineJob {
        EngineJob {
            device_id: Some(device),
            kernel_timeout: 10.0,
            ..EngineJob::new(PathBuf::from(descriptor))
        }
    }

    #[test]
    fn a_kept_engine_serves_the_next_instance_with_the_same_settings_only() {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join("engine.sh");
        std::fs::write(&exe, ENGINE).unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let keeping = keep();
        let first = EngineChild::start(&exe, &args("a.json", 0)).unwrap();
        put(&args("a.json", 0), first);
        assert!(take(&args("b.json", 1)).is_none(), "another GPU's engine");
        let mut other = args("b.json", 0);
        other.verify = rr_engine::replay::Verify::No;
        assert!(take(&other).is_none(), "other settings");

        let mut e = take(&args("b.json", 0)).expect("kept for the next instance");
        e.switch(Path::new("b.json")).unwrap();
        assert_eq!(e.switched.as_deref(), Some("1 GiB of 1 GiB kept"));
        let refused = e.switch(Path::new("moved.json")).unwrap_err();
        assert!(refused.why.contains("laid out differently"), "{refused}");
        assert!(take(&args("c.json", 0)).is_none(), "taken once");

        // Not keeping: a finished engine quits.
        drop(keeping);
        let e = EngineChild::start(&exe, &args("a.json", 0)).unwrap();
        put(&args("a.json", 0), e);
        assert!(take(&args("b.json", 0)).is_none());
    }
}
