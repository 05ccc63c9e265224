//! The bytes of a device image the program handed to the driver by pointer, found by the same
//! rules the driver reads it by ([`rr_format::image_extent`]). The program's memory is read with
//! `process_vm_readv` on this process: an image whose headers claim more than is mapped gives
//! no image instead of a crash in the program.

use std::ffi::c_void;

use rr_format::image_extent::{extent, Extent};

/// A copy of the image at `p` (an ELF cubin, a fatbin or cudart's wrapper around one, PTX
/// text), or `None` when its kind is not one of those, its length is implausible, or its bytes
/// are not all readable.
///
/// # Safety
/// `p` is null or an image the driver just loaded successfully from this pointer.
pub(super) unsafe fn at(p: *const c_void) -> Option<Vec<u8>> {
    let mut start = p as u64;
    // At most one level of cudart's wrapper.
    for _ in 0..2 {
        if start == 0 {
            return None;
        }
        let base = start;
        let read = move |off: u64, len: usize| copy(base.checked_add(off)?, len);
        match extent(&read)? {
            Extent::Wrapped(data) => start = data,
            Extent::Bytes(len) => return copy(start, usize::try_from(len).ok()?),
            Extent::Text => return text(start),
        }
    }
    None
}

/// PTX: the bytes before its NUL, read a page at a time up to the image limit.
fn text(start: u64) -> Option<Vec<u8>> {
    const PAGE: usize = 4096;
    let max = usize::try_from(rr_format::fsio::MAX_IMAGE_BYTES).ok()?;
    let mut out = Vec::new();
    while out.len() < max {
        let at = start.checked_add(out.len() as u64)?;
        // Up to the end of this page: the next one may not be mapped.
        let len = PAGE - (at as usize % PAGE);
        let piece = copy(at, len)?;
        if let Some(end) = piece.iter().position(|&b| b == 0) {
            out.extend_from_slice(&piece[..end]);
            return Some(out);
        }
        out.extend_from_slice(&piece);
    }
    None
}

/// `len` bytes of this process's memory at `addr`, or `None` where they are not mapped.
fn copy(addr: u64, len: usize) -> Option<Vec<u8>> {
    let mut out = vec![0u8; len];
    let local = libc::iovec {
        iov_base: out.as_mut_ptr() as *mut c_void,
        iov_len: len,
    };
    let remote = libc::iovec {
        iov_base: addr as usize as *mut c_void,
        iov_len: len,
    };
    // SAFETY: the kernel copies from our own address space into `out` (exactly `len` bytes),
    // checking every page of the source: an unmapped one is an error, never a fault.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    match n {
        n if n >= 0 && n as usize == len => Some(out),
        n if n >= 0 => None, // a short read: the rest is not mapped
        _ => match std::io::Error::last_os_error().raw_os_error() {
            // Not allowed here (a seccomp filter, no such call): read directly, trusting the
            // driver, which loaded the image from these bytes, as before.
            Some(libc::EPERM | libc::ENOSYS) => {
                // SAFETY: the caller of `at` vouches for the image; its headers say it spans
                // these bytes.
                Some(
                    unsafe { std::slice::from_raw_parts(addr as usize as *const u8, len) }.to_vec(),
                )
            }
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_in_memory_are_read_by_their_own_length_and_unmapped_bytes_are_no_image() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let cubin =
            std::fs::read(root.join("record-fixtures/rrtui-stencil3d/images/kernels-sm90.cubin"))
                .unwrap();
        let mut padded = cubin.clone();
        padded.extend_from_slice(&[7; 100]);
        // SAFETY: a buffer of ours, alive for the call.
        assert_eq!(unsafe { at(padded.as_ptr() as *const c_void) }, Some(cubin));
        let ptx = b"//\n.version 8.0\n.target sm_90\n\0garbage";
        // SAFETY: as above.
        let read = unsafe { at(ptx.as_ptr() as *const c_void) };
        let text = &ptx[..ptx.iter().position(|&b| b == 0).unwrap()];
        assert_eq!(read.as_deref(), Some(text));
        // A fatbin header claiming far more than is mapped: no image, no crash.
        let mut fatbin = rr_format::image_extent::FATBIN_MAGIC.to_le_bytes().to_vec();
        fatbin.extend_from_slice(&[1, 0, 16, 0]);
        fatbin.extend_from_slice(&(512u64 << 20).to_le_bytes());
        let page = 4096;
        // SAFETY: an anonymous mapping of one page, followed by an inaccessible one.
        let map = unsafe {
            let m = libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(m, libc::MAP_FAILED);
            libc::mprotect(
                (m as *mut u8).add(page) as *mut c_void,
                page,
                libc::PROT_NONE,
            );
            std::ptr::copy_nonoverlapping(fatbin.as_ptr(), m as *mut u8, fatbin.len());
            m
        };
        // SAFETY: the mapping above (its header readable, its claimed body not).
        assert_eq!(unsafe { at(map) }, None);
        // SAFETY: unmaps what was mapped above.
        unsafe { libc::munmap(map, 2 * page) };
        // SAFETY: a null image is no image.
        assert_eq!(unsafe { at(std::ptr::null()) }, None);
    }
}
