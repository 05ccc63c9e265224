//! Which part of a sweep one run measures (`--shard K/N`, or a Slurm array task's): the
//! configurations whose index is `K-1` modulo `N`. A leaf, so the report can name its part
//! while the shard merge (`shard`) reads reports.

use serde::{Deserialize, Serialize};

/// Shards one sweep is split into at most.
pub const MAX_SHARDS: u32 = 65_536;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    /// 1-based.
    pub k: u32,
    pub n: u32,
}

impl Shard {
    /// `K/N`, 1 ≤ K ≤ N ≤ [`MAX_SHARDS`].
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s:?}: a shard is K/N, from 1/N to N/N (N at most {MAX_SHARDS})");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n) = (
            k.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if k == 0 || k > n || n > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// The shard of a Slurm array task (`SLURM_ARRAY_TASK_ID` among
    /// `SLURM_ARRAY_TASK_COUNT` tasks from `SLURM_ARRAY_TASK_MIN`), when those are set.
    pub fn from_slurm(var: impl Fn(&str) -> Option<String>) -> Option<Result<Shard, String>> {
        let id = var("SLURM_ARRAY_TASK_ID")?;
        let count = var("SLURM_ARRAY_TASK_COUNT")?;
        let min = var("SLURM_ARRAY_TASK_MIN").unwrap_or_else(|| "0".into());
        let num = |name: &str, v: &str| {
            v.trim().parse::<u64>().map_err(|_| {
                let mut shown = rr_format::text::visible(v).into_owned();
                rr_format::text::cut_at_char(&mut shown, 40);
                format!("{name}={shown:?} is not a number")
            })
        };
        Some((|| {
            let (id, count, min) = (
                num("SLURM_ARRAY_TASK_ID", &id)?,
                num("SLURM_ARRAY_TASK_COUNT", &count)?,
                num("SLURM_ARRAY_TASK_MIN", &min)?,
            );
            let k = id
                .checked_sub(min)
                .and_then(|k| k.checked_add(1))
                .ok_or("SLURM_ARRAY_TASK_ID is below SLURM_ARRAY_TASK_MIN")?;
            Shard::parse(&format!("{k}/{count}")).map_err(|e| {
                format!(
                    "{e} (from SLURM_ARRAY_TASK_ID, _COUNT and _MIN: an array of consecutive ids)"
                )
            })
        })())
    }

    /// Whether configuration `index` is this shard's.
    pub fn owns(&self, index: u64) -> bool {
        index % self.n as u64 == (self.k - 1) as u64
    }

    /// How many of the indices `0..len` are this shard's.
    pub fn count(&self, len: u64) -> u64 {
        let (k, n) = ((self.k - 1) as u64, self.n as u64);
        len / n + u64::from(len % n > k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_parse_partition_and_come_from_slurm() {
        assert_eq!(Shard::parse("2/5"), Ok(Shard { k: 2, n: 5 }));
        for bad in ["0/5", "6/5", "5", "a/b", "1/0", "1/65537"] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let shards: Vec<Shard> = (1..=3).map(|k| Shard { k, n: 3 }).collect();
        for len in [0u64, 1, 2, 7, 100] {
            for i in 0..len {
                assert_eq!(shards.iter().filter(|s| s.owns(i)).count(), 1);
            }
            let total: u64 = shards.iter().map(|s| s.count(len)).sum();
            assert_eq!(total, len);
            for s in &shards {
                assert_eq!(s.count(len), (0..len).filter(|&i| s.owns(i)).count() as u64);
            }
        }
        fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        }
        assert_eq!(Shard::from_slurm(env(&[])), None);
        let ok = [
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
        ];
        assert_eq!(Shard::from_slurm(env(&ok)), Some(Ok(Shard { k: 4, n: 4 })));
        let zero = [
            ("SLURM_ARRAY_TASK_ID", "0"),
            ("SLURM_ARRAY_TASK_COUNT", "2"),
        ];
        assert_eq!(
            Shard::from_slurm(env(&zero)),
            Some(Ok(Shard { k: 1, n: 2 }))
        );
        let gap = [
            ("SLURM_ARRAY_TASK_ID", "9"),
            ("SLURM_ARRAY_TASK_COUNT", "4"),
            ("SLURM_ARRAY_TASK_MIN", "0"),
        ];
        assert!(Shard::from_slurm(env(&gap)).unwrap().is_err());
    }
}
