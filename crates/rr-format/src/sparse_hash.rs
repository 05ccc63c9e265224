//! XXH3-128 (seed 0, default secret) of a stream whose zero runs cost no bytes: a blob id of a
//! sparse blob file without reading its holes.
//!
//! Why our own streaming state: a run of zeros is the common case of a blob (all-zero pages are
//! holes of the blob file, FORMAT.md), and a hostile one can be a terabyte of holes, which read
//! as zeros would take a quarter of an hour. XXH3 consumes its input in 64-byte stripes: a stripe
//! of zeros adds a constant to each accumulator lane (`lo32(key) * hi32(key)` of its secret
//! word; the zero data word adds nothing), and a block of 16 stripes is a fixed sum followed by
//! the scramble. So a run of zeros advances the state by arithmetic on eight 64-bit lanes per
//! 1 KiB block, without bytes (the scramble does not compose into anything shorter, so it stays
//! one step per block: about a second per TiB). The state and every step mirror xxHash's
//! streaming implementation (`XXH3_update`, `XXH3_digest`, as in the `xxhash-rust` crate) byte
//! for byte, so an id is the same value whichever way the bytes arrived; the tests hold it to
//! `xxhash-rust` over mixed data and zero runs at every alignment.

const STRIPE: usize = 64;
const LANES: usize = 8;
/// Bytes held back until more input arrives (the last stripe is hashed differently).
const BUFFER: usize = 256;
const BUFFER_STRIPES: usize = BUFFER / STRIPE;
const SECRET_SIZE: usize = 192;
/// Each stripe of a block uses the secret 8 bytes further on.
const SECRET_CONSUME_RATE: usize = 8;
const STRIPES_PER_BLOCK: usize = (SECRET_SIZE - STRIPE) / SECRET_CONSUME_RATE;
const SECRET_LASTACC_START: usize = 7;
const SECRET_MERGEACCS_START: usize = 11;
/// Up to this many bytes XXH3 uses its short-input algorithms (delegated to `xxhash-rust`).
const MID_SIZE_MAX: u64 = 240;

const PRIME32_1: u64 = 0x9E37_79B1;
const PRIME32_2: u64 = 0x85EB_CA77;
const PRIME32_3: u64 = 0xC2B2_AE3D;
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME64_5: u64 = 0x27D4_EB2F_1656_67C5;

const INITIAL_ACC: [u64; LANES] = [
    PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
];

/// XXH3's default secret (`XXH3_kSecret`).
const SECRET: [u8; SECRET_SIZE] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f,
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21,
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c,
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3,
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8,
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d,
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64,
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb,
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e,
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31, 0xce,
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40, 0x7e,
];

const fn le64(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes([
        bytes[at],
        bytes[at + 1],
        bytes[at + 2],
        bytes[at + 3],
        bytes[at + 4],
        bytes[at + 5],
        bytes[at + 6],
        bytes[at + 7],
    ])
}

/// What a stripe of zeros adds to each lane, per stripe of the block (the data word is zero, so
/// the key is the secret word itself).
const ZERO_STRIPE: [[u64; LANES]; STRIPES_PER_BLOCK] = {
    let mut out = [[0u64; LANES]; STRIPES_PER_BLOCK];
    let mut s = 0;
    while s < STRIPES_PER_BLOCK {
        let mut i = 0;
        while i < LANES {
            let key = le64(&SECRET, s * SECRET_CONSUME_RATE + i * 8);
            out[s][i] = (key & 0xFFFF_FFFF) * (key >> 32);
            i += 1;
        }
        s += 1;
    }
    out
};

/// What a whole block of zeros adds to each lane before the scramble.
const ZERO_BLOCK: [u64; LANES] = {
    let mut out = [0u64; LANES];
    let mut s = 0;
    while s < STRIPES_PER_BLOCK {
        let mut i = 0;
        while i < LANES {
            out[i] = out[i].wrapping_add(ZERO_STRIPE[s][i]);
            i += 1;
        }
        s += 1;
    }
    out
};

/// The scramble's secret words (the last stripe of the secret).
const SCRAMBLE_KEY: [u64; LANES] = {
    let mut out = [0u64; LANES];
    let mut i = 0;
    while i < LANES {
        out[i] = le64(&SECRET, SECRET_SIZE - STRIPE + i * 8);
        i += 1;
    }
    out
};

