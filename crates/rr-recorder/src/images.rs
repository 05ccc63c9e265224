//! The device images the driver loaded, and which one a launched kernel came from.
//!
//! Each loaded image comes with a module *id* (CUPTI's, or one the interposed entry points
//! give), while a launch yields a `CUmodule` *handle*: there is no API between the two (cupti
//! notes §4). They are tied by where the load happens: inside a `cuModuleLoad*` call (bound at
//! its exit), or nested inside the recorder's own resolution of a lazily loaded kernel; images
//! of libraries (`cuLibraryLoad*` seen through the entry points) are bound by asking the driver
//! for each library's module; the rest is found by the kernel's symbol in the images' ELF
//! symbol tables.

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
    /// Whether the image is an ELF cubin (what CUPTI reports; an interposed load may hold a
    /// fatbin or PTX).
    pub fn is_cubin(&self) -> bool {
        matches!(self.info().map(|i| &i.kind), Some(ImageKind::Cubin { .. }))
    }

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
    /// Loaded libraries and the image id of each, in load order.
    libraries: Vec<(u64, u32)>,
    /// Images derived so far ([`Images::derive`]) and the image each was derived from.
    derived: HashMap<u32, u32>,
}

impl Images {
    pub fn loaded(&mut self, id: u32, bytes: &[u8]) {
        self.insert(id, bytes.to_vec());
    }

    fn insert(&mut self, id: u32, bytes: Vec<u8>) {
        let image = Arc::new(Image {
            id,
            bytes,
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

    /// A `cuLibraryLoad*` call returned `library` after loading these modules.
    pub fn library(&mut self, library: u64, ids: &[u32]) {
        if let Some(&id) = ids.last() {
            self.libraries.push((library, id));
        }
    }

    /// `library` is being unloaded: its handle, and those of its modules, may be reused.
    pub fn library_unloaded(&mut self, library: u64) {
        let gone: Vec<u32> = self
            .libraries
            .iter()
            .filter(|l| l.0 == library)
            .map(|l| l.1)
            .collect();
        self.libraries.retain(|l| l.0 != library);
        let derived = &self.derived;
        self.by_handle.retain(|_, id| {
            let source = derived.get(id).unwrap_or(id);
            !gone.contains(source)
        });
    }

    /// The image module `handle` is tied to, if any.
    pub fn bound(&self, handle: u64) -> Option<Arc<Image>> {
        self.by_handle.get(&handle).and_then(|&id| self.get(id))
    }

    /// Forget what module `handle` was tied to (an image without the launched kernel: the
    /// handle was reused by a module loaded unseen).
    pub fn unbind(&mut self, handle: u64) {
        self.by_handle.remove(&handle);
    }

    /// Whether module `handle` is tied to an image already.
    pub fn is_bound(&self, handle: u64) -> bool {
        self.by_handle.contains_key(&handle)
    }

    /// The loaded libraries, newest first (`(library, image id)`): a library has a module in
    /// every context that used it.
    pub fn libraries(&self) -> Vec<(u64, u32)> {
        self.libraries.iter().rev().copied().collect()
    }

    /// Module `handle` runs from `cubin`, which the driver made of image `from` (a fatbin or
    /// PTX) for its GPU: a new image (the fatbin stays for modules of other GPUs).
    pub fn derive(&mut self, handle: u64, from: u32, cubin: Vec<u8>) -> Arc<Image> {
        // Ids of derived images count down from the top: loads count up from small numbers.
        let id = u32::MAX - self.derived.len() as u32;
        self.derived.insert(id, from);
        self.insert(id, cubin);
        self.bind(handle, &[id]);
        self.list[self.by_id[&id]].clone()
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
