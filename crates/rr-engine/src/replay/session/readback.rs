//! Reading the replayed memory back, laid out as the snapshot files are: device segments, host
//! segments and CUDA arrays at their offsets.

use rr_cuda::PinnedBuffer;

use super::{classify, RunError, Session};

impl Session {
    /// The recorded memory as it is now on the device, laid out as the snapshot files are.
    pub fn read_back(&self) -> std::result::Result<Vec<u8>, RunError> {
        let mut out = vec![0u8; self.input.input_len as usize];
        self.download_into(&mut out)?;
        Ok(out)
    }

    /// The replayed memory in a page-locked buffer kept for the next call: a sweep reads back
    /// after every configuration, and pinned memory copies at full link speed without a fresh
    /// allocation each time. Bytes outside the recorded segments stay zero.
    pub fn read_back_pinned(&mut self) -> std::result::Result<&[u8], RunError> {
        let mut buf = match self.read_buffer.take() {
            Some(b) => b,
            None => {
                let mut b = PinnedBuffer::new(self.input.input_len as usize).map_err(classify)?;
                b.as_mut_slice().fill(0);
                b
            }
        };
        let copied = self.download_into(buf.as_mut_slice());
        let buf = self.read_buffer.insert(buf);
        copied?;
        Ok(buf.as_slice())
    }

    fn download_into(&self, out: &mut [u8]) -> std::result::Result<(), RunError> {
        for &(addr, off, len) in &self.input.copies {
            self.instance
                .memory
                .download(addr, &mut out[off..off + len])
                .map_err(classify)?;
        }
        for &(addr, off, len) in &self.input.host_copies {
            self.instance
                .host
                .read(addr, &mut out[off..off + len])
                .map_err(classify)?;
        }
        for (array, off, len) in &self.instance.objects.arrays {
            array
                .download(&mut out[*off..off + len])
                .map_err(classify)?;
        }
        Ok(())
    }
}