/// Streaming XXH3-128 with [`Xxh3Sparse::zeros`]: `update(&[0; n])` without the bytes.
#[derive(Clone)]
pub struct Xxh3Sparse {
    acc: [u64; LANES],
    buffer: [u8; BUFFER],
    buffered: usize,
    /// Stripes of the current block already accumulated (0..16).
    stripes: usize,
    total: u64,
}

impl Default for Xxh3Sparse {
    fn default() -> Self {
        Xxh3Sparse::new()
    }
}

/// The secret as little-endian words (stripes start at multiples of 8 bytes into it).
const SECRET_WORDS: [u64; SECRET_SIZE / 8] = {
    let mut out = [0u64; SECRET_SIZE / 8];
    let mut i = 0;
    while i < SECRET_SIZE / 8 {
        out[i] = le64(&SECRET, i * 8);
        i += 1;
    }
    out
};

/// `XXH3_accumulate_512` with the secret's 8 words `key`. Written on fixed-size arrays, one
/// operation per loop, so the compiler vectorises it (32×32→64-bit products).
#[inline(always)]
fn accumulate_with(acc: &mut [u64; LANES], stripe: &[u8; STRIPE], key: &[u64; LANES]) {
    let mut data = [0u64; LANES];
    for (d, bytes) in data.iter_mut().zip(stripe.chunks_exact(8)) {
        *d = u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    }
    for i in 0..LANES {
        let k = data[i] ^ key[i];
        acc[i] = acc[i].wrapping_add((k & 0xFFFF_FFFF) * (k >> 32));
    }
    for i in 0..LANES {
        acc[i] = acc[i].wrapping_add(data[i ^ 1]);
    }
}

/// A stripe with the secret at byte `secret_at` (a multiple of 8, or the last stripe's odd
/// offset).
fn accumulate_stripe(acc: &mut [u64; LANES], stripe: &[u8], secret_at: usize) {
    let stripe: &[u8; STRIPE] = stripe.try_into().expect("a stripe");
    let mut key = [0u64; LANES];
    if secret_at.is_multiple_of(8) {
        key.copy_from_slice(&SECRET_WORDS[secret_at / 8..secret_at / 8 + LANES]);
    } else {
        for (i, k) in key.iter_mut().enumerate() {
            *k = le64(&SECRET, secret_at + i * 8);
        }
    }
    accumulate_with(acc, stripe, &key);
}

fn scramble(acc: &mut [u64; LANES]) {
    for (a, key) in acc.iter_mut().zip(SCRAMBLE_KEY) {
        let v = (*a ^ (*a >> 47)) ^ key;
        *a = v.wrapping_mul(PRIME32_1);
    }
}

/// `XXH3_consumeStripes`: `data.len() / 64` stripes (fewer than a block's worth), scrambling
/// when the block fills. Returns the stripes now accumulated in the block.
fn consume_stripes(acc: &mut [u64; LANES], stripes: usize, data: &[u8]) -> usize {
    let n = data.len() / STRIPE;
    let accumulate = |acc: &mut [u64; LANES], data: &[u8], first: usize| {
        for (k, stripe) in data.chunks_exact(STRIPE).enumerate() {
            let at = first + k;
            let key: &[u64; LANES] = SECRET_WORDS[at..at + LANES].try_into().expect("8 words");
            accumulate_with(acc, stripe.try_into().expect("a stripe"), key);
        }
    };
    let to_end = STRIPES_PER_BLOCK - stripes;
    if to_end <= n {
        accumulate(acc, &data[..to_end * STRIPE], stripes);
        scramble(acc);
        accumulate(acc, &data[to_end * STRIPE..n * STRIPE], 0);
        n - to_end
    } else {
        accumulate(acc, &data[..n * STRIPE], stripes);
        stripes + n
    }
}

fn merge_accs(acc: &[u64; LANES], secret_at: usize, start: u64) -> u64 {
    let mut result = start;
    for i in 0..LANES / 2 {
        let lo = acc[2 * i] ^ le64(&SECRET, secret_at + 16 * i);
        let hi = acc[2 * i + 1] ^ le64(&SECRET, secret_at + 16 * i + 8);
        let product = lo as u128 * hi as u128;
        result = result.wrapping_add((product as u64) ^ ((product >> 64) as u64));
    }
    // XXH3's avalanche.
    result ^= result >> 37;
    result = result.wrapping_mul(0x1656_6791_9E37_79F9);
    result ^ (result >> 32)
}

