//! Where a process sits in a distributed job: its rank, the world size and its local rank,
//! from the launcher's environment (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, set by torchrun,
//! DeepSpeed, Accelerate and most launchers) or given explicitly.
//!
//! `gpuwhy record`, the C ABI (and so the Python binding) and Rust callers all read the
//! environment through [`JobPlace::from_env`], so they agree on what a report carries.

use super::RunInfo;

/// A process's place in a distributed job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobPlace {
    /// Rank of this process, below `world_size`.
    pub rank: u32,
    /// Number of ranks in the job.
    pub world_size: u32,
    /// Rank of this process among the ranks on its node, when known; below `world_size`.
    pub local_rank: Option<u32>,
}

impl JobPlace {
    /// The place from this process's `RANK`, `WORLD_SIZE` and `LOCAL_RANK` environment
    /// variables (see [`JobPlace::from_lookup`]).
    pub fn from_env() -> Option<JobPlace> {
        JobPlace::from_lookup(|k| std::env::var(k).ok())
    }

    /// The place from `RANK`, `WORLD_SIZE` and `LOCAL_RANK` as `env` returns them: `None`
    /// unless `RANK` and `WORLD_SIZE` are both set to integers with `RANK < WORLD_SIZE`
    /// (a rank alone cannot be lined up with a job). `LOCAL_RANK` is kept when it is an
    /// integer below `WORLD_SIZE`, and left out otherwise.
    pub fn from_lookup(env: impl Fn(&str) -> Option<String>) -> Option<JobPlace> {
        let get = |k: &str| env(k).and_then(|v| v.trim().parse::<u32>().ok());
        let (rank, world_size) = (get("RANK")?, get("WORLD_SIZE")?);
        (rank < world_size).then(|| JobPlace {
            rank,
            world_size,
            local_rank: get("LOCAL_RANK").filter(|l| *l < world_size),
        })
    }

    /// An explicit place; the message says what is wrong when the numbers do not fit
    /// together (a rank or local rank not below the world size).
    pub fn new(
        rank: u32,
        world_size: u32,
        local_rank: Option<u32>,
    ) -> std::result::Result<JobPlace, String> {
        if rank >= world_size {
            return Err(format!("rank {rank} is not below world_size {world_size}"));
        }
        if let Some(l) = local_rank.filter(|l| *l >= world_size) {
            return Err(format!(
                "local_rank {l} is not below world_size {world_size}"
            ));
        }
        Ok(JobPlace {
            rank,
            world_size,
            local_rank,
        })
    }

    /// Writes the place into a report's run (`rank`, `world_size`, `local_rank`).
    pub fn apply(self, run: &mut RunInfo) {
        run.rank = Some(self.rank);
        run.world_size = Some(self.world_size);
        run.local_rank = self.local_rank;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn torchrun_variables_give_rank_world_and_local_rank() {
        let p = JobPlace::from_lookup(env(&[
            ("RANK", "9"),
            ("WORLD_SIZE", "16"),
            ("LOCAL_RANK", " 1 "),
        ]));
        assert_eq!(
            p,
            Some(JobPlace {
                rank: 9,
                world_size: 16,
                local_rank: Some(1)
            })
        );
        let mut run = RunInfo::default();
        p.expect("a place").apply(&mut run);
        assert_eq!(
            (run.rank, run.world_size, run.local_rank),
            (Some(9), Some(16), Some(1))
        );
    }

    #[test]
    fn a_rank_without_a_world_size_or_out_of_it_is_no_place() {
        assert_eq!(JobPlace::from_lookup(env(&[("RANK", "3")])), None);
        assert_eq!(JobPlace::from_lookup(env(&[("LOCAL_RANK", "0")])), None);
        assert_eq!(
            JobPlace::from_lookup(env(&[("RANK", "8"), ("WORLD_SIZE", "8")])),
            None
        );
        assert_eq!(
            JobPlace::from_lookup(env(&[("RANK", "x"), ("WORLD_SIZE", "8")])),
            None
        );
    }

    #[test]
    fn a_bad_local_rank_is_left_out_not_fatal() {
        let p = JobPlace::from_lookup(env(&[
            ("RANK", "2"),
            ("WORLD_SIZE", "4"),
            ("LOCAL_RANK", "gpu0"),
        ]));
        assert_eq!(p.map(|p| (p.rank, p.local_rank)), Some((2, None)));
        let p = JobPlace::from_lookup(env(&[
            ("RANK", "2"),
            ("WORLD_SIZE", "4"),
            ("LOCAL_RANK", "4"),
        ]));
        assert_eq!(p.map(|p| p.local_rank), Some(None));
    }

    #[test]
    fn explicit_places_are_checked() {
        assert!(JobPlace::new(3, 8, Some(3)).is_ok());
        assert!(JobPlace::new(8, 8, None)
            .unwrap_err()
            .contains("rank 8 is not below world_size 8"));
        assert!(JobPlace::new(1, 8, Some(9))
            .unwrap_err()
            .contains("local_rank 9"));
    }
}
