//! `-shard`: which share of one schedule this process sends.

/// `-shard`: `i/n`, or `auto` / `auto/n` for a Kubernetes Indexed Job,
/// resolved from the environment by [`ShardSpec::resolve`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ShardSpec {
    /// `i/n`.
    Fixed(u64, u64),
    /// `auto` (the count from `BARRAGE_SHARDS`) or `auto/n`.
    Auto(Option<u64>),
}

/// The environment variable a Kubernetes Indexed Job sets to the pod's index.
pub const SHARD_INDEX_VAR: &str = "JOB_COMPLETION_INDEX";
/// The environment variable `-shard auto` reads the count from (the Job's
/// `completions`; Kubernetes does not expose it, so the manifest sets it).
pub const SHARD_COUNT_VAR: &str = "BARRAGE_SHARDS";

/// A `-shard` value, or the environment `auto` reads, that does not say
/// a shard.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ShardError(pub String);

impl From<String> for ShardError {
    fn from(s: String) -> Self {
        ShardError(s)
    }
}

impl std::str::FromStr for ShardSpec {
    type Err = ShardError;

    fn from_str(s: &str) -> Result<Self, ShardError> {
        let bad = || {
            format!("invalid shard {s:?} (use i/n with 0 <= i < n, e.g. 0/3, or auto, or auto/n)")
        };
        let count = |n: &str| n.parse::<u64>().ok().filter(|&n| n > 0).ok_or_else(bad);
        if s == "auto" {
            return Ok(ShardSpec::Auto(None));
        }
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let n = count(n)?;
        if i == "auto" {
            return Ok(ShardSpec::Auto(Some(n)));
        }
        match i.parse::<u64>() {
            Ok(i) if i < n => Ok(ShardSpec::Fixed(i, n)),
            _ => Err(bad().into()),
        }
    }
}

impl ShardSpec {
    /// The shard as `(index, count)`: `auto` reads the index from
    /// `JOB_COMPLETION_INDEX` and the count from `auto/n` or
    /// `BARRAGE_SHARDS` (both, if given, must agree).
    pub fn resolve(self, env: impl Fn(&str) -> Option<String>) -> Result<(u64, u64), ShardError> {
        let given = match self {
            ShardSpec::Fixed(i, n) => return Ok((i, n)),
            ShardSpec::Auto(given) => given,
        };
        let flag = match given {
            Some(n) => format!("-shard auto/{n}"),
            None => "-shard auto".to_string(),
        };
        let number =
            |var: &str| -> Result<Option<u64>, ShardError> {
                match env(var) {
                    None => Ok(None),
                    Some(v) => v.trim().parse().map(Some).map_err(|_| {
                        ShardError(format!("{flag}: {var}={v:?} is not a whole number"))
                    }),
                }
            };
        let index = number(SHARD_INDEX_VAR)?.ok_or_else(|| {
            format!("{flag}: {SHARD_INDEX_VAR} is not set (a Kubernetes Indexed Job sets it; elsewhere use -shard i/n)")
        })?;
        let count = match (given, number(SHARD_COUNT_VAR)?) {
            (Some(n), Some(m)) if n != m => {
                return Err(format!("{flag}: {SHARD_COUNT_VAR}={m} says another count").into())
            }
            (Some(n), _) | (None, Some(n)) => n,
            (None, None) => {
                return Err(format!("{flag}: {SHARD_COUNT_VAR} is not set (set it to the Job's completions, or use -shard auto/N)").into())
            }
        };
        if count == 0 || index >= count {
            return Err(format!(
                "{flag}: {SHARD_INDEX_VAR}={index} is not below the count {count}"
            )
            .into());
        }
        Ok((index, count))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| {
            vars.iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn parses_fixed_and_auto() {
        assert_eq!("1/3".parse(), Ok(ShardSpec::Fixed(1, 3)));
        assert_eq!("auto".parse(), Ok(ShardSpec::Auto(None)));
        assert_eq!("auto/4".parse(), Ok(ShardSpec::Auto(Some(4))));
        for bad in ["3/3", "1/0", "auto/0", "auto/x", "x/3", "1", ""] {
            assert!(bad.parse::<ShardSpec>().is_err(), "{bad}");
        }
    }

    #[test]
    fn auto_reads_the_index_and_the_count() {
        let both = [(SHARD_INDEX_VAR, "2"), (SHARD_COUNT_VAR, "3")];
        assert_eq!(ShardSpec::Auto(None).resolve(env(&both)), Ok((2, 3)));
        assert_eq!(ShardSpec::Auto(Some(3)).resolve(env(&both)), Ok((2, 3)));
        let index = [(SHARD_INDEX_VAR, "0")];
        assert_eq!(ShardSpec::Auto(Some(5)).resolve(env(&index)), Ok((0, 5)));
        assert_eq!(ShardSpec::Fixed(1, 2).resolve(env(&[])), Ok((1, 2)));
    }

    #[test]
    fn auto_refuses_what_does_not_add_up() {
        type Vars<'a> = &'a [(&'a str, &'a str)];
        let cases: [(ShardSpec, Vars, &str); 5] = [
            (
                ShardSpec::Auto(None),
                &[],
                "JOB_COMPLETION_INDEX is not set",
            ),
            (
                ShardSpec::Auto(None),
                &[(SHARD_INDEX_VAR, "0")],
                "BARRAGE_SHARDS is not set",
            ),
            (
                ShardSpec::Auto(Some(3)),
                &[(SHARD_INDEX_VAR, "0"), (SHARD_COUNT_VAR, "4")],
                "-shard auto/3: BARRAGE_SHARDS=4 says another count",
            ),
            (
                ShardSpec::Auto(Some(3)),
                &[(SHARD_INDEX_VAR, "3")],
                "JOB_COMPLETION_INDEX=3 is not below the count 3",
            ),
            (
                ShardSpec::Auto(Some(3)),
                &[(SHARD_INDEX_VAR, "one")],
                "JOB_COMPLETION_INDEX=\"one\" is not a whole number",
            ),
        ];
        for (spec, vars, want) in cases {
            let got = spec.resolve(env(vars)).unwrap_err();
            assert!(got.0.contains(want), "{got:?} lacks {want:?}");
        }
    }
}