impl Xxh3Sparse {
    pub fn new() -> Xxh3Sparse {
        Xxh3Sparse {
            acc: INITIAL_ACC,
            buffer: [0; BUFFER],
            buffered: 0,
            stripes: 0,
            total: 0,
        }
    }

    /// The bytes hashed so far.
    pub fn len(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Hash the next bytes (`XXH3_update`).
    pub fn update(&mut self, input: &[u8]) {
        self.total = self.total.wrapping_add(input.len() as u64);
        if self.buffered + input.len() <= BUFFER {
            self.buffer[self.buffered..self.buffered + input.len()].copy_from_slice(input);
            self.buffered += input.len();
            return;
        }
        let mut rest = input;
        if self.buffered > 0 {
            let fill = BUFFER - self.buffered;
            self.buffer[self.buffered..].copy_from_slice(&rest[..fill]);
            rest = &rest[fill..];
            self.stripes = consume_stripes(&mut self.acc, self.stripes, &self.buffer);
            self.buffered = 0;
        }
        if rest.len() > BUFFER {
            let whole = (rest.len() - 1) / BUFFER * BUFFER;
            for chunk in rest[..whole].chunks_exact(BUFFER) {
                self.stripes = consume_stripes(&mut self.acc, self.stripes, chunk);
            }
            // The last stripe consumed is kept: a short final input is completed with it.
            self.buffer[BUFFER - STRIPE..].copy_from_slice(&rest[whole - STRIPE..whole]);
            rest = &rest[whole..];
        }
        self.buffer[..rest.len()].copy_from_slice(rest);
        self.buffered = rest.len();
    }

    /// Hash `n` zero bytes: the same state as `update` with `n` zeros, in time proportional to
    /// `n / 1024` lane steps and no memory.
    pub fn zeros(&mut self, n: u64) {
        self.total = self.total.wrapping_add(n);
        if (self.buffered as u64).saturating_add(n) <= BUFFER as u64 {
            let end = self.buffered + n as usize;
            self.buffer[self.buffered..end].fill(0);
            self.buffered = end;
            return;
        }
        let mut rest = n;
        if self.buffered > 0 {
            rest -= (BUFFER - self.buffered) as u64;
            self.buffer[self.buffered..].fill(0);
            self.stripes = consume_stripes(&mut self.acc, self.stripes, &self.buffer);
            self.buffered = 0;
        }
        if rest > BUFFER as u64 {
            let chunks = (rest - 1) / BUFFER as u64;
            self.zero_stripes(chunks * BUFFER_STRIPES as u64);
            rest -= chunks * BUFFER as u64;
            self.buffer[BUFFER - STRIPE..].fill(0);
        }
        self.buffer[..rest as usize].fill(0);
        self.buffered = rest as usize;
    }

    /// Accumulate `n` stripes of zeros, scrambling at each block's end.
    fn zero_stripes(&mut self, mut n: u64) {
        let add = |acc: &mut [u64; LANES], from: usize, to: usize| {
            for stripe in &ZERO_STRIPE[from..to] {
                for (a, k) in acc.iter_mut().zip(stripe) {
                    *a = a.wrapping_add(*k);
                }
            }
        };
        if self.stripes > 0 {
            let take = n.min((STRIPES_PER_BLOCK - self.stripes) as u64) as usize;
            add(&mut self.acc, self.stripes, self.stripes + take);
            self.stripes += take;
            n -= take as u64;
            if self.stripes < STRIPES_PER_BLOCK {
                return;
            }
            scramble(&mut self.acc);
            self.stripes = 0;
        }
        zero_blocks(&mut self.acc, n / STRIPES_PER_BLOCK as u64);
        let tail = (n % STRIPES_PER_BLOCK as u64) as usize;
        add(&mut self.acc, 0, tail);
        self.stripes = tail;
    }

    /// The XXH3-128 of everything hashed (`XXH3_128bits_digest`).
    pub fn digest128(&self) -> u128 {
        if self.total <= MID_SIZE_MAX {
            // Everything is still in the buffer: the short-input algorithms.
            return xxhash_rust::xxh3::xxh3_128(&self.buffer[..self.buffered]);
        }
        let mut acc = self.acc;
        let last_at = SECRET_SIZE - STRIPE - SECRET_LASTACC_START;
        if self.buffered >= STRIPE {
            let stripes = (self.buffered - 1) / STRIPE;
            consume_stripes(&mut acc, self.stripes, &self.buffer[..stripes * STRIPE]);
            accumulate_stripe(
                &mut acc,
                &self.buffer[self.buffered - STRIPE..self.buffered],
                last_at,
            );
        } else {
            // The last stripe reaches back into the bytes consumed before.
            let mut last = [0u8; STRIPE];
            let catchup = STRIPE - self.buffered;
            last[..catchup].copy_from_slice(&self.buffer[BUFFER - catchup..]);
            last[catchup..].copy_from_slice(&self.buffer[..self.buffered]);
            accumulate_stripe(&mut acc, &last, last_at);
        }
        let low = merge_accs(
            &acc,
            SECRET_MERGEACCS_START,
            self.total.wrapping_mul(PRIME64_1),
        );
        let high = merge_accs(
            &acc,
            SECRET_SIZE - STRIPE - SECRET_MERGEACCS_START,
            !self.total.wrapping_mul(PRIME64_2),
        );
        ((high as u128) << 64) | low as u128
    }
}

/// `blocks` whole blocks of zeros: per lane, add the block's sum, then scramble. Lanes are
/// independent, so the loop runs them side by side.
fn zero_blocks(acc: &mut [u64; LANES], blocks: u64) {
    let mut lanes = *acc;
    for _ in 0..blocks {
        for i in 0..LANES {
            let v = lanes[i].wrapping_add(ZERO_BLOCK[i]);
            lanes[i] = ((v ^ (v >> 47)) ^ SCRAMBLE_KEY[i]).wrapping_mul(PRIME32_1);
        }
    }
    *acc = lanes;
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn reference(bytes: &[u8]) -> u128 {
        xxhash_rust::xxh3::xxh3_128(bytes)
    }

    #[test]
    fn every_length_up_to_a_few_blocks_matches_xxhash() {
        let bytes: Vec<u8> = (0..5000u32).map(|i| (i * 131 % 251) as u8).collect();
        for len in 0..bytes.len() {
            let mut h = Xxh3Sparse::new();
            h.update(&bytes[..len]);
            assert_eq!(h.digest128(), reference(&bytes[..len]), "length {len}");
        }
    }

    #[test]
    fn zero_runs_match_zero_bytes_at_every_alignment() {
        let data: Vec<u8> = (0..700u32).map(|i| (i * 7 + 1) as u8).collect();
        for lead in [0usize, 1, 63, 64, 65, 255, 256, 257, 300, 700] {
            for zeros in [0u64, 1, 64, 191, 256, 257, 1023, 1024, 1025, 5000, 70_000] {
                let mut expected = data[..lead].to_vec();
                expected.resize(lead + zeros as usize, 0);
                expected.extend_from_slice(&data[..lead.min(100)]);
                let mut h = Xxh3Sparse::new();
                h.update(&data[..lead]);
                h.zeros(zeros);
                h.update(&data[..lead.min(100)]);
                assert_eq!(
                    h.digest128(),
                    reference(&expected),
                    "{lead} bytes, {zeros} zeros"
                );
            }
        }
    }

    #[test]
    fn a_blob_of_zeros_has_the_id_xxhash_gives_it() {
        // 64 MiB + 1 byte: thousands of whole blocks through the arithmetic path.
        let n = (64 << 20) + 1;
        let mut h = Xxh3Sparse::new();
        h.zeros(n as u64);
        assert_eq!(h.digest128(), reference(&vec![0u8; n]));
        assert_eq!(h.len(), n as u64);
    }

    proptest! {
        /// Any mix of data and zero runs, in pieces of any size, hashes as its bytes do.
        #[test]
        fn pieces_of_data_and_zeros_match_xxhash(
            pieces in proptest::collection::vec(
                (any::<bool>(), 0usize..3000, any::<u8>()), 0..12)
        ) {
            let mut h = Xxh3Sparse::new();
            let mut all = Vec::new();
            for (zero, len, fill) in pieces {
                if zero {
                    h.zeros(len as u64);
                    all.resize(all.len() + len, 0);
                } else {
                    let bytes: Vec<u8> =
                        (0..len).map(|i| fill.wrapping_add(i as u8) | 1).collect();
                    h.update(&bytes);
                    all.extend_from_slice(&bytes);
                }
            }
            prop_assert_eq!(h.digest128(), reference(&all));
        }
    }
}
