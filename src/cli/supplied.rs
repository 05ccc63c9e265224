//! What the user supplies that a legacy LLVM record lacks; shared by `replay` and `tune`.

use clap::Args;
use std::path::PathBuf;

use super::parse_address;

#[derive(Debug, Args, Clone, Default, PartialEq)]
pub struct SuppliedArgs {
    /// Device image to load instead of the recorded one.
    ///
    /// LLVM 16–17 records have none: give the kernel's cubin, e.g. unpacked from the
    /// application with clang-offload-packager.
    #[arg(long, value_name = "FILE", help_heading = "Legacy LLVM records")]
    pub image: Option<PathBuf>,
    /// Where an LLVM 16–17 record's memory starts.
    ///
    /// Not recorded; inferred from the pointer arguments when unambiguous.
    #[arg(long, value_name = "ADDR", value_parser = parse_address, help_heading = "Legacy LLVM records")]
    pub base_address: Option<u64>,
    /// Read an ambiguous LLVM 18–22 record as LLVM 18.
    ///
    /// For a record whose arguments may be values (LLVM 18) or slot addresses (LLVM 19–22).
    #[arg(long, help_heading = "Legacy LLVM records")]
    pub assume_llvm18: bool,
}

impl SuppliedArgs {
    pub fn supplied(&self) -> rr_engine::replay::Supplied {
        rr_engine::replay::Supplied {
            image: self.image.clone(),
            base_address: self.base_address,
            assume_llvm18: self.assume_llvm18,
        }
    }
}
