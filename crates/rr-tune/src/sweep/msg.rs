//! What the worker threads (one per GPU, or the simulated sweep's) tell the sweep's main
//! thread, which prints it and keeps the report.

use crate::trial::DeviceInfo;
use crate::Trial;

/// A worker's word to the main thread.
pub enum Msg {
    /// An engine is ready: when simulated, it answers from this sweep; `carried` says whether
    /// the last instance's engine of `tune DIR` went on to this one.
    Ready {
        info: DeviceInfo,
        simulated_from: Option<String>,
        carried: Option<Carried>,
    },
    Done(Box<Trial>),
    Gone(i32, String),
    /// The engine of this GPU refused the instance (an input error, why): no GPU will run it.
    Refused(i32, String),
    /// Something to say that ends nothing.
    Warn(String),
}

/// Whether the engine of a GPU went on from the last instance of `tune DIR` to this one.
pub enum Carried {
    /// It did: what stayed on the GPU and what was loaded, in words.
    Kept(String),
    /// It could not (why); a new engine serves this instance.
    Refused(String),
}
