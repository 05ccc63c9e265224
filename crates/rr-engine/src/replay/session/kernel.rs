//! The kernel a session binds: an instance's image loaded and its kernel, parameters, objects
//! and globals bound ([`bind_instance`]); the function, checked against the record's
//! parameters, and the globals put back before every run (the recorded ones, and a candidate's
//! own).

use std::path::Path;

use rr_cuda::{Module, Params};
use rr_format::globals::Globals;
use rr_format::image::{self, ImageKind};
use rr_format::text::visible;

use super::{classify, DeviceInfo, RunError};
use crate::error::{Error, Result};
use crate::replay::guards;
use crate::replay::instance::ReplayInstance;
use crate::replay::launch;
use crate::replay::objects::{self, ReplayObjects};
use crate::replay::protocol::Event;

/// The parts of a session that come from its instance's descriptor and image.
pub(super) struct Bound {
    pub(super) params: Params,
    pub(super) objects: ReplayObjects,
    pub(super) kernel: Kernel,
    /// The image, kept when it is PTX (a register limit recompiles it).
    pub(super) ptx: Option<Vec<u8>>,
    pub(super) recorded_globals: Globals,
    pub(super) kernel_name: String,
}

/// Load `inst`'s image on `device` and bind its kernel, parameters, objects and globals.
pub(super) fn bind_instance(
    inst: &ReplayInstance,
    device: &DeviceInfo,
    progress: &mut dyn FnMut(Event),
) -> Result<Bound> {
    let d = &inst.descriptor;
    let (image_bytes, image_info) = image::read(&inst.image)?;
    if let ImageKind::Cubin { sm: image_sm, .. } = image_info.kind {
        if !image::sm_compatible(image_sm, device.sm) {
            return Err(Error::format(
                &inst.image,
                format!(
                    "the image is for sm_{image_sm} but {} is sm_{}; a cubin runs only on its own major architecture \
                     (re-record on this GPU, or record PTX)",
                    device.name, device.sm
                ),
            ));
        }
    }
    progress(Event::Phase {
        name: "load".into(),
        detail: format!(
            "{} ({})",
            visible(&inst.image.to_string_lossy()),
            image_info.kind.describe()
        ),
    });
    let module = Module::load(&image_bytes).map_err(|e| {
        e.context(format!(
            "loading the device image {}",
            visible(&inst.image.to_string_lossy())
        ))
    })?;
    let (buf, slots) = launch::parameters(d);
    let json = inst.files.json();
    let mut params = Params::new(buf, slots).map_err(|m| Error::format(&json, m))?;
    let objects = objects::create(inst, &mut params)?;
    for note in &objects.notes {
        progress(Event::Phase {
            name: "note".into(),
            detail: note.clone(),
        });
    }
    let recorded_globals = inst.globals.clone();
    let kernel = Kernel::bind(&module, &d.name, &params, &recorded_globals, inst)?;
    Ok(Bound {
        params,
        objects,
        kernel,
        ptx: matches!(image_info.kind, ImageKind::Ptx { .. }).then_some(image_bytes),
        recorded_globals,
        kernel_name: d.name.clone(),
    })
}

/// The loaded kernel: its function (parameters checked against the record) and its globals.
pub(super) struct Kernel {
    pub(super) function: rr_cuda::Function,
    pub(super) globals: Vec<(rr_cuda::module::Global, Vec<u8>)>,
    /// `(offset, size)` of each parameter, as the image declares them.
    pub(super) layout: Vec<(usize, usize)>,
}

impl Kernel {
    pub(super) fn bind(
        module: &Module,
        name: &str,
        params: &Params,
        recorded: &Globals,
        inst: &ReplayInstance,
    ) -> Result<Kernel> {
        let function = module.function(name).map_err(|e| {
            e.context(format!(
                "kernel {} not found in {}",
                visible(name),
                visible(&inst.image.to_string_lossy())
            ))
        })?;
        let layout = function.param_layout()?;
        params
            .check_against(&layout)
            .map_err(|m| Error::format(inst.files.json(), m))?;
        let globals_path = inst.files.globals();
        let mut globals = Vec::with_capacity(recorded.entries.len());
        for g in &recorded.entries {
            let target = module.global(&g.name).map_err(|e| {
                e.context(format!("global {} is not in the image", visible(&g.name)))
            })?;
            if target.size as u64 != g.size {
                return Err(Error::format(
                    &globals_path,
                    format!(
                        "global {} is {} bytes but the image's is {}",
                        visible(&g.name),
                        g.size,
                        target.size
                    ),
                ));
            }
            globals.push((target, recorded.data(g).to_vec()));
        }
        Ok(Kernel {
            function,
            globals,
            layout,
        })
    }

