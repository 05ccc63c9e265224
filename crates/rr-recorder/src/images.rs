//! The device images the driver loaded, and which one a launched kernel came from.
//!
//! CUPTI hands over each loaded module's image with a module *id*, while a launch yields a
//! `CUmodule` *handle*: there is no API between the two (cupti notes §4). They are tied by
//! where the load happens: inside a `cuModuleLoad*` call (bound at its exit), or nested inside
//! the recorder's own resolution of a lazily loaded kernel; the rest is found by the kernel's
//! symbol in the images' ELF symbol tables.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use rr_format::image::{self, ImageInfo, ImageKind};

pub struct Image {
    pub id: u32,
    pub bytes: Vec<u8>,
    info: OnceLock<Option<ImageInfo>>,
    blob: OnceLock<String>,
}

impl Image {
    /// What the image holds (parsed on first use: most loaded modules are never recorded).
    pub fn info(&self) -> Option<&ImageInfo> {
        self.info
            .get_or_init(|| image::identify(&self.bytes, Path::new("loaded module")).ok())
            .as_ref()
    }

    pub fn has_kernel(&self, name: &str) -> bool {
        self.info()
            .is_some_and(|i| i.kernels.iter().any(|k| k == name))
    }

    /// `(name, size)` of the image's global variables (`__device__`, `__constant__`).
    pub fn globals(&self) -> Vec<(String, u64)> {
        self.info()
            .map(|i| i.globals.iter().map(|g| (g.name.clone(), g.size)).collect())
            .unwrap_or_default()
    }

    /// The image's file in the record directory, named by its contents.
    pub fn file_name(&self) -> String {
        let blob = self
            .blob
            .get_or_init(|| rr_format::store::blob_id(&self.bytes));
        let ext = match self.info().map(|i| &i.kind) {
            Some(ImageKind::Fatbin) => "fatbin",
            Some(ImageKind::Ptx { .. }) => "ptx",
            _ => "cubin",
        };
        format!("images/{blob}.{ext}")
    }
}

#[derive(Default)]
pub struct Images {
    /// In load order.
    list: Vec<Arc<Image>>,
    by_id: HashMap<u32, usize>,
    by_handle: HashMap<u64, u32>,
}

impl Images {
    pub fn loaded(&mut self, id: u32, bytes: &[u8]) {
        let image = Arc::new(Image {
            id,
            bytes: bytes.to_vec(),
            info: OnceLock::new(),
            blob: OnceLock::new(),
        });
        self.by_id.insert(id, self.list.len());
        self.list.push(image);
    }

    /// A `cuModuleLoad*` call returned `handle` after loading these modules.
    pub fn bind(&mut self, handle: u64, ids: &[u32]) {
        if let Some(&id) = ids.last() {
            self.by_handle.insert(handle, id);
        }
    }

    fn get(&self, id: u32) -> Option<Arc<Image>> {
        self.by_id.get(&id).map(|&i| self.list[i].clone())
    }

    /// The image kernel `kernel` of module `handle` came from; `loaded_now` are the modules
    /// loaded while the recorder resolved the launch.
    pub fn resolve(&mut self, handle: u64, loaded_now: &[u32], kernel: &str) -> Option<Arc<Image>> {
        if let Some(&id) = self.by_handle.get(&handle) {
            return self.get(id);
        }
        let bound: std::collections::HashSet<u32> = self.by_handle.values().copied().collect();
        let pick = loaded_now
            .iter()
            .rev()
            .filter_map(|&id| self.get(id))
            .find(|i| i.has_kernel(kernel))
            .or_else(|| {
                // Loaded earlier by a call the recorder does not watch: the newest unbound
                // image defining the kernel, then any image defining it.
                self.list
                    .iter()
                    .rev()
                    .find(|i| !bound.contains(&i.id) && i.has_kernel(kernel))
                    .or_else(|| self.list.iter().rev().find(|i| i.has_kernel(kernel)))
                    .cloned()
            })?;
        self.by_handle.insert(handle, pick.id);
        Some(pick)
    }
}
