//! The stable runner's mutator: each input is a seed (or, now and then,
//! random bytes) put through a few stacked mutations of the kinds libFuzzer
//! uses: byte edits (from `mutatis`'s `Vec<u8>` mutator), bit flips, range
//! erase, copy and duplicate, splices with another seed, dictionary tokens
//! and interesting integers; and, for targets whose inputs hold JSON, edits
//! of the JSON tree (the `json` module).
//!
//! With no coverage feedback the corpus does not grow: breadth comes from
//! the seeds and the stacking. Everything is drawn from one seeded RNG, so
//! a run is repeatable from its seed.

mod json;

use fastrand::Rng;

use crate::targets::Target;

/// Makes inputs for one target from its seeds.
pub struct Mutator {
    rng: Rng,
    bytes: mutatis::Session,
    seeds: Vec<Vec<u8>>,
    dictionary: Vec<&'static [u8]>,
    json: bool,
    max_len: usize,
}

/// Values at the edges of integer types, as little- and big-endian bytes.
const INTERESTING: &[u64] = &[
    0,
    1,
    0x7f,
    0x80,
    0xff,
    0x7fff,
    0x8000,
    0xffff,
    0x7fff_ffff,
    0x8000_0000,
    0xffff_ffff,
    u64::MAX,
    i64::MAX as u64,
];

impl Mutator {
    /// A mutator for `target` starting from `seeds`, drawing from `seed`.
    pub fn new(target: &Target, seeds: Vec<Vec<u8>>, seed: u64) -> Self {
        Self {
            rng: Rng::with_seed(seed),
            bytes: mutatis::Session::new().seed(seed),
            seeds,
            dictionary: target.tokens().collect(),
            json: target.json,
            max_len: target.max_len,
        }
    }

    /// The next input.
    pub fn next_input(&mut self) -> Vec<u8> {
        let mut input = if self.seeds.is_empty() || self.rng.u32(..32) == 0 {
            let len = self.rng.usize(..=256);
            std::iter::repeat_with(|| self.rng.u8(..))
                .take(len)
                .collect()
        } else {
            self.seeds[self.rng.usize(..self.seeds.len())].clone()
        };
        // 1 mutation half the time, 2 a quarter, ... up to 8.
        let count = 1 + self.rng.u32(..).trailing_zeros().min(7);
        for _ in 0..count {
            self.mutate(&mut input);
        }
        input.truncate(self.max_len);
        input
    }

    fn mutate(&mut self, input: &mut Vec<u8>) {
        match self.rng.u32(..12) {
            0 | 1 => {
                // Insert, remove, swap or change one byte.
                let _ = self.bytes.mutate(input);
            }
            2 => self.flip_bit(input),
            3 => self.erase_range(input),
            4 => self.copy_range(input),
            5 => self.splice(input),
            6 => self.insert_from_seed(input),
            7 | 8 => self.insert_token(input),
            9 => self.interesting_integer(input),
            _ if self.json => {
                let other = self.pick_seed().cloned();
                json::mutate(&mut self.rng, input, other.as_deref());
            }
            _ => self.insert_token(input),
        }
    }

    fn pick_seed(&mut self) -> Option<&Vec<u8>> {
        if self.seeds.is_empty() {
            None
        } else {
            self.seeds.get(self.rng.usize(..self.seeds.len()))
        }
    }

    /// A range `start..end` of `len` bytes, short ones likelier.
    fn range(&mut self, len: usize) -> (usize, usize) {
        let start = self.rng.usize(..=len);
        let most = (len - start).min(1 << self.rng.u32(..12));
        (start, start + self.rng.usize(..=most))
    }

    fn flip_bit(&mut self, input: &mut [u8]) {
        if !input.is_empty() {
            let at = self.rng.usize(..input.len());
            input[at] ^= 1 << self.rng.u32(..8);
        }
    }

    fn erase_range(&mut self, input: &mut Vec<u8>) {
        let (start, end) = self.range(input.len());
        input.drain(start..end);
    }

    /// Copy a range of the input elsewhere in it (inserted or overwriting).
    fn copy_range(&mut self, input: &mut Vec<u8>) {
        let (start, end) = self.range(input.len());
        let chunk = input[start..end].to_vec();
        let at = self.rng.usize(..=input.len());
        if self.rng.bool() {
            input.splice(at..at, chunk);
        } else {
            let end = (at + chunk.len()).min(input.len());
            input.splice(at..end, chunk);
        }
    }

    /// Keep a prefix of the input and finish it with another seed's suffix.
    fn splice(&mut self, input: &mut Vec<u8>) {
        let Some(other) = self.pick_seed().cloned() else {
            return;
        };
        let cut = self.rng.usize(..=input.len());
        let from = self.rng.usize(..=other.len());
        input.truncate(cut);
        input.extend_from_slice(&other[from..]);
    }

    fn insert_from_seed(&mut self, input: &mut Vec<u8>) {
        let Some(other) = self.pick_seed().cloned() else {
            return;
        };
        let (start, end) = self.range(other.len());
        let at = self.rng.usize(..=input.len());
        input.splice(at..at, other[start..end].iter().copied());
    }

    fn insert_token(&mut self, input: &mut Vec<u8>) {
        if self.dictionary.is_empty() {
            return;
        }
        let token = self.dictionary[self.rng.usize(..self.dictionary.len())];
        let at = self.rng.usize(..=input.len());
        if self.rng.bool() {
            input.splice(at..at, token.iter().copied());
        } else {
            let end = (at + token.len()).min(input.len());
            input.splice(at..end, token.iter().copied());
        }
    }

    /// Overwrite 1, 2, 4 or 8 bytes with an edge value, or with its digits.
    fn interesting_integer(&mut self, input: &mut Vec<u8>) {
        let value = INTERESTING[self.rng.usize(..INTERESTING.len())];
        let value = if self.rng.bool() {
            value
        } else {
            value.wrapping_neg()
        };
        let bytes = match self.rng.u32(..4) {
            0 => value.to_string().into_bytes(),
            1 => value.to_le_bytes()[..1 << self.rng.u32(..4)].to_vec(),
            2 => value.to_be_bytes()[8 - (1 << self.rng.u32(..4))..].to_vec(),
            _ => (value as i64).to_string().into_bytes(),
        };
        let at = self.rng.usize(..=input.len());
        let end = (at + bytes.len()).min(input.len());
        input.splice(at..end, bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::targets;

    #[test]
    fn inputs_vary_stay_bounded_and_repeat_from_a_seed() {
        let target = targets::find("tool_input").expect("a target");
        let seeds = vec![b"echo\n{\"text\": \"hi\"}".to_vec(), b"notes\n{}".to_vec()];
        let run = |seed| {
            let mut mutator = Mutator::new(target, seeds.clone(), seed);
            (0..500).map(|_| mutator.next_input()).collect::<Vec<_>>()
        };
        let inputs = run(7);
        assert_eq!(inputs, run(7));
        assert!(inputs.iter().all(|i| i.len() <= target.max_len));
        let distinct: std::collections::HashSet<_> = inputs.iter().collect();
        assert!(distinct.len() > 400, "{}", distinct.len());
        assert!(inputs.iter().any(|i| i.starts_with(b"echo\n{")));
    }
}