    /// Bind again after a recompilation (the record was checked when the session opened).
    pub(super) fn rebind(
        module: &Module,
        name: &str,
        params: &Params,
        recorded: &Globals,
    ) -> std::result::Result<Kernel, RunError> {
        let function = module.function(name).map_err(classify)?;
        let layout = function.param_layout().map_err(classify)?;
        params
            .check_against(&layout)
            .map_err(|m| RunError::Other(Error::invalid(m)))?;
        let mut globals = Vec::with_capacity(recorded.entries.len());
        for g in &recorded.entries {
            let target = module.global(&g.name).map_err(classify)?;
            globals.push((target, recorded.data(g).to_vec()));
        }
        Ok(Kernel {
            function,
            globals,
            layout,
        })
    }

    /// Bind an A/B candidate's kernel: its parameters must be laid out exactly as the recorded
    /// kernel's (`recorded_layout`); its globals of the recorded names and sizes get the recorded
    /// values, and the others are said in the notes.
    pub(super) fn bind_candidate(
        module: &Module,
        name: &str,
        recorded_layout: &[(usize, usize)],
        recorded: &Globals,
        notes: &mut Vec<String>,
    ) -> Result<Kernel> {
        let function = module.function(name).map_err(|e| {
            e.context(format!(
                "kernel {} not found in the candidate",
                visible(name)
            ))
        })?;
        let layout = function.param_layout()?;
        if layout != recorded_layout {
            return Err(Error::invalid(format!(
                "the candidate's parameters differ from the recorded kernel's (offset:size): recorded {}, candidate {}",
                rr_cuda::launch::describe_layout(recorded_layout),
                rr_cuda::launch::describe_layout(&layout)
            )));
        }
        let mut globals = Vec::with_capacity(recorded.entries.len());
        for g in &recorded.entries {
            match module.global(&g.name) {
                Ok(target) if target.size as u64 == g.size => {
                    globals.push((target, recorded.data(g).to_vec()))
                }
                Ok(target) => notes.push(format!(
                    "global {} is {} bytes in the candidate, {} recorded: left as the candidate initialises it",
                    visible(&g.name),
                    target.size,
                    g.size
                )),
                Err(_) => notes.push(format!(
                    "global {} is not in the candidate: its recorded value is not used",
                    visible(&g.name)
                )),
            }
        }
        Ok(Kernel {
            function,
            globals,
            layout,
        })
    }
}

/// Add the candidate's own globals (those its image defines beyond the recorded names) to what
/// is put back before every run, at their values as loaded: a result cached in a `static
/// __device__` variable by one run is gone for the next ([`guards`]). At most
/// [`guards::MAX_OWN_GLOBAL_BYTES`] in all; what is left out is said in `notes`.
pub(super) fn own_globals(
    module: &Module,
    image: &[u8],
    recorded: &Globals,
    kernel: &mut Kernel,
    notes: &mut Vec<String>,
) -> Result<()> {
    let names = guards::image_globals(image);
    let mut budget = guards::MAX_OWN_GLOBAL_BYTES;
    let mut reset = 0;
    // Those of the recorded names already get the recorded values.
    let names = names
        .into_iter()
        .filter(|n| !recorded.entries.iter().any(|g| &g.name == n));
    for name in names {
        // A symbol the driver does not give (shared memory, a local) is no global to reset.
        let Ok(g) = module.global(&name) else {
            continue;
        };
        // Nothing to put back in an empty one (an extern array), nor twice in one.
        if g.size == 0 || kernel.globals.iter().any(|(k, _)| k.ptr == g.ptr) {
            continue;
        }
        if g.size as u64 > budget {
            notes.push(format!(
                "global {} of the candidate ({} bytes) is not reset between runs: over the {} MiB reset at most",
                visible(&name),
                g.size,
                guards::MAX_OWN_GLOBAL_BYTES >> 20
            ));
            continue;
        }
        budget -= g.size as u64;
        let value = g.download()?;
        kernel.globals.push((g, value));
        reset += 1;
    }
    if reset > 0 {
        notes.push(format!(
            "{reset} global(s) of the candidate's own are put back to their loaded values before every run"
        ));
    }
    if matches!(
        rr_format::image::identify(image, Path::new("candidate")).map(|i| i.kind),
        Ok(ImageKind::Fatbin)
    ) {
        notes.push(
            "a fatbin lists no globals without the driver: only those of the recorded names are reset between runs".into(),
        );
    }
    Ok(())
}
